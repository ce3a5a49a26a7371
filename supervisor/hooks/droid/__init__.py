"""The Factory Droid target: payloads (`payload`, Claude Code's mapping with Droid's tool names
and no call ids), answers (Claude Code's, with a blocking Stop), the transcript reader
(`transcript`: the assistant's text and the failures no hook reports) and where its hook
settings live (below). See docs/droid.md.

Only what the platform needs is imported here: the hook path starts once per tool call.
"""

import os
from pathlib import Path

from supervisor.hooks.claude_code.respond import StopBlockAnswers
from supervisor.hooks.droid.payload import map_payload
from supervisor.hooks.droid.transcript import assistant_texts
from supervisor.hooks.settings_file import Settings
from supervisor.hooks.target import Target

EVENTS: tuple[tuple[str, bool], ...] = (
    # (event name, takes a tool-name matcher)
    ("SessionStart", False),
    ("UserPromptSubmit", False),
    ("PreToolUse", True),
    ("PostToolUse", True),
    ("Stop", False),
    ("SubagentStop", False),
    ("Notification", False),
    ("SessionEnd", False),
)


def user_settings_path() -> Path:
    """`~/.factory/settings.json`."""
    return Path(os.path.expanduser("~")) / ".factory" / "settings.json"


def project_settings_path(project: Path) -> Path:
    """A project's settings, `DIR/.factory/settings.json`."""
    return Path(project).expanduser().resolve() / ".factory" / "settings.json"


TARGET = Target(
    name="droid",
    label="Factory Droid",
    read=map_payload,
    answers=StopBlockAnswers(),
    settings=Settings(
        target="droid",
        user_path=user_settings_path,
        project_path=project_settings_path,
        events=EVENTS,
        exec_command=True,  # Droid runs `sh -c <entry>`, and dash forks a lone command
    ),
    transcript=assistant_texts,
)
