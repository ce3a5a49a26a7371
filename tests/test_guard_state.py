"""The guard's typed state and its parts on their own (issue 29): `GuardState` round trips
through `state.json` in the format the guard always wrote, a session saved by the guard before
`GuardState` carries on with this one, and the operator desk and the call gate work on a
session journal with no `Guard` around them. Real files, real sealed decisions."""

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from supervisor.engine.detectors.blind_search import BlindSearch
from supervisor.guard.core import Guard
from supervisor.guard.desk import OperatorDesk
from supervisor.guard.gate import CallGate
from supervisor.guard.journal import SessionJournal
from supervisor.guard.settings import GuardSettings
from supervisor.guard.state import STATE_FILE, GuardState, StateFile
from supervisor.operator.send import send_decision
from tests.guard_helpers import events, of_type

OLD_SESSION = Path(__file__).parent / "data" / "guard_state_v1"
"""A session in flight as the guard wrote it when its state was a dict (see its README.md)."""

OLD_KEYS = {
    "v", "engine", "control_offset", "log_offset", "seen_decisions", "logged_decisions",
    "decided", "resolutions", "pending", "rollback_retry", "task", "tasks_started", "ended",
    "escalations", "actions", "since_checkpoint", "resets", "calls", "last_seq", "started",
    "meta",
}
"""The keys of a fresh state as the guard always saved it (its former `new_state()`)."""


def _busy_state() -> GuardState:
    """A state with a value other than the default in every attribute."""
    return GuardState(
        engine={"v": 2, "state": {"level": 1}}, control_offset=120, log_offset=4096,
        seen_decisions=["d-1"], logged_decisions=["d-2"], decided={"esc-1": "d-1"},
        resolutions={"esc-1": {"action": "allow", "level": 0}},
        pending={"escalation_id": "esc-2", "options": ["approve"], "signature": None},
        rollback_retry={"checkpoint_id": "cp-3", "attempt": 1, "safety_id": None},
        task={"task_id": "t2", "title": "fix it"}, tasks_started=2, ended="completed",
        escalations=2, actions=9, since_checkpoint=4, resets=1, calls={"c9": 31}, last_seq=33,
        started=True, meta={"agent": "a", "cwd": "/w"},
        plan={"decision_id": "d-3", "why": None, "steps": []},
        edit_guidance={"calls": {}, "paths": {}}, extra={"from_a_newer_guard": [1, 2]},
    )


def test_a_state_round_trips_through_its_json_unchanged() -> None:
    state = _busy_state()
    saved = json.loads(json.dumps(state.to_json()))
    assert GuardState.from_json(saved) == state
    assert saved["v"] == 1 and saved["from_a_newer_guard"] == [1, 2]  # unknown keys kept
    assert "extra" not in saved
    assert GuardState.from_json(GuardState().to_json()) == GuardState()


def test_a_fresh_state_saves_the_keys_the_guard_always_saved() -> None:
    assert set(GuardState().to_json()) == OLD_KEYS  # plan and edit_guidance once they exist
    assert set(_busy_state().to_json()) == OLD_KEYS | {"plan", "edit_guidance",
                                                       "from_a_newer_guard"}


def test_missing_keys_get_their_defaults_and_no_default_is_shared() -> None:
    state = GuardState.from_json({"v": 1, "actions": 5, "meta": {"agent": "x"}})
    assert state.actions == 5 and state.meta == {"agent": "x"}
    assert state.pending is None and state.log_offset is None and state.started is False
    state.seen_decisions.append("d-1")
    state.calls["c1"] = 1
    assert GuardState().seen_decisions == [] and GuardState().calls == {}


def test_the_state_file_saves_and_loads_a_state(tmp_path: Path) -> None:
    file = StateFile(tmp_path)
    assert file.load() == GuardState()  # none yet: a fresh one
    file.save(_busy_state())
    assert StateFile(tmp_path).load() == _busy_state()
    (tmp_path / STATE_FILE).write_text(json.dumps({"v": 999, "actions": 3}))
    assert StateFile(tmp_path).load() == GuardState()  # another version: set aside
    assert (tmp_path / "state.json.bad").exists()


def _old_session(root: Path) -> Path:
    session = root / "sessions" / "old-1"
    session.mkdir(parents=True)
    for name in ("state.json", "events.jsonl", "control.jsonl"):
        shutil.copy(OLD_SESSION / name, session / name)
    return session


def _resumed_clock(saved: dict[str, Any], after_s: float) -> Callable[[], float]:
    """A clock that reads `after_s` seconds after the recorded session's last event, and runs
    on from there: the test does not depend on how long ago the recording was made."""
    shift = time.time() - (saved["engine"]["state"]["last_ts"] + after_s)
    return lambda: time.time() - shift


