"""End to end in a real terminal: `supervisor dashboard` and `supervisor demo` driven in tmux.

A private tmux server (`-L`) runs the real command; the test sends keys and reads the screen with
capture-pane, like an operator would. The demo agent (`supervisor.demo.agent`, the guard's
scripted agent on the real guard SDK) loops into an escalation, and the test answers it.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tui_support import PERSON_READS_S, REPO

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


class Terminal:
    """One tmux session on a private server."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], cwd: Path,
                 size: tuple[int, int] = (120, 40)) -> None:
        self.server = f"sv-test-{os.getpid()}-{name}"
        self.env = env
        exports = " ".join(f"{k}={_quote(v)}" for k, v in env.items()
                           if k in ("PYTHONPATH", "SUPERVISOR_HOME", "SUPERVISOR_CONFIG", "TERM"))
        shell = f"cd {_quote(str(cwd))} && env {exports} {' '.join(map(_quote, command))}; " \
                "echo EXITED $?; sleep 30"
        self._tmux("new-session", "-d", "-s", "t", "-x", str(size[0]), "-y", str(size[1]), shell)

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.server, *args], capture_output=True,
                              text=True, check=True, env=self.env).stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "t")

    def keys(self, *keys: str) -> None:
        """One key at a time, as a person presses them (slower than a burst: a decision key in
        a burst is ignored, `supervisor.tui.deliberate`)."""
        for key in keys:
            self._tmux("send-keys", "-t", "t", key)
            # a lone escape byte and the next key, read together by a loaded input thread, are
            # one key (alt+key): a terminal's ambiguity, as in every program that reads one
            time.sleep(PERSON_READS_S if key == "Escape" else 0.45)

    def press_until(self, key: str, done: Callable[[str], bool], what: str, tries: int = 5
                    ) -> str:
        """Press `key` alone, as a person who read the screen first, until the screen shows
        `done`. A loaded machine may leave the dashboard's input thread unable to prove the quiet
        before it (it is then told the key came too soon, and presses it again)."""
        for _ in range(tries):
            time.sleep(PERSON_READS_S)
            self.keys(key)
            end = time.monotonic() + 15
            while time.monotonic() < end:
                text = self.screen()
                if done(text):
                    return text
                time.sleep(0.2)
        raise AssertionError(f"{key} did not lead to {what}; screen:\n{self.screen()}")

    def settle(self, timeout: float = 300) -> None:
        """Wait until the program in the pane has handled every key sent so far. Keys are
        handled in order, so once the command palette opened by one more key (`ctrl+p`, a key
        that decides nothing and opens over any screen) shows, the keys before it were handled;
        `escape` then closes it. A loaded machine can leave the dashboard minutes behind a
        burst of keys; what it shows, and what it has written, is only final once it caught up."""
        self._tmux("send-keys", "-t", "t", "C-p")
        self.wait_for(lambda s: "Search for commands" in s, "the keys before ctrl+p handled",
                      timeout=timeout)
        time.sleep(0.45)
        self._tmux("send-keys", "-t", "t", "Escape")
        self.wait_for(lambda s: "Search for commands" not in s, "the palette closed",
                      timeout=timeout)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "t", "-l", text)
        time.sleep(0.5)

    def wait_for(self, predicate: Callable[[str], bool], what: str, timeout: float = 30) -> str:
        end = time.monotonic() + timeout
        while True:
            text = self.screen()
            if predicate(text):
                return text
            if time.monotonic() > end:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{text}")
            time.sleep(0.2)

    def quit(self) -> str:
        """`q`, and `y` when the dashboard asks (escalations wait); the screen once it exited."""
        self.keys("q")
        end = time.monotonic() + 20
        while time.monotonic() < end:
            text = self.screen()
            if "EXITED" in text:
                return text
            if "Quit anyway?" in text:
                return self.press_until("y", lambda s: "EXITED" in s, "the dashboard to quit")
            time.sleep(0.2)
        raise AssertionError(f"q did not quit; screen:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.server, "kill-server"], capture_output=True)


def _quote(value: str) -> str:
    import shlex

    return shlex.quote(value)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environment = dict(os.environ)
    environment["PYTHONPATH"] = str(REPO)
    environment["SUPERVISOR_CONFIG"] = str(tmp_path / "config")
    environment["TERM"] = "xterm-256color"
    for size in ("COLUMNS", "LINES"):  # set by pytest-xdist's workers: the tmux window decides
        environment.pop(size, None)
    return environment


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    made: list[Terminal] = []
    yield made
    for term in made:
        term.close()


def test_dashboard_answers_a_live_demo_agent(root: Path, tmp_path: Path, env, terminals
                                             ) -> None:
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


def test_demo_starts_agents_and_cleans_up_on_quit(tmp_path: Path, env, terminals) -> None:
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


def test_detail_view_shows_the_whole_output_of_a_failing_call(root: Path, tmp_path: Path, env,
                                                              terminals) -> None:
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
