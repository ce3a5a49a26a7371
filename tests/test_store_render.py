"""`supervisor tail`'s one-line rendering: every event type readable, hostile text harmless."""

import math
import re
from pathlib import Path

import pytest

from supervisor.protocol.codec import BadLine, parse_line
from supervisor.protocol.models import Heartbeat
from supervisor.store.render import clock, describe_bad_line, describe_event
from tests.test_docs_protocol import blocks

EXPECTED = {
    "session_start": "agent claude-code task 'fix the failing date parser test' in /home/dev/app",
    "task_start": ("t1: make tests/test_dates.py pass",
                   "t2: Make parse_date accept 2024-02-29 (step 1 of 2)"),
    "task_end": "t1 done",
    "tool_call": ('bash {"command":"pytest -q tests/test_dates.py"} [c',
                  'Edit {"file_path":"src/dates.py",'),
    "tool_result": ("ERROR exit status 1 [c1]", "ok [c21] 'The file has been updated.'"),
    "message": "assistant: The parser accepts",
    "usage": ("12800 in / 310 out tokens, $0.0421", "3 in / 120 out tokens, $0.0156"),
    "detection": "repeated_call level 1: the same test run failed",
    "verdict": "nudge (level 1) [c8] Read the failing assertion",
    "limit": "tool_calls 150 of 200 -> warn",
    "checkpoint": ("cp3 'before editing src/dates.py' commit 4b825dc642cb at seq 23, 17 files",
                   "cp4 'auto: every 20 actions' commit 9c1f2e7d4b3a at seq 39, 18 files "
                   "(+1 ~2 -0 since cp3)"),
    "rollback": "to cp3: 2 files put back as they were (safety checkpoint cp5)",
    "escalation": "e1 level 3 [cycle]: oscillating",
    "decision_applied": " for e1: ",
    "decision_ignored": "[d-7f3b] duplicate",
    "heartbeat": "heartbeat",
    "hint": "failed_edit [toolu_7] The text is in app.py at lines 2-3",
    # a notification URL is a credential: only its scheme is shown (supervisor.redact)
    "notification": ("e1: retrying via ntfys://… (attempt 1): HTTP 503",
                     "e1: sent via ntfys://… (attempt 2)"),
    "memory": "warned [toolu_9] Failure memory: this same call failed once",
    "disobeyed": "[toolu_12] ran although refused (block)",
    "session_end": "session_end      completed",
    "decision": ("alice: guidance e1 [d-7f3a] text 'Stop editing",
                 "alice: split e1 [d-9a21] tasks 'Make parse_date accept 2024-02-29' | 'Run"),
    "thought": '{"text":"maybe the locale matters","tokens":12}',
}


@pytest.mark.parametrize("raw", blocks("json"), ids=lambda raw: raw[30:60].decode())
def test_every_documented_event_renders_readably(raw: bytes) -> None:
    kind = "control" if b'"type":"decision"' in raw else "events"
    event = parse_line(raw, kind)
    text = describe_event(event)
    assert re.match(r"\s*\d+ \d\d:\d\d:\d\d \w+", text), text
    expected = EXPECTED[event.type]
    assert any(e in text for e in (expected if isinstance(expected, tuple) else (expected,))), \
        text
    assert "\n" not in text and len(text) <= 200


def test_times_outside_the_platform_range_do_not_crash() -> None:
    assert isinstance(parse_line(b'{"v":1,"seq":1,"ts":1e300,"type":"heartbeat"}'), BadLine)
    event = Heartbeat.model_construct(seq=1, ts=1e300)  # built by hand: not validated
    assert "??:??:??" in describe_event(event)
    assert clock(-1e300) == "??:??:??" and clock(None) == "--:--:--"


def test_hostile_text_is_cleaned() -> None:
    event = parse_line(b'{"v":1,"seq":1,"ts":1,"type":"message","role":"user",'
                       b'"text":"a\\u001b]0;t\\u0007b\\nc\\u202e"}')
    assert describe_event(event).endswith("user: ab⏎c")
    bad = parse_line(b'\x1b[2J{"broken')
    assert "\x1b" not in describe_bad_line(bad)


def test_ago() -> None:
    from supervisor.store.render import ago

    now = 1_000_000.0
    assert ago(None, now) == "-"
    assert [ago(now - d, now) for d in (0, 59, 60, 3599, 3600, 86399, 86400 * 3)] == [
        "0s ago", "59s ago", "1m ago", "60m ago", "1h ago", "24h ago", "3d ago"]
    assert ago(now + 5, now) == "0s ago"  # a clock slightly ahead is not negative


