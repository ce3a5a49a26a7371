"""No payload makes a call unsupervised (issue 18, items 11 and 12): text that is not UTF-8,
payloads that cannot be parsed (too big, not JSON, nested too deeply), huge ids and argument
maps. Each is still recorded in a line every reader accepts, and the loop detectors and hard
limits still apply to it. The real hook in real processes, and the guard SDK."""

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings
from supervisor.hooks.budget import Budget
from supervisor.hooks.runtime import run_safely
from supervisor.hooks.step import PAYLOAD_LIMIT_BYTES
from supervisor.protocol.codec import BadLine, parse_line
from supervisor.protocol.names import MAX_LINE_BYTES
from tests.hook_helpers import payload, run_hook

EDIT_FAILED = "String to replace not found in file.\nString: foo()"


def _lines(root: Path, session: str) -> list[bytes]:
    return (root / "sessions" / session / "events.jsonl").read_bytes().splitlines()


def _events(root: Path, session: str) -> list[dict[str, Any]]:
    """Every line of the session, each one accepted by the protocol's reader."""
    out = []
    for line in _lines(root, session):
        assert len(line) < MAX_LINE_BYTES
        parsed = parse_line(line, "events")
        assert not isinstance(parsed, BadLine), parsed
        out.append(json.loads(line))
    return out


def _verdicts(root: Path, session: str) -> list[str]:
    return [e["action"] for e in _events(root, session) if e["type"] == "verdict"]


# -- item 11: text that is not UTF-8 -----------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("encoded", ["raw bytes", "json escape"])
def test_a_loop_on_a_file_whose_name_is_not_utf8_is_recorded_and_denied(
        tmp_path: Path, encoded: str) -> None:
    root = tmp_path / "store"
    name = "/w/caf\udce9-\udcff.py"  # what Python makes of the bytes b"caf\xe9-\xff"
    edit = {"file_path": name, "old_string": "foo()", "new_string": "bar()"}
    for step in range(8):  # the engine's own count decides when (the fourth attempt today)
        pre = payload("PreToolUse", "odd-1", tool_name="Edit", tool_input=edit,
                      tool_use_id=f"toolu_{step}\udcff")
        data = json.dumps(pre).encode()  # "\udce9": a lone surrogate, as JSON escapes it
        if encoded == "raw bytes":  # the bytes themselves, not valid UTF-8
            data = data.replace(b"\\udce9", b"\xe9").replace(b"\\udcff", b"\xff")
        done = run_hook(data, root)
        assert done.returncode == 0 and "gives up" not in done.stderr, done.stderr
        assert "unsupervised" not in done.stderr and "ignored" not in done.stderr, done.stderr
        if done.stdout:
            break
        post = payload("PostToolUseFailure", "odd-1", tool_name="Edit", tool_input=edit,
                       tool_use_id=f"toolu_{step}\udcff", error=EDIT_FAILED + "\udcff")
        assert run_hook(json.dumps(post).encode(), root).returncode == 0
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    calls = [e for e in _events(root, "odd-1") if e["type"] == "tool_call"]
    assert 3 <= len(calls) < 8  # denied like the same loop of plain names
    # kept, visibly: the undecodable bytes as escapes, not replaced nor dropped
    assert calls[0]["call_id"] == "toolu_0\\xff"
    assert calls[0]["args"]["file_path"] == "/w/caf\\xe9-\\xff.py"
    verdicts = _verdicts(root, "odd-1")
    assert verdicts[-1] == "block" and set(verdicts[:-1]) == {"allow"}
    # an odd tool name too is recorded, not given up on
    odd_tool = json.dumps(payload("PreToolUse", "odd-1", tool_name="Bash\udcff",
                                  tool_input={"command": "ls"}, tool_use_id="toolu_9")).encode()
    if encoded == "raw bytes":
        odd_tool = odd_tool.replace(b"\\udcff", b"\xff")
    assert run_hook(odd_tool, root).returncode == 0
    last = [e for e in _events(root, "odd-1") if e["type"] == "tool_call"][-1]
    assert last["tool"] == "Bash\\xff" and last["call_id"] == "toolu_9"


def test_the_sdk_takes_text_that_is_not_utf8_without_raising(tmp_path: Path) -> None:
    """The SDK raised `UnicodeEncodeError` into the agent for such text."""
    guard = Guard.open(tmp_path / "store", "sdk-odd", settings=GuardSettings(checkpoints=False))
    try:
        guard.start("sdk\udcff", "task \udcfe")
        guard.task_start("next \udc80")
        verdict = guard.pre_call("Read\udcff", {"path\udcfe": "a\udcff.py", "n": float("nan")},
                                 call_id="c\udcff")
        assert verdict.action == "allow"
        guard.post_call("c\udcff", "out\udcff", ok=False, error="err\udcff",
                        duration_ms=float("inf"), tool="Read\udcff")
        guard.message("assistant", "said \udcff")
    finally:
        guard.close()
    events = _events(tmp_path / "store", "sdk-odd")
    call = next(e for e in events if e["type"] == "tool_call")
    assert call["tool"] == "Read\\xff" and call["call_id"] == "c\\xff"
    assert call["args"] == {"path\\xfe": "a\\xff.py", "n": "NaN"}
    result = next(e for e in events if e["type"] == "tool_result")
    assert result["output"] == "out\\xff" and result["call_id"] == "c\\xff"


