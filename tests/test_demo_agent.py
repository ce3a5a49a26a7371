"""The scripted demo agent refuses a `--workdir` whose calc.py is a project's, not its own."""

import json
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


def test_the_demos_edits_are_read_as_a_real_agents_edits(tmp_path: Path) -> None:
    """The demo's `edit_file` takes Claude Code's argument names, the ones the engine reads:
    its edit names the file it writes, and the same edit again (its text gone) gets the hint a
    real agent's failed edit gets (where the text really is). With `old`/`new` the engine saw
    neither."""
    from supervisor.demo.agent import DemoAgent
    from supervisor.engine.core import Engine
    from supervisor.guard import Session

    work = make_workspace(tmp_path / "w")
    session = Session("demo-healthy", task=None, cwd=work, root=tmp_path / "root",
                      session_id="d", heartbeat_s=0)
    agent = DemoAgent(session, work, 0, lambda text: None)
    session.start_task("fix add()")
    agent.fix_add_cleanly()  # read calc.py, edit it, run the test
    log = tmp_path / "root" / "sessions" / "d" / "events.jsonl"
    edit = next(e for e in map(json.loads, log.read_text().splitlines())
                if e["type"] == "tool_call" and e["tool"] == "edit_file")
    engine = Engine()
    assert engine.planned_paths(engine.facts("edit_file", edit["args"])) == ["calc.py"]
    assert agent.step("edit_file", edit["args"])[0] == "failed"  # "return a - b" is gone
    session.close("completed")
    hints = [e["message"] for e in map(json.loads, log.read_text().splitlines())
             if e["type"] == "hint"]
    assert len(hints) == 1 and hints[0].startswith(
        "calc.py changed since you last read it, by your own edit since then (edit_file)")
    assert "The text you searched for is not in calc.py" in hints[0]
