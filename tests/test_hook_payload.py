"""Payload → protocol mapping and output rendering of the Claude Code hook (pure functions)."""

import json
from pathlib import Path

import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from supervisor.hooks.claude_code.payload import map_payload, output_text
from supervisor.hooks.claude_code.respond import context_output, pre_tool_output
from supervisor.hooks.step import HOOK_EVENT, PayloadError, read_payload
from supervisor.hooks.wording import OUTPUT_LIMIT_CHARS, render
from supervisor.protocol.codec import BadLine, parse_line
from supervisor.protocol.lines import encode_line

DATA = Path(__file__).parent / "data" / "claude_code"
SID = "8a1f2c3d-4e5f-4a6b-9c7d-0e1f2a3b4c5d"


def fixture(name: str) -> dict:
    return read_payload((DATA / f"{name}.payload.json").read_bytes())


def _valid(event: dict) -> None:
    """The event, once the writer adds the common fields, parses as a protocol line."""
    line = encode_line({"v": 1, "seq": 1, "ts": 1.0, **event})
    parsed = parse_line(line, "events")
    assert not isinstance(parsed, BadLine), parsed


NAMES = sorted(p.name.split(".")[0] for p in DATA.glob("*.payload.json")
               if not p.name.startswith("malformed"))


def _events(step) -> list[dict]:
    """The events a step stands for, as the guard would write them (common fields aside)."""
    events = [step.start]
    if step.message:
        events.append({"type": "message", **step.message})
    if step.call:
        events.append({"type": "tool_call", **step.call})
    if step.result:
        r = step.result
        events.append({"type": "tool_result", "call_id": r["call_id"], "ok": r["ok"],
                       "output": r["output"], "output_bytes": len(r["output"].encode()),
                       "output_hash": "h", "error": r["error"], "duration_ms": r["duration_ms"]})
    if step.end:
        events.append({"type": "session_end", **step.end})
    if step.record:
        events.append(step.record)
    return events


@pytest.mark.parametrize("name", NAMES)
def test_every_fixture_maps_to_valid_protocol_events(name: str) -> None:
    step = map_payload(fixture(name))
    events = _events(step)
    assert len(events) >= 2, name
    for event in events:
        _valid(event)
    assert step.start["type"] == "session_start" and step.start["agent"].startswith("claude-code")


def test_session_ids_are_sanitised_and_subagents_get_a_linked_child_session() -> None:
    step = map_payload({**fixture("pre_tool_use"), "session_id": "../../etc/passwd x"})
    assert step.session_id == "etc-passwd-x"
    sub = map_payload(fixture("subagent_pre_tool_use"))
    assert sub.session_id == f"{SID}.sub-a3f9c2e1"
    assert sub.parent_session_id == SID
    assert sub.subagent == {"agent_id": "a3f9c2e1", "agent_type": "Explore"}
    assert sub.start["parent_session"] == SID and sub.start["agent"] == "claude-code:Explore"
    main = map_payload(fixture("pre_tool_use"))
    assert main.parent_session_id is None and "parent_session" not in main.start
    long_id = map_payload({**fixture("subagent_pre_tool_use"), "session_id": "s" * 300})
    assert long_id.parent_session_id == "s" * 128
    assert long_id.session_id != long_id.parent_session_id
    assert long_id.session_id.endswith(".sub-a3f9c2e1")


def test_pre_tool_use_gives_the_call() -> None:
    step = map_payload(fixture("pre_tool_use"))
    assert step.kind == "call"
    assert step.call == {
        "call_id": "toolu_01A9cWq3R7nHk2E8xY5pLm4T", "tool": "Edit",
        "args": fixture("pre_tool_use")["tool_input"],
    }
    no_id = {k: v for k, v in fixture("pre_tool_use").items() if k != "tool_use_id"}
    post = {k: v for k, v in fixture("post_tool_use").items() if k != "tool_use_id"}
    # without tool_use_id (older releases) the call and its result still pair up
    assert map_payload(no_id).call["call_id"] == map_payload(post).result["call_id"]


def test_a_huge_write_is_recorded_cut_with_size_and_hash() -> None:
    content = "x = 1\n" * 100_000
    payload = {**fixture("pre_tool_use"), "tool_name": "Write",
               "tool_input": {"file_path": "/tmp/big.py", "content": content}}
    recorded = map_payload(payload).call["args"]
    assert len(recorded["content"]) < 70_000 and recorded["file_path"] == "/tmp/big.py"
    assert recorded["content_bytes"] == len(content)
    assert recorded["content_hash"] == xxhash.xxh3_64_hexdigest(content.encode())
    assert len(encode_line({"type": "tool_call", "args": recorded})) < 100_000


