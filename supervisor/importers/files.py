"""Which files under a directory are runs of other frameworks (for `import` and `analyze`)."""

import os
from pathlib import Path

from supervisor.importers.copilot_cli import is_session_file
from supervisor.importers.openhands import is_event_dir

RUN_SUFFIXES = (".traj", ".json", ".jsonl")
"""Files that are expected to be runs: an unknown one is an error, not silently skipped."""
PROTOCOL_FILES = ("events.jsonl", "control.jsonl")
"""Our own session files: protocol already, never read by an importer."""
SUMMARY_FILES = ("summary.json",)
"""Our own session summaries (`store.summary_cache`): never runs."""


def run_paths(directory: Path) -> list[Path]:
    """The run files under `directory` (sorted, recursive), with OpenHands event directories
    as one item each, and without our own session files (`events.jsonl`, `control.jsonl`; a
    Copilot CLI session is named `events.jsonl` too, and is told apart by its first line)."""
    if is_event_dir(directory):
        return [directory]
    found: list[Path] = []
    for top, dirs, files in os.walk(directory):
        here = Path(top)
        if is_event_dir(here):
            found.append(here)
            dirs[:] = []
            continue
        dirs.sort()
        found.extend(here / name for name in files if name.endswith(RUN_SUFFIXES)
                     and name not in SUMMARY_FILES
                     and (name not in PROTOCOL_FILES or is_session_file(here / name)))
    return sorted(found)
