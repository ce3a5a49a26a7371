"""The Codex CLI target: payloads (`payload`, with `rollout` for exit codes), answers
(`respond`), the transcript reader (`transcript`) and where its hooks live (below).
See docs/codex.md.

Only what the platform needs is imported here: the hook path starts once per tool call.
"""

import os
from pathlib import Path

from supervisor.hooks.codex.payload import TOOLS, map_payload
from supervisor.hooks.codex.respond import CodexAnswers
from supervisor.hooks.codex.transcript import read_rollout
from supervisor.hooks.settings_file import Settings
from supervisor.hooks.target import Target

EVENTS: tuple[tuple[str, bool], ...] = (
    # (event name, takes a tool-name matcher)
    ("SessionStart", False),
    ("UserPromptSubmit", False),
    ("PreToolUse", True),
    ("PostToolUse", True),
    ("Stop", False),
    ("SubagentStart", False),
    ("SubagentStop", False),
    ("Interrupt", False),
    ("SessionEnd", False),
)
TRUST_NOTES = (
    "Codex runs hooks only once they are trusted: review and trust them in Codex (/hooks), or "
    "pass --dangerously-bypass-hook-trust to codex exec for a headless run.",
    "Project hooks (.codex/hooks.json) also need the project trusted: run codex once in it and "
    "trust it, or `codex exec --trust`.",
)


def user_hooks_path() -> Path:
    """`$CODEX_HOME/hooks.json` if that is set, else `~/.codex/hooks.json`."""
    base = os.environ.get("CODEX_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".codex") / "hooks.json"


def project_hooks_path(project: Path) -> Path:
    """A project's hooks, `DIR/.codex/hooks.json`."""
    return Path(project).expanduser().resolve() / ".codex" / "hooks.json"


TARGET = Target(
    name="codex",
    label="Codex CLI",
    read=map_payload,
    answers=CodexAnswers(),
    settings=Settings(
        target="codex",
        user_path=user_hooks_path,
        project_path=project_hooks_path,
        events=EVENTS,
        held=frozenset({"PreToolUse"}),
        notes=TRUST_NOTES,
        # Codex caps these at 3 s and warns on every run about a longer timeout
        timeout_caps_s=(("SessionEnd", 3.0), ("Interrupt", 3.0)),
    ),
    transcript=read_rollout,
    reads_usage=True,
    tools=TOOLS,
)