def test_post_tool_use_gives_the_whole_outcome() -> None:
    step = map_payload(fixture("post_tool_use"))
    result = step.result
    assert step.kind == "result" and result["tool"] == "Edit"
    assert result["ok"] is True and result["error"] is None and result["duration_ms"] == 41.0
    assert result["call_id"] == "toolu_01A9cWq3R7nHk2E8xY5pLm4T"
    assert json.loads(result["output"])["filePath"] == "/home/dev/myapp/parser.py"

    failed = map_payload(fixture("post_tool_use_failure")).result
    assert failed["ok"] is False and failed["error"].startswith("Exit code 1")
    assert "AssertionError" in failed["output"]

    stdout = "".join(f"line {i}\n" for i in range(50_000))
    big = {**fixture("post_tool_use"), "tool_name": "Bash",
           "tool_response": {"stdout": stdout, "stderr": "", "interrupted": True}}
    result = map_payload(big).result
    assert result["output"] == stdout  # whole: the guard cuts it and hashes all of it
    assert result["ok"] is False and result["error"] == "interrupted"


@pytest.mark.parametrize(
    ("response", "text"),
    [
        ("plain", "plain"),
        ({"stdout": "out", "stderr": "err", "interrupted": False}, "out\nerr"),
        ({"type": "text", "file": {"filePath": "/a", "content": "body"}}, "body"),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "a\nb"),
        ({"content": [{"type": "text", "text": "c"}]}, "c"),
        ({"matches": 3}, '{"matches": 3}'),
        ({"filenames": ["a.py"], "numFiles": 1, "durationMs": 12}, '{"filenames": ["a.py"], '
         '"numFiles": 1}'),
        ({"filePath": "/a", "originalFile": "x" * 9999, "userModified": False},
         '{"filePath": "/a", "userModified": false}'),
        (None, ""),
    ],
)
def test_output_text_per_tool_shape(response: object, text: str) -> None:
    assert output_text(response) == text


def test_prompt_stop_notification_end_and_unknown_events() -> None:
    prompt = map_payload(fixture("user_prompt_submit"))
    assert prompt.kind == "prompt"
    assert prompt.message == {"role": "user",
                              "text": "The parser test fails on empty input; fix it."}
    stop = map_payload(fixture("stop"))
    assert stop.kind == "stop" and stop.end is None
    assert stop.message["role"] == "assistant" and stop.message["text"].startswith("The parser")
    sub = map_payload(fixture("subagent_stop"))
    assert sub.kind == "stop" and sub.end == {"status": "completed", "reason": "subagent finished"}
    note = map_payload(fixture("notification"))
    assert note.message == {"role": "system",
                            "text": "[permission_prompt] Claude needs your permission to use Bash"}
    end = map_payload(fixture("session_end"))
    assert end.end["status"] == "completed" and "prompt_input_exit" in end.end["reason"]
    other = map_payload(fixture("unknown_event"))
    assert other.kind == "other"
    assert other.record == {"type": HOOK_EVENT, "event": "PreCompact",
                            "payload": {"trigger": "auto", "custom_instructions": ""}}
    start = map_payload(fixture("session_start"))
    assert start.kind == "start" and start.start["source"] == "startup"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        (b"[1, 2]", "not an object"),
        (b'{"hook_event_name": "Stop"}', "no session_id"),
        (b"\xff\xfe{", "not valid JSON"),
    ],
)
def test_bad_payloads_are_refused_with_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(PayloadError, match=reason):
        read_payload(data)


def test_a_broken_payload_with_a_session_is_rescued_not_refused() -> None:
    rescued = read_payload((DATA / "malformed.payload.json").read_bytes())
    assert "not valid JSON" in rescued["supervisor_rescued"]
    assert rescued["session_id"] and rescued["tool_input"]["payload_bytes"] > 0
    assert read_payload(b'{"session_id": "s", "duration_ms": NaN}')["duration_ms"] == "NaN"


@pytest.mark.parametrize(("raw", "value"), [
    (b'"\\ud800 lone"', "\\ud800 lone"),  # an escaped lone surrogate
    (b'"\\uDC80"', "\\x80"),  # (a surrogateescape one: the byte it stands for)
    (b'"\xff raw"', "\\xff raw"),  # bytes that are not UTF-8
    (b"NaN", "NaN"), (b"-Infinity", "-Infinity"),
    (b"1e999", "Infinity"), (b"-2.5E+400", "-Infinity"),
    (b"1" * 400 + b".5", "Infinity"), (b"9" * 250 + b"e99", "Infinity"),
    (b'"\\ud83d\\ude00 a pair"', "\U0001f600 a pair"),  # a pair is one character
    (b"1e99", 1e99), (b'"plain \\u00e9"', "plain \u00e9"),
])
def test_a_payload_is_made_writable_whatever_its_bytes_hold(raw: bytes, value: object) -> None:
    """`read_payload` skips its walk of the value only when the bytes cannot hold what it
    mends: every such value still comes out fit for a protocol line."""
    payload = read_payload(b'{"session_id": "s", "tool_input": {"x": ' + raw + b"}}")
    assert payload["tool_input"]["x"] == value
    encode_line({"type": "x", **payload})  # (raises for what a line cannot carry)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(
    ["hook_event_name", "tool_name", "tool_input", "tool_response", "tool_use_id", "prompt",
     "agent_id", "agent_type", "error", "message", "reason", "source", "duration_ms",
     "last_assistant_message", "cwd", "is_interrupt"]),
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30),
              st.sampled_from(["PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop",
                               "SubagentStop", "SessionStart", "Notification", "SessionEnd",
                               "UserPromptSubmit"]),
              st.lists(st.text(max_size=5), max_size=3),
              st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3))))
