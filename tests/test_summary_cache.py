"""The kept per-session summary (`store.summary_cache`, issue 40): `supervisor sessions` reads
only what is new, and what it shows is always what the events say: events appended after the
summary are folded in, a truncated or replaced file is folded again, and a summary written by
hand (forged, or sealed for another session) is ignored."""

import json
import os
from pathlib import Path

import pytest

from supervisor.store import summary_cache
from supervisor.store.base import Store
from supervisor.store.local import LocalStore
from supervisor.store.paths import session_files
from supervisor.store.writer import event_writer
from tests.conftest import run_cli

START = {"type": "session_start", "agent": "claude-code", "task": "fix the tests",
         "heartbeat_s": None}


def _call(n: int, ok: bool) -> list[dict]:
    return [{"type": "tool_call", "call_id": f"c{n}", "tool": "Bash",
             "args": {"command": "pytest"}},
            {"type": "tool_result", "call_id": f"c{n}", "ok": ok, "output": "1 failed",
             "output_bytes": 8, "output_hash": "h", "error": None if ok else "exit code 1"}]


ESCALATION = {"type": "escalation", "escalation_id": "e1", "level": 3, "reason": "loop",
              "evidence": [1, 2], "options": ["approve", "abort"], "fallback": "abort"}
APPLIED = {"type": "decision_applied", "escalation_id": "e1", "decision_id": "d1",
           "action": "approve", "operator": "ana", "outcome": "approved"}


def _write(root: Path, sid: str, events: list[dict]) -> None:
    with event_writer(root, sid) as writer:
        writer.append_many(events)


def _fresh(root: Path, sid: str) -> object:
    """The whole fold, as `Store.summary` makes it without a kept summary."""
    return Store.summary(LocalStore(root), sid)


def test_the_kept_summary_is_the_whole_fold_and_follows_appended_events(root: Path) -> None:
    _write(root, "s1", [START, *_call(1, False), ESCALATION])
    store = LocalStore(root)
    first = store.summary("s1")
    assert first == _fresh(root, "s1") and first.events == 4 and first.errors == 1
    assert (session_files(root, "s1").dir / "summary.json").is_file()
    _write(root, "s1", [APPLIED, *_call(2, True), {"type": "session_end", "status": "completed",
                                                     "reason": "done"}])
    second = store.summary("s1")
    assert second == _fresh(root, "s1")
    assert (second.events, second.end_status, second.pending) == (8, "completed", {})
    assert second.answers["e1"].operator == "ana" and "d1" in second.handled


def test_an_unchanged_session_is_not_read_again(root: Path, monkeypatch) -> None:
    _write(root, "s1", [START, *_call(1, False)])
    LocalStore(root).summary("s1")
    folds: list[int] = []
    real = summary_cache._fold
    monkeypatch.setattr(summary_cache, "_fold", lambda events, folded, offset, vouch: (
        folds.append(offset), real(events, folded, offset, vouch))[1])
    assert LocalStore(root).summary("s1").events == 3 and folds == []
    _write(root, "s1", _call(2, True))
    size_before = session_files(root, "s1").events.stat().st_size
    assert LocalStore(root).summary("s1").events == 5
    assert len(folds) == 1 and 0 < folds[0] < size_before  # only the new lines were read


def test_a_truncated_or_replaced_file_is_folded_again(root: Path) -> None:
    _write(root, "s1", [START, *_call(1, False), *_call(2, False), ESCALATION])
    store = LocalStore(root)
    assert store.summary("s1").errors == 2
    events = session_files(root, "s1").events
    lines = events.read_bytes().splitlines(keepends=True)
    events.write_bytes(b"".join(lines[:3]))  # truncated in place: same inode, shorter
    assert store.summary("s1") == _fresh(root, "s1")
    assert store.summary("s1").errors == 1 and not store.summary("s1").pending
    # replaced by a file as long, with other events: another inode, other bytes
    other = events.with_name("other")
    other.write_bytes(b"".join(lines[:3]).replace(b'"ok":false', b'"ok":true '))
    os.replace(other, events)
    assert store.summary("s1") == _fresh(root, "s1") and store.summary("s1").errors == 0


