"""Every example line of docs/protocol.md goes through the real parser, so the page can't drift."""

import json
import re

from supervisor.protocol.codec import BadLine, dump_event, parse_line
from supervisor.protocol.models import AGENT_MODELS, Decision, GenericEvent
from supervisor.protocol.names import AGENT_EVENT_TYPES
from tests.conftest import REPO

DOC = (REPO / "docs" / "protocol.md").read_text()
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def blocks(language: str) -> list[bytes]:
    return [line.encode() for lang, body in FENCE.findall(DOC) if lang == language
            for line in body.splitlines() if line.strip()]


def test_every_json_example_is_a_valid_event_that_round_trips() -> None:
    lines = blocks("json")
    assert len(lines) >= 20
    seen = set()
    for raw in lines:
        kind = "control" if json.loads(raw)["type"] == "decision" else "events"
        event = parse_line(raw, kind)
        assert not isinstance(event, BadLine), (raw, event)
        expected = Decision if kind == "control" else AGENT_MODELS.get(event.type, GenericEvent)
        assert type(event) is expected, raw
        assert parse_line(dump_event(event), kind) == event
        seen.add(event.type)
    assert seen >= AGENT_EVENT_TYPES | {"decision", "thought"}


def test_every_bad_line_example_is_bad() -> None:
    lines = blocks("text")
    assert len(lines) == 4
    for raw in lines:
        assert isinstance(parse_line(raw), BadLine), raw


def test_the_extensions_are_in_the_models() -> None:
    for name in ("heartbeat_s", "escalation.kind", '"fallback"'):
        assert name in DOC
    assert "heartbeat_s" in AGENT_MODELS["session_start"].model_fields
    assert "kind" in AGENT_MODELS["escalation"].model_fields
