"""The scripted demo agent refuses a `--workdir` whose calc.py is a project's, not its own."""

import subprocess
import sys
from pathlib import Path

from supervisor.demo.agent import CALC, TESTS, make_workspace
from tests.conftest import cli_env

PROJECT_CALC = "import math\n\n\ndef area(r):\n    return math.pi * r * r\n"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                   cwd=repo, check=True, capture_output=True)


def test_a_project_calc_py_is_refused_in_one_line_and_left_alone(tmp_path: Path) -> None:
    repo = tmp_path / "project"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "calc.py").write_text(PROJECT_CALC)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "a project of its own")
    done = subprocess.run(
        [sys.executable, "-m", "supervisor.demo.agent", "--root", str(tmp_path / "root"),
         "--scenario", "healthy", "--workdir", ".", "--pace", "0"],
        cwd=repo, capture_output=True, text=True, timeout=60, env=cli_env())
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"demo agent: error: {repo} has a calc.py that is not the demo's (the demo edits and "
        "runs its own calc.py and test_calc.py): name an empty folder with --workdir, or "
        "leave it out for a new temporary one"]
    assert (repo / "calc.py").read_text() == PROJECT_CALC  # never edited, never run
    assert not (tmp_path / "root").exists()  # no session was started


def test_the_demo_plays_again_where_it_played_before(tmp_path: Path) -> None:
    """A workspace an earlier run left (its calc.py fixed) is still the demo's."""
    work = make_workspace(tmp_path / "w")
    assert (work / "calc.py").read_text() == CALC and (work / "test_calc.py").read_text() == TESTS
    (work / "calc.py").write_text(CALC.replace("return a - b", "return a + b"))
    assert make_workspace(work) == work
