"""The README's SDK example runs as written and leaves a complete session behind."""

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


def test_readme_example_runs(tmp_path: Path) -> None:
    store = tmp_path / "store"
    (tmp_path / "example.py").write_text(readme_example())
    done = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True,
        timeout=60, env=cli_env(SUPERVISOR_HOME=str(store)),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("buy milk") == 2
    assert "guard: " in done.stdout
    (session,) = list_session_ids(store)
    evs = events(store, session)
    assert of_type(evs, "session_end")[0]["status"] == "completed"
    assert "block" in [v["action"] for v in of_type(evs, "verdict")]
    assert of_type(evs, "checkpoint") and of_type(evs, "usage")
