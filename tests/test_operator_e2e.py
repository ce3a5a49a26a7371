"""End to end in a real terminal (issue 15, items 1, 2 and 10): `supervisor dashboard` in tmux
over two live demo agents that both escalate; one is killed (SIGKILL: no `session_end`).

The killed one leaves "Needs you" for the "not running" group and its row says `dead`; `e`
goes to the live one; an answer to the dead one is refused with the reason and nothing is
written; the live one's answer is applied. A dashboard on a root that does not exist says it
created it and how to start.
"""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.terminal import Terminal, env, terminals  # noqa: F401 - fixtures

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def demo_agent(root: Path, tmp_path: Path, session: str, environment: dict[str, str]
               ) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "supervisor.demo.agent", "--root", str(root), "--session",
         session, "--scenario", "loop", "--workdir", str(tmp_path / session), "--pace", "0.1",
         "--deadline", "600"],
        env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def test_a_killed_agent_leaves_the_queue_and_its_answer_is_refused(
        root: Path, tmp_path: Path, env, terminals) -> None:  # noqa: F811 - fixtures
    agents = {name: demo_agent(root, tmp_path, name, env) for name in ("alive", "doomed")}
    try:
        term = Terminal("two", [sys.executable, "-m", "supervisor", "dashboard", "--root",
                                str(root)], env, tmp_path)
        terminals.append(term)
        term.wait_for(lambda s: "Needs you: 2" in s, "both escalations in the queue", 90)
        doomed = agents["doomed"]
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(10)
        screen = term.wait_for(lambda s: "Needs you: 1" in s and "1 stale" in s,
                               "the killed agent to leave the queue", 30)
        assert f"dead: its process {doomed.pid} is gone" in screen
        term.wait_for(lambda s: any(line.startswith(" doomed ") and " dead " in line
                                    for line in s.splitlines()), "its row to say dead")
        term.keys("e")
        screen = term.wait_for(lambda s: "Escalation esc-" in s, "the live one's prompt")
        assert "session alive" in screen
        term.keys("Escape")
        term.wait_for(lambda s: "Escalation esc-" not in s, "the prompt closed")
        term.keys("Down", "Enter")  # the table's second row (sessions sorted as found)
        term.wait_for(lambda s: any(line.startswith(" doomed  dead") for line in s.splitlines()),
                      "the dead one's session screen")
        term.keys("e")
        term.wait_for(lambda s: "session doomed" in s, "the dead one's prompt")
        screen = term.press_until("a", lambda s: "refused:" in s, "the refusal")
        assert f"the agent is not running (its process {doomed.pid} is gone)" in screen
        assert "waiting for the agent" not in screen
        assert not (root / "sessions" / "doomed" / "control.jsonl").exists()
        term.keys("Escape")
        term.wait_for(lambda s: "session doomed" not in s and "esc Back" in s,
                      "back on the dead one's session screen")
        term.keys("Escape")
        term.wait_for(lambda s: "Needs you: 1" in s, "back on the sessions screen")
        # a person under load: each key once the screen shows what it answers
        term.press_until("e", lambda s: "session alive" in s, "the live one's prompt")
        term.press_until("a", lambda s: "y: yes" in s, "the question")
        term.press_until("y", lambda s: "y: yes" not in s, "the answer sent")
        term.wait_for(lambda s: "applied: approve" in s, "the live one's answer applied", 30)
        term.keys("Escape")
        term.wait_for(lambda s: "session alive" not in s, "the prompt closed")
        assert "EXITED 0" in term.quit()
    finally:
        for agent in agents.values():
            if agent.poll() is None:
                agent.terminate()
                agent.wait(10)


def test_a_dashboard_on_a_missing_root_says_it_created_it(
        tmp_path: Path, env, terminals) -> None:  # noqa: F811 - fixtures
    missing = tmp_path / "typo" / "store"
    term = Terminal("missing", [sys.executable, "-m", "supervisor", "dashboard", "--root",
                                str(missing)], env, tmp_path)
    terminals.append(term)
    # the notice shows from the start, for 15 s; the empty screen's help once the store is read
    term.wait_for(lambda s: "(created empty)" in s and "did not exist: created it" in s,
                  "the header and the notice")
    screen = term.wait_for(lambda s: "No sessions yet" in s, "the empty screen's help")
    for way in ("supervisor demo", "supervisor install claude-code"):
        assert way in screen
    assert missing.is_dir() and os.stat(missing).st_mode & 0o777 == 0o700
    term.keys("q")
    term.wait_for(lambda s: "EXITED 0" in s, "the dashboard to quit")
