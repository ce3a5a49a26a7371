"""The parser: never raises, round-trips every event type, keeps what it does not know."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supervisor.protocol.codec import BadLine, dump_event, parse_line
from supervisor.protocol.lines import encode_line
from supervisor.protocol.models import AGENT_MODELS, Decision, GenericEvent
from tests.strategies import FIELDS, agent_events, control_events, json_values

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(raw: bytes) -> None:
    for kind in ("events", "control"):
        result = parse_line(raw, kind)
        assert isinstance(result, BadLine | GenericEvent) or result.seq >= 1


@FAST
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6))
def test_arbitrary_json_objects_never_raise(value: dict) -> None:
    raw = json.dumps(value).encode()
    for kind in ("events", "control"):
        result = parse_line(raw, kind)
        if isinstance(result, BadLine):
            assert result.reason and result.raw == raw


@pytest.mark.parametrize("event_type", sorted(FIELDS))
def test_every_event_type_round_trips(event_type: str) -> None:
    @settings(max_examples=15, deadline=None)
    @given(agent_events(event_type))
    def check(data: dict) -> None:
        event = parse_line(encode_line(data))
        assert type(event) is AGENT_MODELS[event_type], event
        for name, value in data.items():
            assert getattr(event, name) == value
        again = parse_line(dump_event(event))
        assert again == event
        assert type(again) is type(event)

    check()


@FAST
@given(control_events())
def test_decisions_round_trip(data: dict) -> None:
    event = parse_line(encode_line(data), "control")
    assert isinstance(event, Decision)
    assert parse_line(dump_event(event), "control") == event
    assert event.model_dump(mode="json") == data


@FAST
@given(agent_events(), st.dictionaries(st.text(min_size=1, max_size=8).map(lambda k: "x_" + k),
                                       json_values, min_size=1, max_size=3))
def test_unknown_fields_are_kept(data: dict, extra: dict) -> None:
    event = parse_line(encode_line({**data, **extra}))
    assert not isinstance(event, BadLine)
    dumped = json.loads(dump_event(event))
    for key, value in extra.items():
        assert dumped[key] == value


def test_unknown_type_becomes_generic_event_with_its_fields() -> None:
    raw = b'{"v":1,"seq":3,"ts":1.5,"type":"thought","text":"hmm","depth":2}'
    event = parse_line(raw)
    assert isinstance(event, GenericEvent)
    assert (event.type, event.seq, event.model_extra) == ("thought", 3, {"text": "hmm", "depth": 2})
    assert json.loads(dump_event(event)) == json.loads(raw)
    control = parse_line(b'{"v":1,"seq":1,"ts":1,"type":"note","by":"ops"}', "control")
    assert isinstance(control, GenericEvent) and control.model_extra == {"by": "ops"}


def test_agent_event_types_in_a_control_file_are_generic() -> None:
    raw = b'{"v":1,"seq":1,"ts":1,"type":"heartbeat"}'
    assert isinstance(parse_line(raw, "control"), GenericEvent)


OK = b'{"v":1,"seq":1,"ts":1.0,"type":"message","role":"user","text":"hi"}'


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b'{"v":1,"seq":1', "invalid JSON"),
        (b"", "invalid JSON"),
        (b"\xef\xbb\xbf" + OK, "invalid JSON"),
        (b'{"v":1,"seq":1,"ts":NaN,"type":"heartbeat"}', "invalid JSON: NaN is not JSON"),
        (b'{"v":1,"seq":1,"ts":1,"type":"heartbeat","x":-Infinity}', "invalid JSON"),
        (b"[1,2]", "not a JSON object"),
        (b'"text"', "not a JSON object"),
        (b"null", "not a JSON object"),
        (b'{"seq":1,"ts":1,"type":"heartbeat"}', "missing field 'v'"),
        (b'{"v":1,"ts":1,"type":"heartbeat"}', "missing field 'seq'"),
        (b'{"v":1,"seq":1,"type":"heartbeat"}', "missing field 'ts'"),
        (b'{"v":1,"seq":1,"ts":1}', "missing field 'type'"),
        (b'{"v":1,"seq":1,"ts":1,"type":"message","role":"user"}', "missing field 'text'"),
        (b'{"v":1,"seq":0,"ts":1,"type":"heartbeat"}', "field 'seq' must be >= 1"),
        (b'{"v":1,"seq":"5","ts":1,"type":"heartbeat"}', "field 'seq'"),
        (b'{"v":1,"seq":1,"ts":true,"type":"heartbeat"}', "field 'ts'"),
        (b'{"v":1,"seq":1,"ts":1e999,"type":"heartbeat"}', "field 'ts'"),
        (b'{"v":1,"seq":1,"ts":1,"type":7}', "field 'type'"),
        (b'{"v":1,"seq":1,"ts":1,"type":"verdict","call_id":"c","action":"maybe","level":1}',
         "field 'action'"),
        (b'{"v":1,"seq":1,"ts":1,"type":"tool_result","call_id":"c","ok":"yes","output":"",'
         b'"output_bytes":0,"output_hash":"h"}', "field 'ok'"),
        (b'{"v":1,"seq":1,"ts":1,"type":"detection","detector":"d","level":9,"signature":"s",'
         b'"evidence":[],"message":"m"}', "field 'level'"),
        (b'{"v":1,"seq":1,"ts":1,"type":"message","role":"user","text":"\xff\xfe"}',
         "invalid UTF-8 at byte 61"),
        (b"[" * 100_000, "nested deeper than 64 levels"),
    ],
)
def test_bad_lines_say_why(raw: bytes, reason: str) -> None:
    result = parse_line(raw)
    assert isinstance(result, BadLine), result
    assert result.reason.startswith(reason), result.reason
    assert result.raw == raw


def test_bad_control_line() -> None:
    result = parse_line(b'{"v":1,"seq":1,"ts":1,"type":"decision","decision_id":"d",'
                        b'"action":"approve"}', "control")
    assert isinstance(result, BadLine) and result.reason == "missing field 'operator'"


def test_oversized_line_is_bad_and_keeps_only_its_start() -> None:
    raw = b'{"v":1,"seq":1,"ts":1,"type":"message","role":"user","text":"' + b"x" * 200_000
    result = parse_line(raw + b'"}', max_bytes=100_000)
    assert isinstance(result, BadLine)
    assert result.reason == "line exceeds 100000 bytes"
    assert result.size == len(raw) + 2 and len(result.raw) == 64 * 1024


def test_lone_surrogate_escape_is_read_not_lost() -> None:
    """Python's json.dumps writes lone surrogates as escapes; the event must not be lost."""
    raw = json.dumps({"v": 1, "seq": 1, "ts": 1.0, "type": "message", "role": "assistant",
                      "text": "bad byte: \udcff!"}).encode()
    event = parse_line(raw)
    assert not isinstance(event, BadLine), event
    assert event.text == "bad byte: \ufffd!"
    assert parse_line(dump_event(event)) == event


def test_words_nan_and_infinity_inside_strings_are_fine() -> None:
    event = parse_line(b'{"v":1,"seq":1,"ts":1,"type":"message","role":"user",'
                       b'"text":"NaN and Infinity"}')
    assert event.text == "NaN and Infinity"


def test_trailing_newline_and_crlf_are_accepted() -> None:
    assert not isinstance(parse_line(OK + b"\n"), BadLine)
    assert not isinstance(parse_line(OK + b"\r\n"), BadLine)


def test_preview_of_a_bad_line_replaces_undecodable_bytes() -> None:
    bad = BadLine("x", b"ab\xffcd" * 100)
    assert bad.preview(4) == "ab\ufffdc…"


@FAST
@given(agent_events())
def test_slow_path_gives_the_same_event_as_the_fast_path(data: dict) -> None:
    """A line mentioning NaN in a string takes the stdlib path; the result must not differ."""
    fast = parse_line(encode_line({**data, "note": "ok"}))
    slow = parse_line(encode_line({**data, "note": "NaN"}))
    assert not isinstance(slow, BadLine), slow
    assert type(slow) is type(fast)
    assert slow.model_dump() == {**fast.model_dump(), "note": "NaN"}
