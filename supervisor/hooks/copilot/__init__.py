"""The GitHub Copilot CLI target: payloads (`payload`: camelCase, no event name, no call id),
answers (`respond`), the session-events reader (`transcript`) and where its hooks live (below).
See docs/copilot.md.

Only what the platform needs is imported here: the hook path starts once per tool call.
"""

import os
from pathlib import Path
from typing import Any

from supervisor.hooks.copilot.payload import map_payload
from supervisor.hooks.copilot.respond import CopilotAnswers
from supervisor.hooks.copilot.transcript import assistant_texts, events_path
from supervisor.hooks.settings_file import Settings
from supervisor.hooks.step import HookStep, replace
from supervisor.hooks.target import Target

EVENTS: tuple[tuple[str, bool], ...] = (
    # (event name, takes a tool-name matcher: Copilot's entries have none)
    ("sessionStart", False),
    ("userPromptSubmitted", False),
    ("preToolUse", False),
    ("postToolUse", False),
    ("postToolUseFailure", False),
    ("agentStop", False),
    ("sessionEnd", False),
)
NOTES = (
    "Copilot CLI loads a repository's hooks (.github/hooks/*.json) in a prompt-mode run (-p) "
    "only in a trusted folder, or with GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true; user hooks "
    "(~/.copilot/settings.json, --user) load everywhere.",
)


def user_settings_path() -> Path:
    """`$COPILOT_HOME/settings.json` if that is set, else `~/.copilot/settings.json`."""
    base = os.environ.get("COPILOT_HOME")
    return (Path(base).expanduser() if base else Path(os.path.expanduser("~")) / ".copilot"
            ) / "settings.json"


def project_settings_path(project: Path) -> Path:
    """A repository's hooks file of ours, `DIR/.github/hooks/supervisor.json`."""
    return Path(project).expanduser().resolve() / ".github" / "hooks" / "supervisor.json"


def read(payload: dict[str, Any]) -> HookStep:
    """`map_payload`, with the session's events file as its transcript (only agentStop names
    it)."""
    step = map_payload(payload)
    if step.transcript is None:
        return replace(step, transcript=events_path(str(payload["session_id"])))
    return step


TARGET = Target(
    name="copilot",
    label="Copilot CLI",
    read=read,
    answers=CopilotAnswers(),
    settings=Settings(
        target="copilot",
        user_path=user_settings_path,
        project_path=project_settings_path,
        events=EVENTS,
        held=frozenset({"preToolUse"}),
        notes=NOTES,
        flat=True,
        command_key="bash",
        timeout_key="timeoutSec",
        project_keys=(("version", 1),),
    ),
    transcript=assistant_texts,
)
