"""`supervisor run --worktree` and `supervisor worktree list|diff|merge|discard`, with real git
and real tmux: a run works on its own branch, the repository's checkout is never written, and
bad input leaves no branch, directory or record behind."""

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.host_helpers import Runs, runs, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]
__all__ = ["runs"]
WRITE = "echo 'print(1)' > new.py && echo more >> README.md"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    (path / "sub").mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "dev@example.invalid")
    git(path, "config", "user.name", "Dev")
    (path / "README.md").write_text("hello\n")
    (path / "sub" / "keep.txt").write_text("keep\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--format=%(refname:short)").split()


def finished(runs: Runs, name: str) -> None:
    wait_for(lambda: runs.server.pane_dead(name), what=f"{name} to finish")


def test_a_run_works_in_its_own_worktree_and_merges_back(runs: Runs, repo: Path) -> None:
    out = runs.ok("run", "--name", "w1", "--worktree", "--cmd",
                  "pwd; echo 'print(1)' > new.py && echo more >> ../README.md", cwd=repo / "sub")
    tree = repo.parent / "proj.worktrees" / "w1"
    assert f"worktree {tree} on branch run/w1" in out
    finished(runs, "w1")
    assert runs.server.has_session("w1")  # the exited agent's pane is kept, to be read
    assert f"{tree}/sub" in runs.ok("screen", "w1")  # started where the caller stood
    assert (tree / "sub" / "new.py").exists() and not (repo / "sub" / "new.py").exists()
    assert git(repo, "status", "--porcelain") == ""  # the checkout was never written
    listed = runs.ok("worktree", "list")
    assert listed.split()[:4] == ["w1", "stopped", "run/w1", str(tree)]
    assert "1 file changed, 1 insertion(+), 1 new file" in listed
    diff = runs.ok("worktree", "diff", "w1")
    assert "+more" in diff and "new file (untracked): sub/new.py" in diff
    assert runs.ok("worktree", "merge", "w1").strip() == (
        "merged run/w1 into main; the worktree and its branch were removed")
    assert (repo / "sub" / "new.py").read_text() == "print(1)\n"
    assert (repo / "README.md").read_text() == "hello\nmore\n"
    assert branches(repo) == ["main"] and not tree.exists()
    assert runs.host_files() == []
    assert not runs.server.has_session("w1")  # nothing left for `stop` to clean


def test_discard_throws_the_work_away_and_a_named_branch_is_used(runs: Runs,
                                                                 repo: Path) -> None:
    runs.ok("run", "--name", "w0", "--worktree", "--cmd", "true", cwd=repo)
    finished(runs, "w0")
    assert runs.ok("worktree", "diff", "w0").strip() == (
        "no changes: the worktree of w0 (run/w0) is as it was made")
    runs.ok("worktree", "discard", "w0")
    assert not runs.server.has_session("w0")
    runs.ok("run", "--name", "w2", "--worktree=try/one", "--cmd", WRITE, cwd=repo)
    finished(runs, "w2")
    assert "try/one" in branches(repo)
    assert runs.ok("worktree", "discard", "w2").startswith("discarded try/one")
    assert branches(repo) == ["main"]
    assert not (repo.parent / "proj.worktrees" / "w2").exists()
    assert git(repo, "status", "--porcelain") == "" and runs.host_files() == []


def test_stop_closes_a_tmux_session_left_without_its_record(runs: Runs, repo: Path) -> None:
    runs.ok("run", "--name", "w9", "--cmd", "true", cwd=repo)
    finished(runs, "w9")
    (runs.root / "host" / "w9.json").unlink()  # as merge|discard left it before they closed it
    assert runs.ok("stop", "w9").strip() == (
        "closed the tmux session left by w9 (its run was already finished)")
    assert not runs.server.has_session("w9")
    assert "not a session started by `supervisor run`" in runs.refused("stop", "w9")


def test_merge_refuses_a_running_agent_and_a_conflict_changes_nothing(runs: Runs,
                                                                      repo: Path) -> None:
    runs.ok("run", "--name", "w3", "--worktree", "--cmd", "echo theirs > README.md; sleep 60",
            cwd=repo)
    wait_for(lambda: "theirs" in (repo.parent / "proj.worktrees" / "w3" / "README.md")
             .read_text(), what="the agent's edit")
    assert runs.refused("worktree", "merge", "w3").endswith(
        "w3 is still running: supervisor stop w3 first")
    out = runs.ok("stop", "w3")
    assert "its worktree" in out and "stays: supervisor worktree merge|discard w3" in out
    (repo / "README.md").write_text("ours\n")
    git(repo, "commit", "-qam", "ours")
    head = git(repo, "rev-parse", "HEAD")
    assert "merging run/w3 into main conflicts; nothing was changed" in runs.refused(
        "worktree", "merge", "w3")
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == ""
    assert "run/w3" in branches(repo) and runs.host_files() == ["w3.json"]
    runs.ok("worktree", "discard", "w3")


def test_worktree_refusals_leave_nothing(runs: Runs, repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    assert runs.refused("run", "--worktree", "--cmd", "true", cwd=outside).endswith(
        f"--worktree needs a git repository, and {outside} is not in one")
    (repo / "README.md").write_text("changed\n")
    assert runs.refused("run", "--worktree", "--cmd", "true", cwd=repo).endswith(
        "has uncommitted changes the worktree would not have: commit or stash them first")
    git(repo, "checkout", "-q", "README.md")
    git(repo, "branch", "taken")
    assert runs.refused("run", "--worktree=taken", "--cmd", "true", cwd=repo).endswith(
        "branch taken already exists in " + str(repo) + ": name another with --worktree BRANCH")
    assert branches(repo) == ["main", "taken"]
    assert not (repo.parent / "proj.worktrees").exists() and runs.host_files() == []
    runs.ok("run", "--name", "plain", "--cmd", "true", cwd=repo)
    assert runs.refused("worktree", "diff", "plain").endswith(
        "plain runs in no worktree of its own")


def test_a_rollback_restores_the_worktree_and_nothing_else(runs: Runs, repo: Path) -> None:
    from supervisor.demo.agent import CALC, TESTS
    from tests.host_helpers import DEMO

    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TESTS)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "calc")
    runs.ok("run", "--name", "rb", "--worktree", "--cmd",
            f"{DEMO} --scenario loop --workdir . --pace 0.05", cwd=repo)
    tree = repo.parent / "proj.worktrees" / "rb"
    wait_for(lambda: runs.status("rb") == "waiting", what="the loop's escalation")
    assert "return a * b" in (tree / "calc.py").read_text()  # the agent's wrong edit
    first = runs.ok("checkpoints", "rb").split("\n")[1].split()[0]
    runs.ok("answer", "rb", "--rollback", first)
    wait_for(lambda: runs.status("rb") == "completed", what="the agent to finish")
    events = runs.events("rb")
    applied = next(i for i, e in enumerate(events) if e["type"] == "decision_applied")
    assert events[applied]["action"] == "rollback"
    edit = next(e for e in events[applied:] if e.get("tool") == "edit_file")
    assert edit["args"]["old_string"] == "return a - b"  # read back: the restored file
    result = next(e for e in events if e["type"] == "tool_result"
                  and e["call_id"] == edit["call_id"])
    assert result["ok"] is True
    assert "return a + b" in (tree / "calc.py").read_text()
    assert (repo / "calc.py").read_text() == CALC  # the repository's checkout: untouched
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "log", "--format=%s") == "calc\ninitial\n"
