"""Attach and come back, in real terminals: `supervisor attach` and the dashboard's `a` key put
the operator's terminal on a run agent's pane (a nested client of the supervisor's own tmux
server, from inside another tmux), and detaching brings back the shell or the dashboard."""

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.host_helpers import DEMO, Runs, runs, wait_for
from tests.tui_support import PERSON_READS_S, REPO

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]
__all__ = ["runs"]


class UserTerminal:
    """The operator's own terminal: a pane of a private tmux server (not the supervisor's)."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.server = f"sv-user-{os.getpid()}-{time.monotonic_ns()}"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()
                           if k in ("PYTHONPATH", "SUPERVISOR_HOME", "SUPERVISOR_CONFIG", "TERM",
                                    "PATH"))
        shell = (f"cd {shlex.quote(str(cwd))} && env {exports} "
                 f"{' '.join(map(shlex.quote, command))}; echo EXITED $?; sleep 60")
        self.tmux("new-session", "-d", "-s", "u", "-x", "150", "-y", "45", shell)

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.server, *args], capture_output=True,
                              text=True, check=True).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "u")

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.tmux("send-keys", "-t", "u", key)
            time.sleep(0.3)

    def decide(self, key: str, done: Callable[[str], bool], what: str) -> str:
        """Press a key that decides, as a person who read the screen first; again if the
        dashboard, loaded, could not tell it from a burst (it says so)."""
        for _ in range(3):
            time.sleep(PERSON_READS_S)
            self.keys(key)
            with contextlib.suppress(AssertionError):
                return self.wait_for(done, what, timeout=15)
        return self.wait_for(done, what)

    def wait_for(self, predicate: Callable[[str], bool], what: str, timeout: float = 30) -> str:
        end = time.monotonic() + timeout
        while not predicate(text := self.screen()):
            if time.monotonic() > end:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{text}")
            time.sleep(0.2)
        return text

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.server, "kill-server"], capture_output=True)


@pytest.fixture
def terminals() -> Iterator[list[UserTerminal]]:
    made: list[UserTerminal] = []
    yield made
    for term in made:
        term.close()


def env_for(runs: Runs) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(REPO), SUPERVISOR_HOME=str(runs.root), TERM="xterm-256color",
               SUPERVISOR_CONFIG=str(runs.tmp / "config"))
    return env


def clients(runs: Runs) -> list[str]:
    return runs.server.run("list-clients", "-F", "#{client_session}", check=False
                           ).stdout.split()


def start_looper(runs: Runs) -> None:
    runs.ok("run", "--name", "a1", "--cmd", f"{DEMO} --scenario loop --pace 0.05")
    wait_for(lambda: runs.status("a1") == "waiting", what="the loop's escalation")


def test_supervisor_attach_and_detach(runs: Runs, terminals: list[UserTerminal]) -> None:
    start_looper(runs)
    term = UserTerminal([sys.executable, "-m", "supervisor", "attach", "a1"], env_for(runs),
                        runs.tmp)
    terminals.append(term)
    term.wait_for(lambda s: "[a1] task: fix add() in calc.py" in s and "detach: C-b d" in s,
                  "the agent's pane, attached")
    assert clients(runs) == ["a1"]
    runs.server.run("detach-client", "-s", "a1")
    term.wait_for(lambda s: "EXITED 0" in s, "the shell back after detaching")
    assert clients(runs) == []
    assert runs.status("a1") == "waiting"  # attaching and detaching left the agent alone


def test_the_dashboard_attaches_and_comes_back(runs: Runs,
                                               terminals: list[UserTerminal]) -> None:
    start_looper(runs)
    term = UserTerminal([sys.executable, "-m", "supervisor", "dashboard", "--session", "a1"],
                        env_for(runs), runs.tmp)
    terminals.append(term)
    term.wait_for(lambda s: "esc Back" in s, "the session screen")
    term.keys("T")
    term.wait_for(lambda s: "a attach" in s and "[a1] task: fix add()" in s,
                  "the agent's screen in the panel")
    term.decide("a", lambda s: "detach: C-b d" in s, "the agent's pane, attached")
    assert clients(runs) == ["a1"]
    runs.server.run("detach-client", "-s", "a1")
    term.wait_for(lambda s: "a attach" in s and "esc Back" in s, "the dashboard back")
    assert clients(runs) == []
    term.keys("q")  # the looper's escalation waits: quitting is asked
    term.wait_for(lambda s: "Quit anyway?" in s, "the question")
    term.decide("y", lambda s: "EXITED 0" in s, "the dashboard to quit")
