"""Pruning: the sessions that are over and old enough leave the store, through the real
command line; nothing live, waiting, dead or still run goes, and what goes is said."""

import time
from pathlib import Path

import pytest

from supervisor.host.records import RunRecord, save
from supervisor.operator import prune
from supervisor.store.local import LocalStore
from supervisor.store.paths import session_dir
from supervisor.store.writer import event_writer
from tests.conftest import run_cli

DAY = 86_400.0


def session(root: Path, sid: str, age_days: float, *, end: str | None = "completed",
            escalation: bool = False) -> None:
    """A session whose events are `age_days` old (by the clock now), ended as `end`."""
    ts = time.time() - age_days * DAY
    events: list[dict] = [{"type": "session_start", "agent": "mini", "task": "t", "cwd": "/w",
                           "pid": 1, "policy": None, "heartbeat_s": None, "ts": ts}]
    if escalation:
        events.append({"type": "escalation", "escalation_id": "e1", "level": 3,
                       "reason": "loop", "evidence": [1], "options": ["approve", "abort"],
                       "deadline_ts": None, "fallback": "abort", "ts": ts})
    if end is not None:
        events.append({"type": "session_end", "status": end, "reason": None, "ts": ts})
    with event_writer(root, sid) as w:
        w.append_many(events)


@pytest.mark.slow
def test_prune_lists_then_removes_only_old_ended_sessions(root: Path) -> None:
    session(root, "old-done", 10)
    session(root, "old-failed", 30, end="failed")
    session(root, "new-done", 1)
    session(root, "old-dead", 10, end=None)  # no session_end: its pid 1 is not its agent
    session(root, "old-waiting", 10, end=None, escalation=True)
    session(root, "old-run", 12)
    save(root, RunRecord(session="old-run", agent="cmd", command=["bash"], cwd="/w",
                         socket="s", tmux_session="t"))

    listed = run_cli("sessions", "--prune", "7")
    assert listed.returncode == 0, listed.stderr
    assert "2 ended sessions 7 days old or more would be removed (add --yes" in listed.stdout
    assert "  old-failed (failed, last event 30d ago, 2 events)\n  old-done (completed" \
        in listed.stdout  # the oldest first
    assert "kept old-run: supervisor run still remembers its run" in listed.stdout
    assert all(session_dir(root, s).is_dir() for s in ("old-done", "old-failed"))

    removed = run_cli("sessions", "--prune", "7", "--yes")
    assert removed.returncode == 0, removed.stderr
    lines = removed.stdout.splitlines()
    assert any(line.startswith("removed old-done (completed") for line in lines)
    assert any(line.startswith("removed old-failed (failed") for line in lines)
    assert lines[-1] == "2 removed"
    assert LocalStore(root).session_ids() == ["new-done", "old-dead", "old-run", "old-waiting"]
    assert not [p for p in (root / "sessions").iterdir() if p.name.startswith(".")]

    again = run_cli("sessions", "--prune", "7", "--yes")
    assert "no ended session 7 days old or more" in again.stdout
    every = run_cli("sessions", "--prune", "0", "--yes")
    assert "removed new-done (completed" in every.stdout
    assert LocalStore(root).session_ids() == ["old-dead", "old-run", "old-waiting"]


@pytest.mark.slow
def test_prune_refuses_a_recording_and_a_bad_age(tmp_path: Path) -> None:
    recordings = tmp_path / "rec"
    session(recordings, "old-done", 10)
    (recordings / "RECORDINGS").write_text("recordings\n")
    refused = run_cli("sessions", "--root", str(recordings), "--prune", "1", "--yes")
    assert refused.returncode != 0 and "holds recordings" in refused.stderr
    assert session_dir(recordings, "old-done").is_dir()
    bad = run_cli("sessions", "--root", str(recordings), "--prune", "-3")
    assert bad.returncode == 2 and "not a number of days" in bad.stderr
    assert run_cli("sessions", "--yes").returncode != 0


def test_a_session_that_changed_since_it_was_listed_stays(root: Path) -> None:
    """Judged again right before removal: an agent that wrote in the meantime keeps it."""
    session(root, "old-done", 10)
    store = LocalStore(root)
    now = time.time()
    chosen, _ = prune.candidates(store.summaries(), now, 7 * DAY)
    assert [c.session_id for c in chosen] == ["old-done"]
    with event_writer(root, "old-done") as w:  # the same id started again
        w.append({"type": "session_start", "agent": "mini", "task": "again", "cwd": "/w",
                  "pid": 1, "policy": None, "heartbeat_s": None})
    done = prune.prune(store, chosen, time.time(), 7 * DAY)
    assert not done.removed and done.kept[0][0] == "old-done"
    assert session_dir(root, "old-done").is_dir()
