"""`supervisor tail --full / --json / --heartbeats`: whole events, machine-readable lines,
quiet by default."""

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.test_cli_foundation import ESCAPE_BYTES, HOSTILE, start, write_session

OUTPUT = "\n".join(f"line {n} of the output" for n in range(300)) + "\nTHE VERY END"


def _session(root: Path) -> None:
    write_session(
        root, "s", start(),
        {"type": "tool_call", "call_id": "c1", "tool": "bash",
         "args": {"cmd": "pytest", "env": {"CI": "1"}}},
        {"type": "tool_result", "call_id": "c1", "ok": False, "output": OUTPUT,
         "output_bytes": len(OUTPUT) + 100, "output_hash": "sha256:ff", "error": "exit 1"},
        *({"type": "heartbeat", "ts": 100.0 + 5 * n} for n in range(40)),
        {"type": "message", "role": "assistant", "text": f"first line\n{HOSTILE}\nlast line"},
        {"type": "heartbeat"},
    )
    with open(root / "sessions" / "s" / "events.jsonl", "ab") as f:
        f.write(b"not json \x1b]0;t\x07\n")


@pytest.mark.slow
def test_heartbeats_are_folded_unless_asked_for(root: Path) -> None:
    _session(root)
    quiet = run_cli("tail", "s")
    assert quiet.returncode == 0, quiet.stderr
    lines = quiet.stdout.splitlines()
    assert len(lines) == 7  # start, call, result, 40 heartbeats in one, message, 1, bad
    assert "… 40 heartbeats, 3.2 min (to #43" in lines[3]
    assert lines[5].split()[2] == "heartbeat" and "…" not in lines[5]  # a lone one as itself
    loud = run_cli("tail", "s", "--heartbeats")
    assert len(loud.stdout.splitlines()) == 46
    assert run_cli("tail", "s", "-n", "3").stdout.splitlines() == lines[-3:]


@pytest.mark.slow
def test_full_prints_whole_arguments_output_and_text(root: Path) -> None:
    _session(root)
    full = run_cli("tail", "s", "--full")
    assert full.returncode == 0, full.stderr
    out = full.stdout
    assert '    {\n      "cmd": "pytest",\n      "env": {\n        "CI": "1"' in out
    assert "    line 0 of the output\n" in out and "    THE VERY END\n" in out
    assert "the log keeps the first" in out  # the guard cut the output: said
    assert "    first line\n" in out and "    last line\n" in out
    assert "[bold red]markup[/]" in out and not ESCAPE_BYTES.search(out)
    short = run_cli("tail", "s").stdout
    assert "THE VERY END" not in short


@pytest.mark.slow
def test_json_prints_every_event_and_bad_line_as_objects(root: Path) -> None:
    _session(root)
    result = run_cli("tail", "s", "--json")
    assert result.returncode == 0, result.stderr
    assert not ESCAPE_BYTES.search(result.stdout)  # ASCII escapes only
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 46  # every event: JSON readers fold heartbeats themselves
    assert rows[2]["output"] == OUTPUT and rows[2]["type"] == "tool_result"
    assert rows[-3]["text"].startswith("first line\n\x1b[31m")  # the data, exactly
    assert rows[-1]["bad_line"]["reason"] and rows[-1]["bad_line"]["offset"] > 0
    assert [r["seq"] for r in rows[:-1]] == list(range(1, 46))
    both = run_cli("tail", "s", "--json", "--full")
    assert both.returncode == 2 and "not allowed with" in both.stderr


@pytest.mark.slow
def test_the_last_lines_are_the_same_read_from_the_end(root: Path) -> None:
    _session(root)
    lines = run_cli("tail", "s").stdout.splitlines()
    for n in range(len(lines) + 2):  # n = 4 starts inside the run of 40 heartbeats
        got = run_cli("tail", "s", "-n", str(n)).stdout.splitlines()
        assert got == (lines[-n:] if n else []), n


@pytest.mark.slow
def test_the_last_lines_start_near_the_end_of_a_long_log(root: Path) -> None:
    from supervisor.store.local import LocalStore

    write_session(root, "long", start(), *({"type": "message", "role": "assistant",
                                            "text": f"step {n}"} for n in range(5000)))
    log = root / "sessions" / "long" / "events.jsonl"
    store = LocalStore(root)
    cursor = store.tail_cursor("long", 20)
    assert cursor is not None
    rest = log.read_bytes()[cursor:]
    assert rest.count(b"\n") == 20 and rest.startswith(b"{")
    assert store.tail_cursor("long", 10_000) is None  # shorter than that: from the start
    shown = run_cli("tail", "long", "-n", "2").stdout.splitlines()
    assert "step 4998" in shown[0] and "step 4999" in shown[1]
