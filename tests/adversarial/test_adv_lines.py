"""Bounded lines, both ways: whatever a writer is given, its line is one every reader accepts;
whatever bytes a reader is given, it gets an event or a bad line, never an exception; and one
hostile line turns nothing off (the guard, the writer, the dashboard, `answer`, `import`)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supervisor.guard.core import Guard
from supervisor.protocol.codec import BadLine, parse_line
from supervisor.protocol.names import MAX_JSON_DEPTH, MAX_LINE_BYTES
from supervisor.store.provenance import sealed
from supervisor.store.tailer import Tailer
from supervisor.store.writer import LineWriter
from tests.conftest import cli_env, run_cli

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

odd_text = st.text(st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF,
                                 blacklist_categories=()), max_size=40)
"""Any code point, lone surrogates included (what Python makes of undecodable file names)."""
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                               allow_infinity=False) | odd_text
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(odd_text, inner, max_size=4), max_leaves=30)


def _nested(depth: int) -> object:
    value: object = "bottom"
    for n in range(depth):
        value = {"k": value} if n % 2 else [value]
    return value


BIG_VALUES = {
    "one huge string": lambda: "x" * (3 * MAX_LINE_BYTES),
    "many small keys": lambda: {f"k{n}": "v" for n in range(150_000)},
    "escapes inflate the JSON": lambda: ["é\\\"\n" * 10] * 60_000,
    "far too deep": lambda: _nested(10_000),
    "just too deep inside the event": lambda: _nested(MAX_JSON_DEPTH),
    "one enormous key": lambda: {"k" * (2 * MAX_LINE_BYTES): 1},
}


def _tool_call(tool: object, call_id: object, args: object) -> dict:
    return {"type": "tool_call", "call_id": call_id, "tool": tool,
            "args": args if isinstance(args, dict) else {"value": args}}


def _check_written(path: Path, count: int) -> None:
    data = path.read_bytes()
    lines = data.splitlines()
    assert len(lines) == count
    for raw in lines:
        assert len(raw) + 1 <= MAX_LINE_BYTES
        event = parse_line(raw)
        assert not isinstance(event, BadLine), event.reason


@FAST
@given(tool=odd_text, call_id=odd_text, args=values)
def test_every_written_line_parses(tmp_path_factory: pytest.TempPathFactory, tool: str,
                                   call_id: str, args: object) -> None:
    path = tmp_path_factory.mktemp("w") / "events.jsonl"
    with LineWriter(path) as writer:
        writer.append(_tool_call(tool, call_id, args))
        writer.append({"type": "message", "role": "user", "text": tool + call_id})
    _check_written(path, 2)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BIG_VALUES))
def test_oversized_and_deep_events_are_cut_to_lines_readers_take(tmp_path: Path, name: str
                                                                 ) -> None:
    big, small = BIG_VALUES[name](), "\udcff\u202e"
    path = tmp_path / "events.jsonl"
    with LineWriter(path) as writer:
        written = writer.append(_tool_call("x" * MAX_LINE_BYTES + small, "c" * MAX_LINE_BYTES,
                                           big))
    _check_written(path, 1)
    assert written["truncated"] is True  # the event says it was cut
    assert json.loads(path.read_bytes()) == written  # and the caller gets what was written


@FAST
@given(st.binary(max_size=2000) | st.sampled_from([
    b"[" * 100_000, b'{"a":' * 5000, b'{"v":1,"seq":1,"ts":1,"type":"x","a":' + b"[" * 900
    + b"]" * 900 + b"}", b'{"v":1,"seq":1,"ts":1,"type":"heartbeat","x":"\\udcff"}']))
def test_any_bytes_give_an_event_or_a_bad_line(raw: bytes) -> None:
    for kind in ("events", "control"):
        result = parse_line(raw, kind)
        assert isinstance(result, BadLine) or result.seq >= 1


@FAST
@given(values)
def test_any_json_gives_an_event_or_a_bad_line(value: object) -> None:
    raw = json.dumps({"v": 1, "seq": 1, "ts": 1.0, "type": "tool_call", "call_id": "c",
                      "tool": "t", "args": {"a": value}}).encode()
    for kind in ("events", "control"):
        result = parse_line(raw, kind)
        assert isinstance(result, BadLine) or result.seq >= 1


# -- item 8: numbers every reader can hold --------------------------------------------------

LINES_THAT_KILLED_THE_DASHBOARD = {
    "seq beyond int64": {"v": 1, "seq": 2**63, "ts": 1.0, "type": "heartbeat"},
    "huge gauge": {"v": 1, "seq": 2, "ts": 1.0, "type": "verdict", "call_id": "c",
                   "action": "allow", "level": 0, "gauges": {"tool_calls": 10**400}},
    "ts in nanoseconds": {"v": 1, "seq": 3, "ts": 1.7e18, "type": "heartbeat"},
    "ts 1e300": {"v": 1, "seq": 4, "ts": 1e300, "type": "tool_call", "call_id": "c",
                 "tool": "t", "args": {}},
    "huge usage": {"v": 1, "seq": 5, "ts": 1.0, "type": "usage", "input_tokens": 10**400,
                   "output_tokens": 1},
    "huge limit": {"v": 1, "seq": 6, "ts": 1.0, "type": "limit", "name": "x", "value": 1e300,
                   "limit": 1e-300, "action": "stop"},
    "huge pid": {"v": 1, "seq": 7, "ts": 1.0, "type": "session_start", "agent": "a",
                 "pid": 2**70},
}


@pytest.mark.parametrize("name", sorted(LINES_THAT_KILLED_THE_DASHBOARD))
def test_out_of_range_numbers_are_bad_lines_with_the_reason(name: str) -> None:
    raw = json.dumps(LINES_THAT_KILLED_THE_DASHBOARD[name]).encode()
    result = parse_line(raw)
    assert isinstance(result, BadLine), name
    assert result.reason.startswith("field '"), result.reason


@pytest.mark.slow
def test_validate_reports_them(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(json.dumps(e).encode() + b"\n"
                              for e in LINES_THAT_KILLED_THE_DASHBOARD.values()))
    done = run_cli("validate", str(path))
    assert done.returncode == 1, done.stderr
    assert "0 events, 7 bad lines" in done.stdout
    assert "Traceback" not in done.stderr


# -- item 9: one deeply nested line turns nothing off -----------------------------------------

DEEP = b"[" * 100_000 + b"]" * 100_000
DEEP_DECISION = (b'{"v":1,"seq":1,"ts":1.0,"type":"decision","decision_id":"deep",'
                 b'"action":"approve","operator":"x","text":' + b"[" * 5000 + b"]" * 5000 + b"}")


def _decision(root: Path, seq: int, action: str, decision_id: str, **extra: object) -> bytes:
    line = {"v": 1, "seq": seq, "ts": 2.0, "type": "decision", **sealed(root, "s1", {
        "decision_id": decision_id, "escalation_id": None, "action": action, "operator": "ana",
        **extra})}
    return json.dumps(line).encode() + b"\n"


@pytest.mark.slow
def test_a_deep_control_line_is_ignored_and_later_decisions_still_apply(root: Path) -> None:
    with Guard.open(root, "s1") as guard:
        guard.start("agent")
        assert guard.pre_call("bash", {"cmd": "ls"}).action == "allow"
    control = root / "sessions" / "s1" / "control.jsonl"
    control.write_bytes(DEEP + b"\n" + DEEP_DECISION + b"\n"
                        + _decision(root, 3, "abort", "d-abort"))
    with Guard.open(root, "s1") as guard:
        verdict = guard.pre_call("bash", {"cmd": "ls"})
    assert verdict.action == "stop"  # the abort behind the deep lines was applied
    events = [json.loads(x) for x in (root / "sessions" / "s1" / "events.jsonl").read_bytes()
              .splitlines()]
    ignored = [e for e in events if e["type"] == "decision_ignored"]
    assert len(ignored) == 2 and all("malformed" in e["reason"] for e in ignored)
    assert [e["decision_id"] for e in events if e["type"] == "decision_applied"] == ["d-abort"]
    for command in (["answer", "s1", "--approve", "--wait", "0"], ["reset", "s1"],
                    ["tail", "s1"], ["sessions"]):
        done = run_cli(*command, "--root", str(root))
        assert "Traceback" not in done.stderr, (command, done.stderr)


@pytest.mark.slow
def test_a_deep_last_event_line_does_not_stop_the_writer(root: Path) -> None:
    with Guard.open(root, "s1") as guard:
        guard.start("agent")
    events = root / "sessions" / "s1" / "events.jsonl"
    with events.open("ab") as f:
        f.write(b'{"v":1,"seq":99,"ts":1.0,"type":"x","a":' + DEEP + b"}\n")
    with Guard.open(root, "s1") as guard:  # reads the last seq back from the file's tail
        assert guard.pre_call("bash", {"cmd": "ls"}).action == "allow"
    lines = events.read_bytes().splitlines()
    assert [parse_line(x).type for x in lines[-2:]] == ["tool_call", "verdict"]


@pytest.mark.slow
def test_a_seq_out_of_bounds_at_the_end_does_not_poison_later_lines(root: Path) -> None:
    with Guard.open(root, "s1") as guard:
        guard.start("agent")
    events = root / "sessions" / "s1" / "events.jsonl"
    with events.open("ab") as f:
        f.write(b'{"v":1,"seq":18446744073709551616,"ts":1.0,"type":"heartbeat"}\n')
    with Guard.open(root, "s1") as guard:
        guard.heartbeat()
    assert not isinstance(parse_line(events.read_bytes().splitlines()[-1]), BadLine)


@pytest.mark.slow
def test_a_deep_foreign_file_is_reported_and_the_others_imported(root: Path, tmp_path: Path
                                                                 ) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    good = Path(__file__).resolve().parents[1] / "data" / "importers"
    sample = next(p for p in sorted(good.rglob("*.traj")))
    (runs / "good.traj").write_bytes(sample.read_bytes())
    (runs / "deep.traj").write_bytes(b'{"trajectory":' + b"[" * 900 + b"]" * 900 + b"}")
    (runs / "deeper.json").write_bytes(b'{"history":' + DEEP + b"}")
    done = run_cli("import", str(runs), "-o", str(root))
    assert "Traceback" not in done.stderr, done.stderr
    assert "deep.traj" in done.stderr and "deeper.json" in done.stderr
    assert "nested deeper than" in done.stderr
    assert (root / "sessions").is_dir() and any((root / "sessions").iterdir())


# -- item 13: one validator for decision lines ------------------------------------------------

@pytest.mark.parametrize("bad", [
    b'{"v":1,"seq":1,"ts":NaN,"type":"decision","decision_id":"d","action":"abort",'
    b'"operator":"x"}',
    b'{"v":1,"seq":"1","ts":1.0,"type":"decision","decision_id":"d","action":"abort",'
    b'"operator":"x"}',
    b'{"v":true,"seq":1,"ts":1.0,"type":"decision","decision_id":"d","action":"abort",'
    b'"operator":"x"}',
    b'{"v":1,"seq":1,"ts":"now","type":"decision","decision_id":"d","action":"abort",'
    b'"operator":"x"}',
    b'{"v":1,"seq":1,"ts":1e300,"type":"decision","decision_id":"d","action":"abort",'
    b'"operator":"x"}',
    b'{"v":1,"seq":1,"ts":1.0,"type":"decision","decision_id":"d","action":"abort",'
    b'"operator":""}',
])
def test_the_guard_applies_no_decision_a_reader_rejects(root: Path, bad: bytes) -> None:
    with Guard.open(root, "s1") as guard:
        guard.start("agent")
    (root / "sessions" / "s1" / "control.jsonl").write_bytes(bad + b"\n")
    with Guard.open(root, "s1") as guard:
        verdict = guard.pre_call("bash", {"cmd": "ls"})
    assert verdict.action == "allow"  # not aborted
    reader = Tailer(root / "sessions" / "s1" / "control.jsonl", "control").poll()
    assert not reader.events and len(reader.bad_lines) == 1
    events = [json.loads(x) for x in (root / "sessions" / "s1" / "events.jsonl").read_bytes()
              .splitlines()]
    ignored = [e for e in events if e["type"] == "decision_ignored"]
    assert len(ignored) == 1
    # the same reason on both sides
    assert ignored[0]["reason"].endswith(reader.bad_lines[0].reason) or (
        "JSON" in ignored[0]["reason"] and "JSON" in reader.bad_lines[0].reason)


# -- analyze: streamed with the line limit, non-regular files skipped -------------------------

@pytest.mark.slow
def test_analyze_skips_a_fifo_and_an_oversized_line(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    good = runs / "good.jsonl"
    lines = [{"v": 1, "seq": 1, "ts": 1.0, "type": "session_start", "agent": "a"},
             {"v": 1, "seq": 2, "ts": 2.0, "type": "tool_call", "call_id": "c", "tool": "t",
              "args": {}}]
    good.write_bytes(b"".join(json.dumps(e).encode() + b"\n" for e in lines)
                     + b'{"x":"' + b"y" * (3 * MAX_LINE_BYTES) + b'"}\n')
    os.mkfifo(runs / "pipe.jsonl")
    done = subprocess.run([sys.executable, "-m", "supervisor", "analyze", str(runs)],
                          capture_output=True, text=True, timeout=60, env=cli_env())
    assert "pipe.jsonl: not a regular file" in done.stderr, done.stderr
    assert f"line exceeds {MAX_LINE_BYTES} bytes" in done.stderr
    assert "good" in done.stdout and "1 tool calls" in done.stdout
    named = run_cli("analyze", str(runs / "pipe.jsonl"), timeout=60)
    assert named.returncode == 1 and "not a regular file" in named.stderr


def test_bounded_reader_holds_only_the_head_of_a_huge_line() -> None:
    from supervisor.protocol.linereader import bounded_lines

    class Endless:
        """A stream of 40 MiB without a newline, then a short line; never in memory whole."""

        def __init__(self) -> None:
            self.chunks = [b"a" * (1024 * 1024)] * 40 + [b"\nshort\n"]

        def read(self, n: int) -> bytes:
            return self.chunks.pop(0) if self.chunks else b""

    huge, short = bounded_lines(Endless())  # type: ignore[arg-type]
    assert huge.oversized and huge.size == 40 * 1024 * 1024 and len(huge.data) <= 64 * 1024
    assert (short.data, short.offset) == (b"short", 40 * 1024 * 1024 + 1)
