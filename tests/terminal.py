"""A real terminal for end-to-end tests: one tmux session on a private server (`-L`), running a
real command; a test sends keys and reads the screen with capture-pane, as an operator would."""

import os
import shlex
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.tui_support import PERSON_READS_S, REPO

EXPORTS = ("PYTHONPATH", "SUPERVISOR_HOME", "SUPERVISOR_CONFIG", "TERM")
"""The variables the command in the pane gets from the test's environment (tmux's own server
keeps the environment it was started with, not the test's)."""


class Terminal:
    """One tmux session on a private server. The pane prints `EXITED <status>` when the command
    ends and stays for `linger_s`, so a test can read how it ended."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], cwd: Path,
                 size: tuple[int, int] = (120, 40), exports: tuple[str, ...] = EXPORTS,
                 linger_s: int = 30) -> None:
        self.server = f"sv-{name}-{os.getpid()}-{time.monotonic_ns()}"
        self.env = env
        exported = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items() if k in exports)
        shell = (f"cd {shlex.quote(str(cwd))} && env {exported} "
                 f"{' '.join(map(shlex.quote, command))}; echo EXITED $?; sleep {linger_s}")
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
