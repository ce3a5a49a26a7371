"""`mypy` over supervisor/ finds nothing (configuration: pyproject.toml, `[tool.mypy]`).

In the suite as well as in `.ci/run`, so a change that breaks the types fails where it is
made (the whole suite runs before every publish), not only in CI at the end."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.mark.slow
def test_mypy_finds_nothing(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is not installed here: pip install '.[test]'")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy-cache")],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
