"""Shared helpers of the importer tests: fixture paths and protocol checks of imported runs."""

from pathlib import Path
from typing import Any

from supervisor.importers import ImportedRun
from supervisor.protocol.codec import BadLine, parse_line
from supervisor.protocol.lines import encode_line
from supervisor.protocol.models import GenericEvent
from supervisor.protocol.names import MAX_LINE_BYTES
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "importers"
CORPUS = next(
    (c for c in (REPO.parent / "shared" / "corpus", REPO.parent.parent / "shared" / "corpus")
     if c.is_dir()),
    REPO.parent / "shared" / "corpus",
)
"""The development corpus: beside the checkout in CI, two levels up from a worktree here."""


def fixture(relative: str) -> Path:
    return DATA / relative


def check_protocol(run: ImportedRun) -> None:
    """Every event is a valid, known protocol event; seq 1..n; results answer earlier calls."""
    assert run.events, "a run has at least its session_start"
    assert run.events[0]["type"] == "session_start"
    calls: set[str] = set()
    answered: set[str] = set()
    last_ts = None
    for index, event in enumerate(run.events, 1):
        line = encode_line(event)
        assert len(line) <= MAX_LINE_BYTES
        parsed = parse_line(line)
        assert not isinstance(parsed, BadLine), (event, parsed)
        assert not isinstance(parsed, GenericEvent), event["type"]
        assert event["seq"] == index
        assert isinstance(event["ts"], float) and event["ts"] > 0
        if run.meta.get("ts") == "synthetic":
            assert last_ts is None or event["ts"] > last_ts
        last_ts = event["ts"]
        if event["type"] == "tool_call":
            assert event["call_id"] not in calls, "call ids are unique in a run"
            calls.add(event["call_id"])
        if event["type"] == "tool_result":
            assert event["call_id"] in calls and event["call_id"] not in answered
            answered.add(event["call_id"])
            assert len(event["output_hash"]) == 16
            assert event["output_bytes"] >= len(event["output"].encode("utf-8")) - 3
            assert (event["error"] is None) == event["ok"]
    assert sum(1 for e in run.events if e["type"] == "session_start") == 1
    assert sum(1 for e in run.events if e["type"] == "session_end") <= 1


def of_type(run: ImportedRun, kind: str) -> list[dict[str, Any]]:
    return [e for e in run.events if e["type"] == kind]


def steps(run: ImportedRun) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """(tool_call, its tool_result or None) in call order."""
    results = {e["call_id"]: e for e in of_type(run, "tool_result")}
    return [(c, results.get(c["call_id"])) for c in of_type(run, "tool_call")]
