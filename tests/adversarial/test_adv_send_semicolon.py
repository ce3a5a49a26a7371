"""`supervisor send` types exactly the operator's text (issue 41, low).

tmux's parser takes an argument ending in `;` for a command separator: `make test;` arrived as
`make test`, and `echo \\;` lost its backslash. Now the line arrives as written. Real tmux."""

import shutil
import time
from pathlib import Path

import pytest

from supervisor.host import tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
LINES = ["make test;", "find . -exec ls {} \\;", "a;;", "plain", "ends with \\"]


def test_lines_ending_in_a_semicolon_arrive_whole(tmp_path: Path) -> None:
    out = tmp_path / "typed.txt"
    server = tmux.Server(f"sv-test-send-{id(tmp_path)}")
    try:
        server.new_session("t", tmp_path, ["sh", "-c", f"cat > {out}"])
        for line in LINES:
            server.send_line("t", line)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if out.exists() and out.read_text().count("\n") >= len(LINES):
                break
            time.sleep(0.05)
    finally:
        server.kill_server()
    assert out.read_text().splitlines() == LINES
