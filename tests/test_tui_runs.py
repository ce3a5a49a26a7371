"""Start, stop, merge and discard an agent from the dashboard, in a real terminal: the dashboard
runs in tmux, the operator's keys go in with send-keys, and the run is a real `supervisor run`
(its own tmux server, a real git worktree)."""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from supervisor.host.tmux import Server, socket_name
from tests.terminal import Terminal, env, terminals

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]
__all__ = ["env", "terminals"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "dev@example.invalid")
    git(path, "config", "user.name", "Dev")
    (path / "README.md").write_text("hello\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def start_run(term: Terminal, name: str, cmd: str) -> None:
    """`n`, then the form: no agent, a command, a name, the folder as given, a worktree."""
    term.press_until("n", lambda s: "Start an agent" in s, "the new-run form")
    time.sleep(1.0)  # the operator reads the form
    term.keys("Tab")
    term.type(cmd)
    term.keys("Tab")
    term.type(name)
    term.keys("Tab", "Tab", "Space")
    term.press_until("C-s", lambda s: f"started {name}" in s, f"{name} started")


def test_an_agent_is_started_watched_stopped_and_merged_from_the_dashboard(
        root: Path, repo: Path, tmp_path: Path, env, terminals) -> None:
    server = Server(socket_name(root))
    term = Terminal("runs", [sys.executable, "-m", "supervisor", "dashboard", "--root",
                             str(root)], env, repo)
    terminals.append(term)
    try:
        term.wait_for(lambda s: "No sessions yet" in s, "the empty dashboard")
        start_run(term, "r1", "echo made > made.txt; sleep 300")
        tree = repo.parent / "proj.worktrees" / "r1"
        term.wait_for(lambda s: "r1" in s and "running" in s, "the run's row")
        assert server.has_session("r1") and (tree / "made.txt").read_text() == "made\n"
        assert not (repo / "made.txt").exists()

        # its terminal, and the worktree's diff beside it
        term.keys("Enter")
        term.wait_for(lambda s: "Overview" in s and "events" in s, "the session screen")
        term.press_until("T", lambda s: "a attach" in s, "the terminal panel")
        screen = term.press_until("v", lambda s: "made.txt" in s, "the worktree diff")
        assert "new file (untracked)" in screen
        term.press_until("Escape", lambda s: "Needs you" in s, "the sessions screen")

        # merge is refused while the agent runs; stop, then merge, each confirmed
        term.press_until("M", lambda s: "still running: stop it first" in s, "the refusal")
        term.press_until("K", lambda s: "Stop r1?" in s, "the stop question")
        term.press_until("y", lambda s: "stopped r1" in s, "the agent stopped")
        screen = term.press_until("M", lambda s: "Merge run/r1" in s, "the merge question")
        assert "1 new file" in screen
        term.press_until("y", lambda s: "merged run/r1 into main" in s, "the merge")
        assert (repo / "made.txt").read_text() == "made\n" and not tree.exists()
        assert git(repo, "branch", "--format=%(refname:short)").split() == ["main"]
        assert not server.has_session("r1") and not (root / "host" / "r1.json").exists()

        # a second run, thrown away: nothing of it reaches the repository
        start_run(term, "r2", "echo junk > junk.txt")
        term.wait_for(lambda s: "r2" in s, "r2's row")
        term.keys("/")
        term.type("r2")  # the filter: r2's row alone, under the cursor
        term.keys("Enter")
        term.wait_for(lambda s: "r1" not in s.split("Needs you")[-1], "r1 filtered out")
        term.press_until("D", lambda s: "Discard run/r2" in s, "the discard question")
        term.press_until("y", lambda s: "discarded run/r2" in s, "the discard")
        assert not (repo / "junk.txt").exists()
        assert not (repo.parent / "proj.worktrees" / "r2").exists()
        assert git(repo, "status", "--porcelain") == ""
    finally:
        server.kill_server()
