"""The Claude Code target: payloads (`payload`), answers (`respond`), the transcript reader
(`transcript`) and where its hook settings live (below). See docs/claude-code.md.

Only what the platform needs is imported here: the hook path starts once per tool call.
"""

import os
from pathlib import Path

from supervisor.hooks.claude_code.payload import map_payload
from supervisor.hooks.claude_code.respond import ClaudeCodeAnswers
from supervisor.hooks.claude_code.transcript import read_transcript
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
    ("PreSkillShellCommand", True),
    ("MessageDisplay", False),
    ("Stop", False),
    ("SubagentStop", False),
    ("Notification", False),
    ("SessionEnd", False),
)


def user_settings_path() -> Path:
    """`$CLAUDE_CONFIG_DIR/settings.json` if that is set, else `~/.claude/settings.json`."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".claude") / "settings.json"


def project_settings_path(project: Path) -> Path:
    """The shared project settings, `DIR/.claude/settings.json`."""
    return Path(project).expanduser().resolve() / ".claude" / "settings.json"


def project_local_settings_path(project: Path) -> Path:
    """The project settings of this machine only, `DIR/.claude/settings.local.json` (Claude Code
    keeps it out of git): where entries holding the HTTP token go."""
    return Path(project).expanduser().resolve() / ".claude" / "settings.local.json"


TARGET = Target(
    name="claude-code",
    label="Claude Code",
    read=map_payload,
    answers=ClaudeCodeAnswers(),
    settings=Settings(
        target="claude-code",
        user_path=user_settings_path,
        project_path=project_settings_path,
        project_private_path=project_local_settings_path,
        events=EVENTS,
        # PostToolBatch holds a call Claude Code refused itself when it escalates
        held=frozenset({"PreToolUse", "PostToolBatch", "PreSkillShellCommand"}),
        # the per-call events: the ones where HTTP saves the client's start-up
        http_events=frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure",
                               "PostToolBatch"}),
        exec_command=True,  # Claude Code runs `/bin/sh -c <entry>`, and dash forks a lone command
    ),
    transcript=read_transcript,
    reads_usage=True,
    # no `call_waits_s`: the wait for the answer asking for the call before cost every call
    # of the agent_cli benchmark 10 ms (docs/claude-code.md, "Tokens and cost")
    batches=True,  # PostToolBatch
)
