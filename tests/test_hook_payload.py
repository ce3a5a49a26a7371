"""Payload → protocol mapping and output rendering of the Claude Code hook (pure functions)."""

import json
from pathlib import Path

import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from supervisor.guard.claude_code.payload import (
    HOOK_EVENT,
    OUTPUT_HEAD_BYTES,
    OUTPUT_TAIL_BYTES,
    PayloadError,
    map_payload,
    output_text,
    read_payload,
)
from supervisor.guard.claude_code.respond import (
    OUTPUT_LIMIT_CHARS,
    pre_tool_output,
    render,
    stop_output,
)
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


@pytest.mark.parametrize("name", sorted(p.name.split(".")[0] for p in DATA.glob("*.payload.json")
                                        if not p.name.startswith("malformed")))
def test_every_fixture_maps_to_valid_protocol_events(name: str) -> None:
    step = map_payload(fixture(name))
    assert step.events, name
    for event in [step.start, *step.events]:
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


def test_pre_tool_use_gives_the_call_with_full_arguments() -> None:
    step = map_payload(fixture("pre_tool_use"))
    [call] = step.events
    assert call["type"] == "tool_call" and call["tool"] == "Edit"
    assert call["call_id"] == "toolu_01A9cWq3R7nHk2E8xY5pLm4T"
    assert step.call == {"call_id": call["call_id"], "tool": "Edit", "args": call["args"]}


def test_a_huge_write_is_recorded_cut_but_judged_whole() -> None:
    content = "x = 1\n" * 100_000
    payload = {**fixture("pre_tool_use"), "tool_name": "Write",
               "tool_input": {"file_path": "/tmp/big.py", "content": content}}
    step = map_payload(payload)
    recorded = step.events[0]["args"]
    assert step.call["args"]["content"] == content
    assert len(recorded["content"]) < 70_000 and recorded["file_path"] == "/tmp/big.py"
    assert recorded["content_bytes"] == len(content)
    assert recorded["content_hash"] == xxhash.xxh3_64_hexdigest(content.encode())
    assert len(encode_line(step.events[0])) < 100_000


def test_post_tool_use_records_the_outcome() -> None:
    step = map_payload(fixture("post_tool_use"))
    [result] = step.events
    assert result["ok"] is True and result["error"] is None and result["duration_ms"] == 41.0
    assert result["call_id"] == "toolu_01A9cWq3R7nHk2E8xY5pLm4T"
    assert result["output_hash"] == xxhash.xxh3_64_hexdigest(result["output"].encode())

    failed = map_payload(fixture("post_tool_use_failure")).events[0]
    assert failed["ok"] is False and failed["error"].startswith("Exit code 1")
    assert "AssertionError" in failed["output"]


def test_large_tool_output_is_cut_with_size_and_hash_of_the_whole() -> None:
    stdout = "".join(f"line {i}: {'y' * 60}\n" for i in range(5000)) + "THE END"
    payload = {**fixture("post_tool_use"), "tool_name": "Bash",
               "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False}}
    step = map_payload(payload)
    [result] = step.events
    assert step.full_output == stdout
    assert result["output_bytes"] == len(stdout.encode())
    assert result["output_hash"] == xxhash.xxh3_64_hexdigest(stdout.encode())
    assert result["truncated"] is True
    assert len(result["output"].encode()) < OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES + 200
    assert result["output"].startswith("line 0:") and result["output"].endswith("THE END")
    assert "bytes omitted" in result["output"]


@pytest.mark.parametrize(
    ("response", "text"),
    [
        ("plain", "plain"),
        ({"stdout": "out", "stderr": "err", "interrupted": False}, "out\nerr"),
        ({"type": "text", "file": {"filePath": "/a", "content": "body"}}, "body"),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "a\nb"),
        ({"content": [{"type": "text", "text": "c"}]}, "c"),
        ({"matches": 3}, '{"matches": 3}'),
        (None, ""),
    ],
)
def test_output_text_per_tool_shape(response: object, text: str) -> None:
    assert output_text(response) == text


def test_prompt_stop_notification_end_and_unknown_events() -> None:
    [prompt] = map_payload(fixture("user_prompt_submit")).events
    assert prompt == {"type": "message", "role": "user",
                      "text": "The parser test fails on empty input; fix it."}
    [said] = map_payload(fixture("stop")).events
    assert said["role"] == "assistant" and said["text"].startswith("The parser now")
    sub = map_payload(fixture("subagent_stop"))
    assert [e["type"] for e in sub.events] == ["message", "session_end"]
    [note] = map_payload(fixture("notification")).events
    assert note["role"] == "system" and note["notification_type"] == "permission_prompt"
    [end] = map_payload(fixture("session_end")).events
    assert end["status"] == "completed" and "prompt_input_exit" in end["reason"]
    [other] = map_payload(fixture("unknown_event")).events
    assert other == {"type": HOOK_EVENT, "event": "PreCompact",
                     "payload": {"trigger": "auto", "custom_instructions": ""}}


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        ((DATA / "malformed.payload.json").read_bytes(), "not valid JSON"),
        (b"[1, 2]", "not an object"),
        (b'{"hook_event_name": "Stop"}', "no session_id"),
        (b"\xff\xfe{", "not valid JSON"),
    ],
)
def test_bad_payloads_are_refused_with_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(PayloadError, match=reason):
        read_payload(data)


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
    payload = read_payload(json.dumps({"session_id": "s-1", **fields}).encode())
    step = map_payload(payload)
    for event in [step.start, *step.events]:
        _valid(event)


def test_pre_tool_outputs_per_verdict() -> None:
    assert pre_tool_output("allow", None) is None
    assert pre_tool_output("nudge", "Read it first") == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "Read it first"}
    }
    deny = pre_tool_output("block", "Same failing edit 3 times")
    assert deny["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert deny["hookSpecificOutput"]["permissionDecisionReason"] == "Same failing edit 3 times"
    assert "continue" not in deny
    skip = pre_tool_output("skip", "SKIP: already read", cached_output="file body")
    assert skip["hookSpecificOutput"]["permissionDecisionReason"].endswith("file body")
    stop = pre_tool_output("stop", "Hard limit: 100 iterations")
    assert stop["continue"] is False and "100 iterations" in stop["stopReason"]
    assert stop_output(None) is None
    assert stop_output("try the other module")["decision"] == "block"


def test_render_fits_claude_codes_output_limit() -> None:
    assert render(None) == ""
    huge = pre_tool_output("block", "why " * 10_000, cached_output="é" * 5_000)
    text = render(huge)
    assert len(text) <= OUTPUT_LIMIT_CHARS
    data = json.loads(text)
    assert data["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert data["hookSpecificOutput"]["permissionDecisionReason"].startswith("why why")
