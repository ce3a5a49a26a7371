"""`.ci/run` must fail when a test fails and when no test is collected.

The install steps need the network and minutes, so this runs a copy of the script's test
section (everything after its `# The README's test command` marker) in a throwaway directory
with throwaway tests, with `python` being this interpreter.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

MARKER = "# The README's test command"


def run_test_section(directory: Path) -> subprocess.CompletedProcess[str]:
    script = (REPO / ".ci" / "run").read_text()
    assert MARKER in script, "the test section of .ci/run moved; update this test"
    section = "set -euo pipefail\n" + script[script.index(MARKER):]
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    # a wrapper, not a symbolic link: a link to a virtual environment's python loses the
    # environment (and its plugins, pytest-xdist among them)
    wrapper = bin_dir / "python"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(["bash", "-c", section], cwd=directory, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tests", "status"),
    [
        ({"test_ok.py": "def test_ok():\n    assert True\n"}, 0),
        ({"test_bad.py": "def test_ok():\n    pass\n\ndef test_bad():\n    assert 1 == 2\n"}, 1),
        ({}, 1),  # nothing collected: pytest says 5, CI must fail
        ({"test_none.py": "x = 1\n"}, 1),
        # a module that cannot be imported: pytest-xdist reports it as a failure (1, not 2)
        ({"test_broken.py": "import no_such_module_here\n"}, 1),
    ],
)
def test_ci_test_section(tmp_path: Path, tests: dict[str, str], status: int) -> None:
    work = tmp_path / "project"
    work.mkdir()
    for name, body in tests.items():
        (work / name).write_text(body)
    result = run_test_section(work)
    assert result.returncode == status, result.stdout + result.stderr
    if not tests or "test_none.py" in tests:
        assert "no tests were collected" in result.stderr
