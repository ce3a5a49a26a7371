"""End to end in a real terminal: `supervisor dashboard` and `supervisor demo` driven in tmux.

A private tmux server (`-L`) runs the real command; the test sends keys and reads the screen with
capture-pane, like an operator would. The demo agent (`supervisor.demo.agent`, the guard's
scripted agent on the real guard SDK) loops into an escalation, and the test answers it.
"""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.terminal import Terminal, env, terminals  # noqa: F401 - fixtures

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_dashboard_answers_a_live_demo_agent(
        root: Path, tmp_path: Path, env, terminals) -> None:  # noqa: F811 - fixtures
    alerted = tmp_path / "alerted.txt"
    hook = f'echo "$SUPERVISOR_SESSION $SUPERVISOR_LEVEL $SUPERVISOR_REASON" >> {alerted}'
    term = Terminal("dash", [sys.executable, "-m", "supervisor", "dashboard", "--root",
                             str(root), "--on-escalation", hook], env, tmp_path)
    terminals.append(term)
    # the agent starts once the dashboard watches: its escalation arrives live, which is what
    # --on-escalation announces (one already there at start-up is listed, not announced)
    term.wait_for(lambda s: "No sessions yet" in s, "the empty dashboard", 60)
    agent = subprocess.Popen(
        [sys.executable, "-m", "supervisor.demo.agent", "--root", str(root), "--session",
         "looper", "--scenario", "loop", "--workdir", str(tmp_path / "work"), "--pace", "0.2",
         "--deadline", "90"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        term.wait_for(lambda s: "looper" in s, "the session row")
        term.wait_for(lambda s: "Needs you: 1" in s, "the escalation in the queue", 60)
        deadline = time.monotonic() + 20
        while not alerted.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert alerted.read_text().startswith("looper 3 ")  # --on-escalation ran, once
        term.keys("e")
        screen = term.wait_for(lambda s: "Escalation esc-" in s, "the escalation prompt")
        assert "Deadline:" in screen and "left" in screen and "Evidence" in screen
        term.press_until("g", lambda s: "Guidance for" in s, "the guidance box")
        term.type("the test fails on add(); fix add to return a + b")
        term.press_until("C-s", lambda s: "applied: guidance" in s, "the decision applied")
        lines = [json.loads(x) for x in
                 (root / "sessions" / "looper" / "control.jsonl").read_text().splitlines()]
        assert [(d["action"], d["text"]) for d in lines] == [
            ("guidance", "the test fails on add(); fix add to return a + b")]
        term.keys("Escape")
        term.wait_for(lambda s: "Needs you: 0" in s, "the queue emptied")
        term.keys("q")
        term.wait_for(lambda s: "EXITED 0" in s, "the dashboard to quit")
    finally:
        agent.terminate()
        agent.wait(10)


def test_demo_starts_agents_and_cleans_up_on_quit(
        tmp_path: Path, env, terminals) -> None:  # noqa: F811 - fixtures
    term = Terminal("demo", [sys.executable, "-m", "supervisor", "demo", "--pace", "0.3"], env,
                    tmp_path, size=(80, 24))
    terminals.append(term)
    screen = term.wait_for(
        lambda s: "root:" in s and all(n in s for n in ("demo-healthy", "demo-loop",
                                                        "demo-polling", "demo-limit")),
        "four demo sessions and the root line", 40)  # one capture may catch a frame mid-draw
    root_line = next(line for line in screen.splitlines() if "root:" in line)
    demo_root = Path(root_line.split("root:", 1)[1].split()[0]).expanduser()
    assert demo_root.is_absolute()  # said whole, wherever the dashboard was started
    assert demo_root.is_dir()
    term.wait_for(lambda s: "Needs you: 1" in s, "the loop agent's escalation", 60)
    term.keys("q")  # an agent waits: quitting is asked, not done
    term.wait_for(lambda s: "1 escalation waits for you. Quit anyway?" in s, "the question")
    term.press_until("y", lambda s: "EXITED 0" in s, "the demo to quit")
    assert not demo_root.parent.exists()
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(demo_root) not in ps  # every demo agent was stopped


def test_detail_view_shows_the_whole_output_of_a_failing_call(
        root: Path, tmp_path: Path, env, terminals) -> None:  # noqa: F811 - fixtures
    """An operator opens a session, puts the cursor on a failing result and reads all of it."""
    from tui_support import start, write_events

    output = "\n".join(f"E   assert compute({n}) == {n * 2}" for n in range(120))
    output += "\nFAILED tests/test_compute.py::test_all - the last line of the output"
    write_events(root, "failing", [
        start(task="Make the tests pass"),
        {"type": "tool_call", "call_id": "c1", "tool": "bash", "args": {"cmd": "pytest -q"}},
        {"type": "tool_result", "call_id": "c1", "ok": False, "output": output,
         "output_bytes": len(output), "output_hash": "sha256:0", "error": "exit 1"},
        {"type": "message", "role": "assistant", "text": "The tests fail; let me look."},
    ])
    term = Terminal("detail", [sys.executable, "-m", "supervisor", "dashboard", "--root",
                               str(root), "--session", "failing"], env, tmp_path)
    terminals.append(term)
    term.wait_for(lambda s: "Make the tests pass" in s, "the session screen")
    term.keys("Up", "Enter")  # the cursor on the failing result, then the event in full
    screen = term.wait_for(lambda s: "Arguments" in s, "the detail view")
    assert '"cmd": "pytest -q"' in screen and "ERROR exit 1" in screen
    assert "the last line of the output" not in screen  # below the fold, for now
    term.keys("End")
    screen = term.wait_for(lambda s: "the last line of the output" in s, "the end of the output")
    assert "compute(119)" in screen
    term.keys("/")
    term.type("compute(77)")
    term.keys("Enter")
    screen = term.wait_for(lambda s: "match 1/1" in s, "the search in the output")
    assert "assert compute(77) == 154" in screen
    term.keys("Escape", "q")
    term.wait_for(lambda s: "EXITED 0" in s, "the dashboard to quit")