# -- item 11: payloads that cannot be parsed are recorded, and the hard limits hold --------------

def _oversized(n: int) -> bytes:
    body = {**payload("PreToolUse", "broken-1", tool_name="Write", tool_use_id=f"toolu_{n}"),
            "tool_input": {"file_path": "/w/big.bin", "content": "x" * PAYLOAD_LIMIT_BYTES}}
    return json.dumps(body).encode()


def _not_json(n: int) -> bytes:
    return (b'{"session_id": "broken-1", "hook_event_name": "PreToolUse", "tool_name": "Bash",'
            b' "tool_use_id": "toolu_%d", "tool_input": {"command": "ls"' % n)  # cut off


def _too_deep(n: int) -> bytes:
    head = (b'{"session_id": "broken-1", "hook_event_name": "PreToolUse", "tool_name": "Bash", '
            b'"tool_use_id": "toolu_%d", "tool_input": {"command": ' % n)
    return head + b"[" * 100_000 + b"]" * 100_000 + b"}}"


@pytest.mark.slow
@pytest.mark.parametrize("make", [_oversized, _not_json, _too_deep],
                         ids=["oversized", "not-json", "too-deep"])
def test_a_payload_that_cannot_be_parsed_is_recorded_and_the_hard_limits_apply(
        tmp_path: Path, make: Any) -> None:
    root = tmp_path / "store"
    root.mkdir(mode=0o700)
    (root / "policy.toml").write_text(
        '[limits.iterations_per_session]\nlimit = 2\naction = "stop"\n')
    answers = []
    for n in range(3):
        done = run_hook(make(n), root)
        assert done.returncode == 0
        assert "unsupervised" not in done.stderr and "ignored" not in done.stderr, done.stderr
        answers.append(done.stdout)
    assert answers[:2] == ["", ""]
    assert json.loads(answers[2])["continue"] is False  # the limit stopped the agent
    events = _events(root, "broken-1")
    calls = [e for e in events if e["type"] == "tool_call"]
    assert [c["call_id"] for c in calls] == ["toolu_0", "toolu_1", "toolu_2"]
    assert all(c["args"]["unreadable_payload"] and c["args"]["payload_bytes"] > 0 for c in calls)
    # the operator is told why the call's arguments are not there
    assert any(e["type"] == "supervisor_error" and "recorded from what could be read" in
               e["message"] for e in events)
    assert _verdicts(root, "broken-1")[-1] == "stop"


# -- item 12: the hook never writes a line a reader drops --------------------------------------

@pytest.mark.slow
def test_huge_ids_and_argument_maps_are_recorded_in_lines_every_reader_accepts(
        tmp_path: Path) -> None:
    root = tmp_path / "store"
    many_keys = {f"k{i}": i for i in range(150_000)}  # was cut into a 16.7 MB line
    pre = payload("PreToolUse", "huge-1", tool_name="T" * 1_000_000, tool_input=many_keys,
                  tool_use_id="id-" + "9" * 1_500_000)
    pre["transcript_path"] = "/t/" + "p" * 1_000_000
    assert run_hook(pre, root).returncode == 0
    other = {**pre, "tool_use_id": "id-" + "9" * 1_499_999 + "8"}
    assert run_hook(other, root).returncode == 0
    events = _events(root, "huge-1")  # every line under the limit and valid
    calls = [e for e in events if e["type"] == "tool_call"]
    assert len(calls) == 2
    assert calls[0]["call_id"] != calls[1]["call_id"]  # cut, but still told apart
    assert calls[0]["tool"].startswith("TTTT") and len(calls[0]["tool"]) <= 4096
    assert len(json.dumps(calls[0]["args"])) < 128 * 1024
    assert max(len(line) for line in _lines(root, "huge-1")) < 256 * 1024


# -- every fuzzed payload with a session is recorded -------------------------------------------

_TEXT = st.text(st.characters(exclude_categories=()) | st.sampled_from(
    ["\udcff", "\ud800", "\x00", "\u202e", "\x1b", "\x9b"]), max_size=12)
_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=12)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(tool=_TEXT | _VALUE, args=_VALUE, call_id=_TEXT | _VALUE, depth=st.integers(0, 300))
def test_every_fuzzed_call_with_a_session_is_recorded(tmp_path: Path, tool: Any, args: Any,
                                                      call_id: Any, depth: int) -> None:
    root = tmp_path / "fuzz-store"
    nested: Any = args
    for _ in range(depth):
        nested = [nested]
    body = {"session_id": "fuzz-1", "hook_event_name": "PreToolUse", "cwd": "/nonexistent",
            "tool_name": tool, "tool_input": nested, "tool_use_id": call_id}
    data = json.dumps(body, allow_nan=True).encode("utf-8", "surrogatepass")
    complaints: list[str] = []
    before = len(_lines(root, "fuzz-1")) if (root / "sessions" / "fuzz-1").exists() else 0
    run_safely("claude-code", data, root, Budget(60), complaints.append)
    assert complaints == []
    events = _events(root, "fuzz-1")[before:]
    assert [e["type"] for e in events if e["type"] in ("tool_call", "verdict")] == [
        "tool_call", "verdict"]