def test_a_rewritten_file_of_the_same_inode_is_folded_again(root: Path) -> None:
    _write(root, "s1", [START, *_call(1, False)])
    store = LocalStore(root)
    assert store.summary("s1").errors == 1
    events = session_files(root, "s1").events
    data = events.read_bytes()
    with open(events, "r+b") as handle:  # the same bytes count, in place, then one more line
        handle.write(data.replace(b'"ok":false', b'"ok":true '))
    _write(root, "s1", _call(2, True))
    assert store.summary("s1") == _fresh(root, "s1") and store.summary("s1").errors == 0


def test_a_forged_summary_changes_nothing_shown(root: Path) -> None:
    _write(root, "s1", [START, *_call(1, False), ESCALATION])
    _write(root, "s2", [START])
    store = LocalStore(root)
    truth = store.summary("s1")
    path = session_files(root, "s1").dir / "summary.json"
    seal, body = path.read_bytes().split(b"\n", 1)
    kept = json.loads(body)
    # the agent edits the summary: no pending escalation, ended, no errors
    kept["state"].update(pending={}, errors=0, end_status="completed")
    path.write_bytes(seal + b"\n" + json.dumps(kept).encode())
    assert store.summary("s1") == truth
    # a genuine summary of another session, copied over: sealed for s2, not for s1
    store.summary("s2")
    path.write_bytes((session_files(root, "s2").dir / "summary.json").read_bytes())
    assert store.summary("s1") == truth
    path.write_text("{not json")
    assert store.summary("s1") == truth


@pytest.mark.slow
def test_sessions_shows_the_same_table_from_kept_summaries(root: Path) -> None:
    for n in range(3):
        _write(root, f"s{n}", [START, *_call(1, n % 2 == 0), ESCALATION])
    first = run_cli("sessions", "--json", "--root", str(root))
    assert first.returncode == 0, first.stderr
    assert all((session_files(root, f"s{n}").dir / "summary.json").is_file() for n in range(3))
    second = run_cli("sessions", "--json", "--root", str(root))
    assert second.stdout == first.stdout and len(second.stdout.splitlines()) == 3


def test_the_summary_file_is_private(root: Path) -> None:
    _write(root, "s1", [START])
    summary_cache.summary(root, "s1")
    mode = (session_files(root, "s1").dir / "summary.json").stat().st_mode & 0o777
    assert mode == 0o600


def test_a_summary_kept_by_another_fold_is_rebuilt(root: Path, monkeypatch) -> None:
    _write(root, "s1", [START, *_call(1, False)])
    LocalStore(root).summary("s1")
    path = session_files(root, "s1").dir / "summary.json"
    kept = path.read_bytes()
    monkeypatch.setattr(summary_cache, "VERSION", "another-fold")
    folds: list[int] = []
    real = summary_cache._fold
    monkeypatch.setattr(summary_cache, "_fold", lambda events, folded, offset, vouch: (
        folds.append(offset), real(events, folded, offset, vouch))[1])
    assert LocalStore(root).summary("s1") == _fresh(root, "s1")
    assert folds == [0] and path.read_bytes() != kept  # folded whole, kept anew