def test_a_session_saved_before_guard_state_loads_and_carries_on(root: Path) -> None:
    session = _old_session(root)
    old = json.loads((session / STATE_FILE).read_text())
    with Guard.open(root, "old-1", clock=_resumed_clock(old, 60.0)) as guard:
        assert guard.started and guard.ended is None
        assert guard.pending is not None and guard.pending["escalation_id"] == "esc-2"
        assert guard.state.task == {"task_id": "t2", "title": "read the parser"}
        assert guard.state.decided == {"esc-1": "d-approve"}
        assert guard.state.calls == {"c3": 14} and guard.state.actions == 3
        assert not guard.settings.checkpoints  # the session's own settings, from its state
        resumed = guard.engine.snapshot()  # the engine resumed where it was (the fields and
        kept = {k: resumed["state"][k] for k in old["engine"]["state"]}  # detectors a newer
        detectors = resumed["policy"]["detectors"]  # one adds aside, at their defaults)
        assert set(old["engine"]["policy"]["detectors"]) < set(detectors)
        policy = {**resumed["policy"], "detectors": {
            k: detectors[k] for k in old["engine"]["policy"]["detectors"]}}
        memory = kept["memory"]
        kept["memory"] = {k: memory[k] for k in old["engine"]["state"]["memory"]}
        assert {**resumed, "state": kept, "policy": policy} == old["engine"]
        assert detectors["blind_search"] == dict(BlindSearch.defaults)
        assert memory["blind_search"] == BlindSearch().memory()
        assert guard.pre_call("Bash", {"command": "ls"}).action == "pause"  # still held
        send_decision(root, "old-1", "approve", escalation_id="esc-2", decision_id="d-go")
        verdict = guard.wait(timeout=10)
        assert (verdict.action, verdict.escalation_id) == ("allow", "esc-2")
        assert guard.post_call("c3", "def parse(): ...") == []  # the call that was in flight
        assert guard.next_task() == ("Step 2 of 2: fix the bug\nWhen this step is done, say "
                                     "so and end your turn; the next step will follow.")
        assert guard.pre_call("Bash", {"command": "pytest -q"}).action == "allow"
    evs = events(root, "old-1")
    assert [e["seq"] for e in evs] == list(range(1, len(evs) + 1))  # one log, carried on
    assert [e["decision_id"] for e in of_type(evs, "decision_applied")] == [
        "d-split", "d-approve", "d-go"]  # the old decisions were not applied again
    assert [e["task_id"] for e in of_type(evs, "task_start")] == ["t1", "t2", "t3"]
    saved = json.loads((session / STATE_FILE).read_text())
    # what the older guard reads: the same keys, version 1 (and the failure memory's part, which
    # this guard writes once it has one, and the hold's seal: keys an older guard keeps as
    # keys it does not know)
    assert set(old) <= set(saved) <= set(old) | {"memory", "hold_seal"}
    assert saved["v"] == 1 and saved["pending"] is None and list(saved["calls"]) == ["c4"]
    assert saved["task"] == {"task_id": "t3", "title": "fix the bug"}
    assert [s["status"] for s in saved["plan"]["steps"]] == ["done", "current"]


def test_the_desk_and_the_gate_work_on_a_journal_without_a_guard(root: Path) -> None:
    journal = SessionJournal(root, "s1", settings=GuardSettings(checkpoints=False))
    desk = OperatorDesk(journal)
    with journal.step():
        journal.start("agent", "the task", None, None, None)
        journal.escalate("pause", "a look", [], None, None, 3)
    send_decision(root, "s1", "guidance", escalation_id="esc-1", text="use the fixture",
                  decision_id="d-1")
    with journal.step():
        [note] = desk.consume(journal.clock(), "c1")
    assert (note.action, note.message) == ("block", "Operator guidance: use the fixture")
    assert (note.escalation_id, note.decision) == ("esc-1", "guidance")
    assert journal.pending is None and journal.state.decided == {"esc-1": "d-1"}
    send_decision(root, "s1", "guidance", text="and keep it short", decision_id="d-2")
    gate = CallGate(journal, desk)
    with journal.step():  # the gate consumes the command before the call, and merges it
        verdict = gate.pre_call("Bash", {"command": "ls"}, None, None)
    assert (verdict.action, verdict.call_id) == ("nudge", "c1")
    assert verdict.message == "Operator guidance: and keep it short"
    journal.close()
    evs = events(root, "s1")
    assert [e["decision_id"] for e in of_type(evs, "decision_applied")] == ["d-1", "d-2"]
    assert of_type(evs, "tool_call")[0]["call_id"] == "c1"
    saved = json.loads((root / "sessions" / "s1" / STATE_FILE).read_text())
    assert saved["seen_decisions"] == ["d-1", "d-2"] and saved["actions"] == 1


def test_the_wait_for_an_operator_and_for_the_next_prompt_is_not_working_time(
        root: Path) -> None:
    """`duration_s` counts the agent's working time: a pause held for hours, and a night
    between two prompts, add nothing (the guard lets the engine see its escalation)."""
    now = [1_000.0]
    with Guard.open(root, "s1", settings=GuardSettings(checkpoints=False),
                    clock=lambda: now[0]) as guard:
        guard.start("agent", task="port the parser")
        guard.message("user", "port the parser")
        now[0] += 20
        assert guard.pre_call("Bash", {"command": "ls"}, call_id="c1").action == "allow"
        now[0] += 10
        guard.post_call("c1", "parser.py")
        guard.pause("a look")
        now[0] += 5 * 3600
        send_decision(root, "s1", "approve", escalation_id="esc-1", decision_id="d-1")
        guard.poll()
        now[0] += 12 * 3600
        guard.message("user", "and now the tests")
        now[0] += 30
        assert guard.pre_call("Bash", {"command": "pytest"}, call_id="c2").action == "allow"
        duration = next(g.value for g in guard.gauges() if g.name == "duration_s")
    assert duration == 60.0
