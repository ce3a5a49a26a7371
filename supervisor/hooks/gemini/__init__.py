"""The Gemini CLI target: payloads (`payload`), answers (`respond`), the transcript reader
(`transcript`) and where its hooks live (below). See docs/gemini.md.

Only what the platform needs is imported here: the hook path starts once per tool call.
"""

import os
from pathlib import Path

from supervisor.engine.tools import ToolVocabulary
from supervisor.hooks.gemini.payload import map_payload
from supervisor.hooks.gemini.respond import GeminiAnswers
from supervisor.hooks.gemini.transcript import read_transcript
from supervisor.hooks.settings_file import Settings
from supervisor.hooks.target import Target

EVENTS: tuple[tuple[str, bool], ...] = (
    # (event name, takes a tool-name matcher)
    ("SessionStart", False),
    ("BeforeAgent", False),
    ("BeforeTool", True),
    ("AfterTool", True),
    ("AfterAgent", False),
    ("Notification", False),
    ("SessionEnd", False),
)
NOTES = (
    "Gemini CLI reads a project's settings (.gemini/settings.json) only in a trusted folder: "
    "trust it when Gemini asks, or run headless with --skip-trust / "
    "GEMINI_CLI_TRUST_WORKSPACE=true. It warns once about new project hooks.",
)


def user_settings_path() -> Path:
    """`$GEMINI_CLI_HOME/.gemini/settings.json` if that is set, else `~/.gemini/settings.json`."""
    base = os.environ.get("GEMINI_CLI_HOME")
    return (Path(base).expanduser() if base else Path.home()) / ".gemini" / "settings.json"


def project_settings_path(project: Path) -> Path:
    """A project's settings, `DIR/.gemini/settings.json`."""
    return Path(project).expanduser().resolve() / ".gemini" / "settings.json"


TARGET = Target(
    name="gemini",
    label="Gemini CLI",
    read=map_payload,
    answers=GeminiAnswers(),
    settings=Settings(
        target="gemini",
        user_path=user_settings_path,
        project_path=project_settings_path,
        events=EVENTS,
        held=frozenset({"BeforeTool"}),
        timeout_unit_s=0.001,  # Gemini CLI's hook timeouts are milliseconds
        notes=NOTES,
    ),
    transcript=read_transcript,
    reads_usage=True,
    context_before_call=False,  # Gemini ignores additionalContext at BeforeTool
    tools=ToolVocabulary(shell=("run_shell_command",), edit=("replace",), write=("write_file",),
                         read=("read_file",)),
)