def test_ago_changes_at_says_when_the_text_next_turns() -> None:
    """Until `ago_changes_at` the text `ago` shows stays the same, and it turns at that time
    (or at the next look after it: `ago` rounds half to even), across every unit."""
    from supervisor.store.render import ago, ago_changes_at

    ts = 1_000_000.0
    assert ago_changes_at(None, ts) == math.inf
    for age in (0.0, 0.2, 0.7, 12.4, 59.4, 59.6, 60.0, 89.0, 150.0, 3599.0, 3600.0, 5399.0,
                86399.0, 86400.0, 3 * 86400.0, 200 * 86400.0):
        now = ts + age
        due = ago_changes_at(ts, now)
        assert due > now - 1e-9
        for part in (0.0, 0.25, 0.5, 0.75, 0.999):
            assert ago(ts, now + (due - now) * part) == ago(ts, now), (age, part)
        assert ago(ts, due + 1.0) != ago(ts, now), age  # a second later at most, it turned


def test_a_rollback_says_files_put_back_not_restored() -> None:
    """`restored_files` counts the files removed (created since) too: "2 files restored" for
    one restored and one removed was not what happened (the CLI's own line said "restored 1
    file(s), removed 1"); one file is "1 file", not "1 files"."""
    line = (b'{"v":1,"seq":9,"ts":1732300300.0,"type":"rollback","checkpoint_id":"cp-1",'
            b'"restored_files":1,"safety_checkpoint_id":"cp-4"}')
    assert describe_event(parse_line(line)).endswith(  # type: ignore[arg-type]
        "to cp-1: 1 file put back as it was (safety checkpoint cp-4)")


def test_a_checkpoint_of_one_file_says_1_file() -> None:
    """`tail` said "1 files (first: 1 files)" of a checkpoint of a one-file work tree."""
    line = (b'{"v":1,"seq":2,"ts":1732300300.0,"type":"checkpoint","checkpoint_id":"cp-1",'
            b'"label":"session start","commit":"8a5fd77ce5f3aa","at_seq":1,"files":1,'
            b'"diffstat":{"added":1,"modified":0,"deleted":0,"since":null}}')
    assert describe_event(parse_line(line)).endswith(  # type: ignore[arg-type]
        "at seq 1, 1 file (first: 1 file)")


@pytest.mark.parametrize("raw", [raw for raw in blocks("json") if b'"type":"decision"' not in raw
                                 and b'"type":"thought"' not in raw],
                         ids=lambda raw: raw[30:60].decode())
def test_the_dashboards_history_says_each_documented_event_as_tail_does(
        raw: bytes, tmp_path: Path) -> None:
    """The dashboard's history row of every documented agent-side event is `tail`'s words for
    it, made by the same function from the raw line the dashboard reads back: the two had
    their own near-copies, which said one event two ways (`3 in / 120 out tokens` and `3
    tokens in, 120 out`; a refused call's `refused by the guard` only in `tail`), and before
    that a rollback, a hint and a disobeyed call were their JSON in the dashboard."""
    from supervisor.store.local import LocalStore
    from supervisor.tui.history import HistoryStore

    root = tmp_path / "store"
    events = root / "sessions" / "s1" / "events.jsonl"
    events.parent.mkdir(parents=True)
    events.write_bytes(raw + b"\n")
    history = HistoryStore(LocalStore(root).log("s1"))
    history.append(parse_line(raw), 0)  # type: ignore[arg-type]
    row = history.text(0)  # as the dashboard draws it: read back raw
    assert not row.startswith("{"), row
    line = describe_event(parse_line(raw), width=None)  # type: ignore[arg-type]
    said = [*line.split(maxsplit=3), ""][3]  # after seq, time and type
    assert said.startswith(row.removesuffix("…")) and (row.endswith("…") or said == row), \
        (said, row)


def test_the_checkpoints_list_says_1_file() -> None:
    """`supervisor checkpoints` said "first: 1 files"."""
    from supervisor.cli.checkpoints_cmd import changed_text
    from supervisor.guard.checkpoints.records import CheckpointCommit

    assert changed_text(CheckpointCommit("cp-1", "start", "abc", 0.0, 1, added=1)) == \
        "first: 1 file"
    assert changed_text(CheckpointCommit("cp-1", "start", "abc", 0.0, 3, added=3)) == \
        "first: 3 files"
