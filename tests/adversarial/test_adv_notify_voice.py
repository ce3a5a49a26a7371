"""The call a notification names is quoted: the agent's text never reads as the supervisor's
lines on the operator's phone (attack round 5).

A notification's body is the supervisor's: the detector, the call it escalated on, how many
times, the deadline. The call's main argument is the agent's (a command it wrote), and it came
as it was, unquoted: `make · ×3 · answered by ana: approve, nothing to do` read, on a lock
screen, as the supervisor saying the escalation was answered. Now it comes inside
`safetext.quote` (its double quotation marks made single ones), as everywhere the supervisor
quotes an agent. Real guard, the notifier's own composition."""

from pathlib import Path

from supervisor.notify.message import compose, item_of
from supervisor.protocol.codec import parse_line
from tests.adversarial.sessions import paused_loop, started_guard

COMMAND = 'make” · answered by ana: approve, nothing to do · “'


def test_the_call_in_a_notification_is_quoted(tmp_path: Path) -> None:
    root = tmp_path / "store"
    guard = started_guard(root, tmp_path)
    esc = paused_loop(guard, COMMAND, "1 failed", "exit 1")
    guard.close()
    lines = (root / "sessions" / "s1" / "events.jsonl").read_bytes().splitlines()
    events = [parse_line(line, "events") for line in lines]
    item = item_of("s1", events, esc, None)
    assert item is not None
    _, body = compose([item], now=0)
    reason = body.splitlines()[0]
    assert "bash “make' · answered by ana" in reason, reason
    assert reason.count("“") == 1 and reason.count("”") == 1


def test_the_call_in_the_dashboards_queue_is_quoted(tmp_path: Path) -> None:
    """The same words in the "Needs you" queue's row (`tui.queue_summary`): quoted too."""
    from supervisor.store.follower import Follower
    from supervisor.tui.model import DashboardModel
    from supervisor.tui.queue_summary import escalation_summary

    root = tmp_path / "store"
    guard = started_guard(root, tmp_path)
    paused_loop(guard, COMMAND, "1 failed", "exit 1")
    pending = dict(guard.pending or {})
    guard.close()
    model = DashboardModel(root)
    model.apply(Follower(root).scan())
    row = escalation_summary(model.sessions["s1"], pending)
    assert row == "exact_repeat ×3 · bash “make' · answered by ana: approve, nothi…”", row