def test_a_removed_events_file_is_vanished_in_sessions_and_in_a_fresh_dashboard(
        root: Path) -> None:
    """`supervisor sessions` listed a session whose `events.jsonl` was removed (its folder and
    kept summary left) as `empty`, with no task, where the dashboard that saw it go says
    `vanished`: both now say `vanished`, shown as it was, from `SessionSummary.status`; and a
    dashboard started after the removal says so too. `tail` says why it has nothing to show
    (it printed nothing), and `stats` does not speak of the agent going on. A folder that never
    had events is still `empty`."""
    from supervisor.store.follower import Follower
    from supervisor.tui.model import DashboardModel

    _write(root, "s1", [{**e, "ts": 1_000.0 + n} for n, e in enumerate([START,
                                                                       *_call(1, False)])])
    assert json.loads(run_cli("sessions", "--json", "--root", str(root)).stdout)["status"] \
        in ("running", "idle", "dead")
    _write(root, "s1", [{**e, "ts": 1_010.0 + n} for n, e in enumerate(_call(2, False))])
    session_files(root, "s1").events.unlink()  # call 2 written, never read: not counted
    (session_files(root, "s1").control).write_text("")  # an operator's file stays behind
    row = json.loads(run_cli("sessions", "--json", "--root", str(root)).stdout)
    assert (row["status"], row["task"], row["errors"]) == ("vanished", "fix the tests", 1)
    table = run_cli("sessions", "--root", str(root)).stdout
    assert "vanished" in table and "fix the tests" in table and "empty" not in table
    assert ("note: s1: its events.jsonl was removed; the row is what was read of it before "
            "(anything written after that read is not counted)") in table
    tail = run_cli("tail", "s1", "--root", str(root))  # it printed nothing and exit 0
    assert tail.returncode == 1 and tail.stdout == ""
    assert "its events.jsonl was removed after it was read" in tail.stderr
    stats = run_cli("stats", "s1", "--root", str(root))  # a vanished session will not go on
    assert stats.returncode == 0 and "vanished" in stats.stdout
    assert "duration_s is the working time" not in stats.stdout

    model, follower = DashboardModel(root), Follower(root)  # started after the removal
    model.preview([kept for kept in [LocalStore(root).kept_summary("s1")] if kept])
    model.apply(follower.scan())
    assert model.status("s1", 0.0) == "vanished" and model.sessions["s1"].gone
    assert model.sessions["s1"].gone_what == "events.jsonl"

    session_files(root, "s2").dir.mkdir(mode=0o700)  # a session about to write its first line
    statuses = {r["session"]: r["status"] for r in map(
        json.loads, run_cli("sessions", "--json", "--root", str(root)).stdout.splitlines())}
    assert statuses == {"s1": "vanished", "s2": "empty"}


def test_sessions_fits_an_80_column_terminal_and_a_pipe_gets_everything(root: Path) -> None:
    """At 80 columns `supervisor sessions` wrapped every row onto two lines (the demo's four
    sessions were eight lines, each figure under the wrong column): on a terminal the task,
    then the agent, give way, cut with `…`, and `LAST ACTIVITY` is said `ACTIVE`; the session
    id and the figures never do; a pipe still gets every word."""
    from tests.conftest import run_cli_in_terminal

    task = "make the date parser accept leap days"
    _write(root, "demo-polling", [{**START, "agent": "demo-poll-agent-long", "task": task}])
    out = run_cli_in_terminal("sessions", "--root", str(root), columns=80)
    lines = out.splitlines()
    assert len(lines) == 2 and all(len(line) <= 80 for line in lines), out
    assert lines[1].startswith("demo-polling  ") and "…" in lines[1]
    assert lines[0].split() == ["SESSION", "AGENT", "TASK", "STATUS", "LEVEL", "EVENTS",
                                "ERRORS", "PENDING", "ACTIVE"]
    piped = run_cli("sessions", "--root", str(root)).stdout
    assert task in piped and "demo-poll-agent-long" in piped and "…" not in piped
    assert "LAST ACTIVITY" in piped


def test_last_activity_is_the_agents_own_as_on_the_dashboard(root: Path) -> None:
    """`LAST ACTIVITY` was the session's latest event of any kind, so an offline `supervisor
    rollback` (written on the agent's behalf, `by`) made an agent gone for two hours read
    "1m ago"; the dashboard's column is the agent's own last event (`last_seen_ts`)."""
    import time

    now = time.time()
    _write(root, "s1", [{**START, "ts": now - 7200}, {**_call(1, True)[0], "ts": now - 7200}])
    _write(root, "s1", [{"type": "rollback", "checkpoint_id": "cp-1", "restored_files": 1,
                         "safety_checkpoint_id": "cp-2", "by": "supervisor rollback",
                         "ts": now - 60}])
    row = run_cli("sessions", "--root", str(root)).stdout.splitlines()[1]
    assert row.endswith("2h ago"), row
