"""The control channel reader and the operator's decision writer, on real files."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supervisor.guard import control
from supervisor.operator.send import DecisionError, send_decision
from supervisor.store.errors import SessionNotFound
from supervisor.store.paths import ensure_session_dir, session_files


def line(**fields) -> bytes:
    base = {"v": 1, "seq": 1, "ts": 1.0, "type": "decision", "decision_id": "d1",
            "escalation_id": None, "action": "approve", "operator": "ana"}
    base.update(fields)
    return (json.dumps({k: v for k, v in base.items() if v is not ...}) + "\n").encode()


def test_reads_only_new_complete_lines(tmp_path: Path) -> None:
    path = tmp_path / "control.jsonl"
    assert not control.has_news(path, 0)
    assert control.read_from(path, 0) == ([], 0)
    first = line(decision_id="d1")
    path.write_bytes(first + line(decision_id="d2")[:20])  # second line half written
    assert control.has_news(path, 0)
    lines, offset = control.read_from(path, 0)
    assert [x.decision_id for x in lines] == ["d1"] and offset == len(first)
    assert control.read_from(path, offset) == ([], offset)
    with path.open("ab") as f:
        f.write(line(decision_id="d2")[20:])
    lines, offset2 = control.read_from(path, offset)
    assert [(x.decision_id, x.offset) for x in lines] == [("d2", len(first))]
    assert not control.has_news(path, offset2)


def test_truncated_file_is_read_again_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "control.jsonl"
    path.write_bytes(line(decision_id="d1") + line(decision_id="d2"))
    _, offset = control.read_from(path, 0)
    path.write_bytes(line(decision_id="d3"))
    lines, _ = control.read_from(path, offset)
    assert [x.decision_id for x in lines] == ["d3"]


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"{not json", "invalid JSON"),
        (b"[1, 2]", "not a JSON object"),
        (line(type="verdict"), "type must be 'decision'"),
        (line(seq=...), "missing field 'seq'"),
        (line(operator=...), "missing field 'operator'"),
        (line(decision_id=""), "field 'decision_id' must be a non-empty string"),
        (line(action="explode"), "unknown action \"explode\""),
        (line(action="guidance", text="  "), "guidance needs a non-empty 'text'"),
        (line(action="rollback"), "rollback needs a 'checkpoint_id'"),
        (line(escalation_id=5), "field 'escalation_id' must be a string or null"),
    ],
)
def test_malformed_lines_have_a_reason(raw: bytes, problem: str) -> None:
    parsed = control.parse_control_line(raw.rstrip(b"\n"), offset=42)
    assert parsed.decision is None
    assert problem in parsed.problem
    assert parsed.decision_id == "line@42"


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_give_a_decision_or_a_problem(raw: bytes) -> None:
    parsed = control.parse_control_line(raw)
    assert (parsed.decision is None) != (parsed.problem is None)


def test_send_decision_writes_a_valid_line(tmp_path: Path) -> None:
    ensure_session_dir(tmp_path, "s1")
    dec_id = send_decision(tmp_path, "s1", "guidance", escalation_id="esc-1",
                           text="read the file first", operator="ana")
    lines, _ = control.read_from(session_files(tmp_path, "s1").control, 0)
    assert len(lines) == 1 and lines[0].problem is None
    d = lines[0].decision
    assert (d["decision_id"], d["action"], d["text"], d["operator"], d["seq"]) == (
        dec_id, "guidance", "read the file first", "ana", 1)


def test_send_decision_refuses_bad_decisions(tmp_path: Path) -> None:
    ensure_session_dir(tmp_path, "s1")
    with pytest.raises(DecisionError, match="unknown action 'nope'"):
        send_decision(tmp_path, "s1", "nope")
    with pytest.raises(DecisionError, match="rollback needs a 'checkpoint_id'"):
        send_decision(tmp_path, "s1", "rollback")
    with pytest.raises(SessionNotFound):
        send_decision(tmp_path, "missing", "abort")
    assert not session_files(tmp_path, "s1").control.exists()
