"""The Qwen Code target: payloads (`payload`, Claude Code's mapping with Qwen's call ids and
outcomes), answers (Claude Code's, with a blocking Stop), the chat-file reader (`transcript`)
and where its hook settings live (below). See docs/qwen-code.md.

Only what the platform needs is imported here: the hook path starts once per tool call.
"""

import os
from pathlib import Path

from supervisor.hooks.claude_code.respond import StopBlockAnswers
from supervisor.hooks.qwen_code.payload import map_payload
from supervisor.hooks.qwen_code.transcript import read_chat
from supervisor.hooks.settings_file import Settings
from supervisor.hooks.target import Target

EVENTS: tuple[tuple[str, bool], ...] = (
    # (event name, takes a tool-name matcher)
    ("SessionStart", False),
    ("UserPromptSubmit", False),
    ("PreToolUse", True),
    ("PostToolUse", True),
    ("PostToolUseFailure", True),
    ("PostToolBatch", False),
    ("Stop", False),
    ("SubagentStop", False),
    ("Notification", False),
    ("SessionEnd", False),
)
PRE_TOOL_USE_WAIT_S = 60.0
"""How long Qwen Code 0.24.4 waits for a PreToolUse hook's answer, whatever the entry's
`timeout`: its message bus gives up on the request after 60 s (`MessageBus.request`'s default,
which `firePreToolUseHook` does not override) and runs the call as if the hook had allowed it.
Written as the entry's timeout, so the hook's budget (`Budget`) ends the hold with the policy's
fallback before that, and the operator sees that deadline (docs/qwen-code.md)."""
POST_TOOL_BATCH_WAIT_S = 15.0
"""The same for PostToolBatch: `firePostToolBatchHook` waits 15 s
(`POST_TOOL_BATCH_HOOK_TIMEOUT_MS`), then goes on as if nothing was said."""
STOP_WAITS_S = 3.0
"""How long the Stop hook waits for the last answer to reach the chat file: Qwen Code queues
its chat-file writes (several awaited file operations each), which ran up to 0.7 s behind its
hooks with 2 cores loaded to 14-20 (docs/qwen-code.md, "Tokens and cost")."""
CALL_WAITS_S = 0.3
"""How long a call's PreToolUse waits for the answer asking for the call before it to reach
the chat file (`Target.call_waits_s`; docs/qwen-code.md, "Tokens and cost")."""
NOTES = (
    "Qwen Code reads a project's settings (.qwen/settings.json) only in a trusted folder; "
    "user settings (~/.qwen/settings.json, --user) load everywhere.",
)


def user_settings_path() -> Path:
    """`~/.qwen/settings.json`."""
    return Path(os.path.expanduser("~")) / ".qwen" / "settings.json"


def project_settings_path(project: Path) -> Path:
    """A project's settings, `DIR/.qwen/settings.json`."""
    return Path(project).expanduser().resolve() / ".qwen" / "settings.json"


TARGET = Target(
    name="qwen-code",
    label="Qwen Code",
    read=map_payload,
    answers=StopBlockAnswers(),
    settings=Settings(
        target="qwen-code",
        user_path=user_settings_path,
        project_path=project_settings_path,
        events=EVENTS,
        held=frozenset({"PreToolUse", "PostToolBatch"}),
        notes=NOTES,
        timeout_caps_s=(("PreToolUse", PRE_TOOL_USE_WAIT_S),
                        ("PostToolBatch", POST_TOOL_BATCH_WAIT_S)),
        # the per-call events: the ones where HTTP saves the client's start-up
        http_events=frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure",
                               "PostToolBatch"}),
    ),
    transcript=read_chat,
    reads_usage=True,
    call_waits_s=CALL_WAITS_S,
    stop_waits_s=STOP_WAITS_S,
    batches=True,  # PostToolBatch
)
