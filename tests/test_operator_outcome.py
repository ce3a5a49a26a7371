"""A decision the agent side applied is told alike by every view: the dashboard's follow-up
(the escalation prompt's box and the commands' notifications), the CLI and the web page, in
the words of `operator.outcome`: the guard's outcome, the escalation it answered, and what the
agent still waits for. They used to differ: the dashboard put the action first, the CLI a
kind's note of its own (`applied: guidance delivered, and the agent resumed (esc-1 answered)`,
said from what was pending when it was sent, not from what the guard did), and the web page
never said that the agent still waits."""

from pathlib import Path

import pytest
from tui_support import FROZEN_NOW, call, escalation, start, write_events

from supervisor.cli.followup import report_outcome
from supervisor.store.follower import Follower
from supervisor.store.local import LocalStore
from supervisor.tui.followup import FollowUp, follow_state
from supervisor.web.queue import LiveQueue

WAITS = ("the agent still waits on escalation esc-1 (exact_repeat: make 5 times): answer it "
         "(`supervisor answer s1 ...` or `e` in the dashboard)")


@pytest.mark.parametrize(("answered", "said"), [
    ("esc-1", "applied: guidance delivered to the agent (esc-1 answered)"),
    (None, f"applied: guidance delivered to the agent — but {WAITS}"),  # a command, not the answer
])
def test_an_applied_decision_is_told_alike_by_every_view(
        root: Path, capsys: pytest.CaptureFixture[str], answered: str | None, said: str) -> None:
    write_events(root, "s1", [start(), *call(1), escalation("esc-1")])
    store = LocalStore(root)
    after = store.end_cursor("s1")
    write_events(root, "s1", [{"type": "decision_applied", "escalation_id": answered,
                               "decision_id": "d-1", "action": "guidance",
                               "outcome": "guidance delivered to the agent"}])
    assert report_outcome(store, "s1", "d-1", after, 5.0) == 0
    assert capsys.readouterr().out.splitlines()[-1] == said
    web = LiveQueue(store)
    web.model.apply(Follower(root).scan())
    followed = web.snapshot(FROZEN_NOW, decisions=[("s1", "d-1")])["decisions"]["s1/d-1"]
    assert followed == {"status": "applied", "result": said}
    follow = FollowUp("s1", "d-1", "guidance", FROZEN_NOW - 1, agent_waits=True)
    assert follow_state(web.model.sessions["s1"], follow, FROZEN_NOW) == ("applied", said)
