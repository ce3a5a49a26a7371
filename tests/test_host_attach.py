"""Attach and come back, in real terminals: `supervisor attach` and the dashboard's `a` key put
the operator's terminal on a run agent's pane (a nested client of the supervisor's own tmux
server, from inside another tmux), and detaching brings back the shell or the dashboard."""

import os
import shutil
import sys

import pytest

from tests.host_helpers import DEMO, Runs, runs, wait_for
from tests.terminal import EXPORTS, Terminal, terminals  # noqa: F401 - fixtures
from tests.tui_support import REPO

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]
__all__ = ["runs"]


def user_terminal(command: list[str], runs: Runs) -> Terminal:
    """The operator's own terminal: a pane of a private tmux server (not the supervisor's)."""
    return Terminal("user", command, env_for(runs), runs.tmp, size=(150, 45),
                    exports=(*EXPORTS, "PATH"), linger_s=60)


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


def test_supervisor_attach_and_detach(
        runs: Runs, terminals: list[Terminal]) -> None:  # noqa: F811 - fixtures
    start_looper(runs)
    term = user_terminal([sys.executable, "-m", "supervisor", "attach", "a1"], runs)
    terminals.append(term)
    term.wait_for(lambda s: "[a1] task: fix add() in calc.py" in s and "detach: C-b d" in s,
                  "the agent's pane, attached")
    assert clients(runs) == ["a1"]
    runs.server.run("detach-client", "-s", "a1")
    term.wait_for(lambda s: "EXITED 0" in s, "the shell back after detaching")
    assert clients(runs) == []
    assert runs.status("a1") == "waiting"  # attaching and detaching left the agent alone


def test_the_dashboard_attaches_and_comes_back(
        runs: Runs, terminals: list[Terminal]) -> None:  # noqa: F811 - fixtures
    start_looper(runs)
    term = user_terminal([sys.executable, "-m", "supervisor", "dashboard", "--session", "a1"],
                         runs)
    terminals.append(term)
    term.wait_for(lambda s: "esc Back" in s, "the session screen")
    term.keys("T")
    term.wait_for(lambda s: "a attach" in s and "[a1] task: fix add()" in s,
                  "the agent's screen in the panel")
    term.press_until("a", lambda s: "detach: C-b d" in s, "the agent's pane, attached")
    assert clients(runs) == ["a1"]
    runs.server.run("detach-client", "-s", "a1")
    term.wait_for(lambda s: "a attach" in s and "esc Back" in s, "the dashboard back")
    assert clients(runs) == []
    term.keys("q")  # the looper's escalation waits: quitting is asked
    term.wait_for(lambda s: "Quit anyway?" in s, "the question")
    term.press_until("y", lambda s: "EXITED 0" in s, "the dashboard to quit")