def test_mapping_never_raises_and_always_gives_valid_events(fields: dict) -> None:
    try:
        payload = read_payload(json.dumps({"session_id": "s-1", **fields}).encode())
    except PayloadError as exc:  # NaN and infinities: not JSON, refused
        assert "is not JSON" in str(exc)
        return
    step = map_payload(payload)
    for event in _events(step):
        _valid(event)


def test_pre_tool_outputs_per_verdict() -> None:
    assert pre_tool_output("allow", None) is None
    assert pre_tool_output("nudge", "Read it first") == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse",
                               "additionalContext": "Agent Supervisor: Read it first"}
    }
    deny = pre_tool_output("block", "Same failing edit 3 times")
    assert deny["hookSpecificOutput"]["permissionDecision"] == "deny"
    # the model reads "PreToolUse:Bash hook error: <reason>": the reason says who refused
    assert (deny["hookSpecificOutput"]["permissionDecisionReason"]
            == "Agent Supervisor: Same failing edit 3 times")
    assert "continue" not in deny
    bare = pre_tool_output("skip", None)["hookSpecificOutput"]["permissionDecisionReason"]
    assert bare.startswith("Agent Supervisor: ") and "continue with the next step" in bare
    skip = pre_tool_output("skip", "SKIP: already read", cached_output="file body")
    assert skip["hookSpecificOutput"]["permissionDecisionReason"].endswith("file body")
    stop = pre_tool_output("stop", "Hard limit: 100 iterations")
    assert stop["continue"] is False and "100 iterations" in stop["stopReason"]
    # Stop: guidance as added context, not as an error quoting the hook's command line
    assert context_output("Stop", None) is None
    assert context_output("Stop", "try the other module") == {
        "hookSpecificOutput": {"hookEventName": "Stop",
                               "additionalContext": "try the other module"}}


def test_render_fits_claude_codes_output_limit() -> None:
    assert render(None) == ""
    huge = pre_tool_output("block", "why " * 10_000, cached_output="é" * 5_000)
    text = render(huge)
    assert len(text) <= OUTPUT_LIMIT_CHARS
    data = json.loads(text)
    assert data["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert data["hookSpecificOutput"]["permissionDecisionReason"].startswith(
        "Agent Supervisor: why why")


@pytest.mark.parametrize("duration", [1e16, -1e16, float("inf"), float("nan"), True, "9"])
def test_a_duration_no_protocol_line_can_hold_is_left_out(duration: object) -> None:
    """Found by the property test above: a finite but huge `duration_ms` made an invalid
    `tool_result` (the protocol caps numbers at 1e15)."""
    step = map_payload({**fixture("post_tool_use"), "duration_ms": duration})
    assert step.result is not None and step.result["duration_ms"] is None
    kept = map_payload({**fixture("post_tool_use"), "duration_ms": 12}).result
    assert kept is not None and kept["duration_ms"] == 12.0


def test_a_steps_copy_is_dataclasses_replace_without_its_cost() -> None:
    """`step.replace` (the mappings and the runtime copy each step a few times) gives what
    `dataclasses.replace` gives, field by field, and refuses a field a step does not have."""
    import dataclasses

    from supervisor.hooks.step import HookStep, replace

    step = map_payload(fixture("pre_tool_use"))
    changes = {"kind": "result", "session_id": "other", "pair": "k", "batch": ({"x": 1},),
               "no_result": True, "start": {"agent": "a"}}
    for name, value in changes.items():
        ours, theirs = replace(step, **{name: value}), dataclasses.replace(step, **{name: value})
        assert ours == theirs and type(ours) is HookStep
        assert all(getattr(ours, f.name) is getattr(theirs, f.name)
                   for f in dataclasses.fields(HookStep))
    assert replace(step, **changes) == dataclasses.replace(step, **changes)
    assert replace(step) == step and replace(step) is not step
    with pytest.raises(TypeError):
        replace(step, kinds="call")
    with pytest.raises(dataclasses.FrozenInstanceError):
        replace(step, kind="call").kind = "x"  # type: ignore[misc]
