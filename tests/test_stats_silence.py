"""`supervisor stats` and the dashboard agree on an idle session's working time: both are the
engine's count up to the agent's last event. `stats` counted up to `idle_gap_s` of the silence
since, as if the agent had worked through it; the engine counts that silence only when the
agent goes on by itself, and none of it when a user's prompt ends it (docs/engine.md), so
counting it now was a guess shown as a fact."""

import json
from pathlib import Path

from supervisor.guard.core import Guard
from supervisor.guard.inspect import session_usage
from supervisor.guard.settings import GuardSettings
from supervisor.guard.state import STATE_FILE
from supervisor.store.follower import Follower
from supervisor.store.local import LocalStore
from supervisor.tui.model import DashboardModel
from tests.conftest import run_cli


class Clock:
    def __init__(self) -> None:
        self.t = 1_000.0

    def __call__(self) -> float:
        return self.t


def _duration(gauges: list[tuple[str, float, float | None, str]]) -> float:
    return next(value for name, value, *_ in gauges if name == "duration_s")


def test_an_idle_sessions_duration_is_the_same_in_stats_and_the_dashboard(
        root: Path, tmp_path: Path) -> None:
    clock = Clock()
    guard = Guard.open(root, "s1", cwd=tmp_path, clock=clock,
                       settings=GuardSettings(checkpoint_every=0))
    guard.start("test-agent", task="deploy")
    for n in range(3):
        verdict = guard.pre_call("bash", {"command": f"echo {n}"})
        clock.t += 30
        guard.post_call(verdict.call_id, str(n), ok=True)
        clock.t += 5
    guard.pre_call("bash", {"command": "make deploy"})  # then nothing: a prompt left open
    guard.journal.save()
    counted = 3 * 35.0

    model, follower = DashboardModel(root), Follower(root)
    model.apply(follower.scan())
    shown = next(g.value for g in model.sessions["s1"].gauges() if g.name == "duration_s")
    assert shown == counted

    store = LocalStore(root)
    for later in (10.0, 3600.0, 86400.0):  # the operator looks after a minute, an hour, a night
        usage = session_usage(store, "s1", clock.t + later)
        assert usage.source == "state" and _duration(usage.gauges) == counted, later
    (root / "sessions" / "s1" / STATE_FILE).unlink()
    usage = session_usage(store, "s1", clock.t + 3600)
    assert usage.source == "replay" and _duration(usage.gauges) == counted

    out = run_cli("stats", "s1", "--root", str(root))
    assert out.returncode == 0, out.stderr
    assert "duration_s is the working time up to the agent's last event" in out.stdout
    assert "at most 15m" in out.stdout or "at most 15 m" in out.stdout, out.stdout
    data = json.loads(run_cli("stats", "s1", "--json", "--root", str(root)).stdout)
    assert data["as_of"] == clock.t and _duration(
        [(g["name"], g["value"], g["limit"], g["action"]) for g in data["limits"]]) == counted


def test_a_vanished_session_is_not_said_to_go_on(root: Path, tmp_path: Path) -> None:
    """A session whose events.jsonl was removed (its guard state left) is `vanished`: `stats`
    said "if the agent goes on by itself…" of it, as of a live one."""
    clock = Clock()
    guard = Guard.open(root, "s1", cwd=tmp_path, clock=clock,
                       settings=GuardSettings(checkpoint_every=0))
    guard.start("test-agent", task="deploy")
    guard.pre_call("bash", {"command": "make deploy"})
    guard.journal.save()
    first = run_cli("stats", "s1", "--root", str(root))  # keeps the summary beside the events
    assert "duration_s is the working time" in first.stdout
    (root / "sessions" / "s1" / "events.jsonl").unlink()
    out = run_cli("stats", "s1", "--root", str(root))
    assert out.returncode == 0 and out.stdout.startswith("session s1: vanished")
    assert "duration_s is the working time" not in out.stdout, out.stdout


def test_a_session_waiting_for_an_operator_is_said_to_count_none_of_it(
        root: Path, tmp_path: Path) -> None:
    """An escalation left unanswered overnight: the engine counts none of the wait (it is the
    operator's), where `stats` said "at most 15 min of it will be"."""
    clock = Clock()
    guard = Guard.open(root, "s1", cwd=tmp_path, clock=clock,
                       settings=GuardSettings(checkpoint_every=0))
    guard.start("test-agent", task="fix the tests")
    for _ in range(12):
        clock.t += 1
        verdict = guard.pre_call("bash", {"command": "pytest -q"})
        if verdict.action == "pause":
            break
        clock.t += 1
        guard.post_call(verdict.call_id, "1 failed", ok=False, error="exit 1")
    assert guard.pending is not None, "the loop escalated"
    guard.journal.save()
    out = run_cli("stats", "s1", "--root", str(root))
    assert "the silence since is not counted: the agent waits for an operator" in out.stdout, \
        out.stdout
    assert "at most" not in out.stdout
