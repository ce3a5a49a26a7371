"""The SDK's examples run as written (the README's and docs/guard.md's) and leave a complete
session behind: a docs example that runs is a test that fails when the docs lie."""

import re
import subprocess
import sys
from pathlib import Path

from supervisor.store.paths import list_session_ids
from tests.conftest import REPO, cli_env
from tests.guard_helpers import events, of_type


def readme_example() -> str:
    text = (REPO / "README.md").read_text()
    section = text.split("## Guarding your own agent", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def guard_doc_example() -> str:
    text = (REPO / "docs" / "guard.md").read_text()
    section = text.split("## The SDK", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def run_example(tmp_path: Path, source: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    store = tmp_path / "store"
    (tmp_path / "example.py").write_text(source)
    done = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True,
        timeout=60, env=cli_env(SUPERVISOR_HOME=str(store)),
    )
    assert done.returncode == 0, done.stderr
    return done, store


def test_readme_example_runs(tmp_path: Path) -> None:
    done, store = run_example(tmp_path, readme_example())
    assert done.stdout.count("buy milk") == 2
    assert "guard: " in done.stdout
    (session,) = list_session_ids(store)
    evs = events(store, session)
    assert of_type(evs, "session_end")[0]["status"] == "completed"
    assert "block" in [v["action"] for v in of_type(evs, "verdict")]
    assert of_type(evs, "checkpoint") and of_type(evs, "usage")


def test_guard_doc_example_runs(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("buy milk\n")
    done, store = run_example(tmp_path, guard_doc_example())
    assert done.stdout == "buy milk\n\n"
    (session,) = list_session_ids(store)
    evs = events(store, session)
    assert of_type(evs, "session_end")[0]["status"] == "completed"
    assert [t["title"] for t in of_type(evs, "task_start")] == ["fix the test", "second task"]
    assert [c["tool"] for c in of_type(evs, "tool_call")] == ["bash", "read_file"]
    assert [c["label"] for c in of_type(evs, "checkpoint")][-1] == "before the refactor"
