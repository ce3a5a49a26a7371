"""The dashboard's UI-free model: folding batches, gauges, outcomes, queue, resets, history."""

import subprocess
import sys
from pathlib import Path

from tui_support import (
    FROZEN_NOW,
    HOSTILE,
    call,
    checkpoint,
    escalated_session,
    escalation,
    start,
    write_events,
)

from supervisor.store.follower import Follower, SessionBatch
from supervisor.store.local import LocalStore
from supervisor.tui.history import HistoryStore, recent_steps
from supervisor.tui.model import DashboardModel


def _model(root: Path) -> tuple[DashboardModel, Follower]:
    model, follower = DashboardModel(root), Follower(root)
    model.apply(follower.scan())
    return model, follower


def test_model_module_does_not_import_textual() -> None:
    code = ("import sys; import supervisor.tui.model, supervisor.tui.history, "
            "supervisor.store.follower; print('textual' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent.parent, check=True)
    assert out.stdout.strip() == "False"


def test_fold_a_session(root: Path) -> None:
    escalated_session(root)
    write_events(root, "s1", [
        {"type": "limit", "name": "tool_calls", "value": 9, "limit": 10, "action": "stop"},
        {"type": "usage", "input_tokens": 100, "output_tokens": 20, "cost_usd": 0.5},
    ])
    model, _ = _model(root)
    st = model.sessions["s1"]
    assert len(st.history) == st.summary.events == 13
    assert [d.detector for d in st.detections] == ["exact_repeat"]
    assert [c.checkpoint_id for c in st.checkpoints] == ["cp-1", "cp-2"]
    assert st.checkpoint_files("cp-1") == ["a.py", "b.py"]
    gauges = {g.name: g for g in st.gauges()}
    assert gauges["tool_calls"].value == 9 and gauges["tool_calls"].action == "stop"
    assert gauges["errors_per_session"].value == 2  # from the policy, value computed
    assert gauges["errors_per_session"].limit == 5
    assert gauges["iterations_per_session"].value == 3
    assert st.tokens == 120 and st.cost_usd == 0.5
    calls, errors = st.rate_series(FROZEN_NOW)
    assert sum(calls) == 3 and sum(errors) == 2
    assert [e["escalation_id"] for _, e in model.queue(FROZEN_NOW)] == ["esc-1"]


def test_decision_outcomes_are_matched_by_id(root: Path) -> None:
    escalated_session(root)
    model, follower = _model(root)
    (root / "sessions" / "s1" / "control.jsonl").write_text(
        '{"v":1,"seq":1,"ts":1,"type":"decision","decision_id":"d-1","escalation_id":"esc-1",'
        '"action":"approve","text":null,"checkpoint_id":null,"operator":"a"}\n'
        '{"v":1,"seq":2,"ts":2,"type":"decision","decision_id":"d-2","escalation_id":"esc-1",'
        '"action":"skip","text":null,"checkpoint_id":null,"operator":"b"}\n')
    model.apply(follower.scan())
    st = model.sessions["s1"]
    assert {k: v.state for k, v in st.outcomes.items()} == {"d-1": "sent", "d-2": "sent"}
    write_events(root, "s1", [
        {"type": "decision_applied", "escalation_id": "esc-1", "decision_id": "d-1",
         "action": "approve", "outcome": "ok"},
        {"type": "decision_ignored", "decision_id": "d-2", "reason": "duplicate"},
    ])
    changes = model.apply(follower.scan())
    assert changes.sessions == {"s1"} and not changes.new_escalations
    assert st.outcomes["d-1"].state == "applied" and st.outcomes["d-2"].detail == "duplicate"
    assert model.queue(FROZEN_NOW) == []


def test_a_decision_sent_from_here_is_sent_before_it_is_read_back(root: Path) -> None:
    """`record_sent`: the dashboard's own answer counts at once (a second answer is refused
    before the follower reads the line back), and reading it back does not count it twice."""
    from supervisor.operator.refusals import answer_refusal

    escalated_session(root)
    model, follower = _model(root)
    st = model.sessions["s1"]
    version = st.version
    assert answer_refusal(st.summary, "esc-1", "skip", FROZEN_NOW, st.unread()) is None
    st.record_sent("d-1", "approve", "esc-1", "alice\x1b[31m")
    assert st.version > version
    assert [(u.decision_id, u.action, u.escalation_id) for u in st.unread()] == [
        ("d-1", "approve", "esc-1")]
    assert st.outcomes["d-1"].operator == "alice"  # cleaned as a read-back line is
    assert answer_refusal(st.summary, "esc-1", "skip", FROZEN_NOW, st.unread()) is not None
    (root / "sessions" / "s1" / "control.jsonl").write_text(
        '{"v":1,"seq":1,"ts":1,"type":"decision","decision_id":"d-1","escalation_id":"esc-1",'
        '"action":"approve","text":null,"checkpoint_id":null,"operator":"alice"}\n')
    model.apply(follower.scan())
    assert list(st.outcomes) == ["d-1"] and len(st.unread()) == 1


def test_new_escalations_appear_and_vanish(root: Path) -> None:
    write_events(root, "s1", [start()])
    model, follower = _model(root)
    write_events(root, "s1", [escalation("e9")])
    write_events(root, "s2", [start()])
    changes = model.apply(follower.scan())
    assert [(s, e["escalation_id"]) for s, e in changes.new_escalations] == [("s1", "e9")]
    assert changes.appeared == ["s2"]
    import shutil

    shutil.rmtree(root / "sessions" / "s1")
    changes = model.apply(follower.scan())
    assert changes.vanished == ["s1"] and model.sessions["s1"].gone
    assert model.queue(FROZEN_NOW) == []


def test_a_deleted_events_file_is_a_vanished_session_not_an_empty_one(root: Path) -> None:
    """The folder stays but its `events.jsonl` is removed: the session is shown as it was,
    marked vanished (it read `empty`, no task, as if the agent had written nothing), and its
    escalation leaves the queue; a new file under the name is read from its start."""
    write_events(root, "s1", [start(task="refactor"), *call(1), escalation("e1")])
    model, follower = _model(root)
    assert [sid for sid, _ in model.queue(FROZEN_NOW)] == ["s1"]
    (root / "sessions" / "s1" / "events.jsonl").unlink()
    changes = model.apply(follower.scan())
    st = model.sessions["s1"]
    assert changes.vanished == ["s1"] and st.gone and st.gone_what == "events.jsonl"
    assert model.status("s1", FROZEN_NOW) == "vanished"
    assert st.summary.task == "refactor" and st.summary.tool_calls == 1
    assert model.queue(FROZEN_NOW) == []
    write_events(root, "s1", [start(task="again")])
    model.apply(follower.scan())
    assert not st.gone and st.summary.task == "again" and st.summary.tool_calls == 0


def test_truncated_file_resets_the_session(root: Path) -> None:
    write_events(root, "s1", [start(), *call(1), *call(2)])
    model, follower = _model(root)
    path = root / "sessions" / "s1" / "events.jsonl"
    path.write_bytes(path.read_bytes().splitlines(keepends=True)[0])
    model.apply(follower.scan())
    st = model.sessions["s1"]
    assert len(st.history) == 1 and st.summary.events == 1 and st.summary.tool_calls == 0


def test_bad_lines_are_kept_with_offsets_and_cleaned(root: Path) -> None:
    write_events(root, "s1", [start()])
    path = root / "sessions" / "s1" / "events.jsonl"
    size = path.stat().st_size
    with path.open("ab") as f:
        f.write(b"\x1b]52;c;evil\x07 not json\n")
    model, _ = _model(root)
    bad = model.sessions["s1"].bad_lines
    assert [(b.file, b.offset) for b in bad] == [("events.jsonl", size)]
    assert "\x1b" not in bad[0].preview and "\x07" not in bad[0].preview
    assert model.sessions["s1"].summary.bad_lines == 1


def test_history_store_is_compact_searchable_and_clean() -> None:
    store = HistoryStore()
    for i in range(1, 1001):
        store.append_row(i * 2, float(i), "tool_call", f"bash step {i} {HOSTILE}")
    assert len(store) == 1000
    assert store.index_of_seq(1000) == 499 and store.index_of_seq(1001) is None
    assert store.search("step 500 ") == 499
    assert store.search("step 10 ", 600) == 9  # wraps around
    assert store.search("step 2 ", 5, backwards=True) == 1
    assert len(store.matches("step 99")) == 11
    row = store.row(0)
    assert "[bold red]pwned[/]" in row.text  # markup kept as literal text...
    assert not any(ch in row.text for ch in "\x1b\x07\u202e\x9b")  # ...controls removed
    assert store.nbytes() / len(store) < 600


def test_history_rows_are_read_back_from_the_file(root: Path) -> None:
    write_events(root, "s1", [start(task=HOSTILE), *call(1, cmd="needle here"), *call(2)])
    model, _ = _model(root)
    store = model.sessions["s1"].history
    assert store.nbytes() / len(store) < 64  # nothing but the index until rows are drawn
    assert "needle here" in store.row(1).text and store.row(1).type == "tool_call"
    assert "[bold red]pwned[/]" in store.row(0).text
    assert not any(ch in store.row(0).text for ch in "\x1b\x07\u202e\x9b")
    assert store.matches("needle") == [1]
    assert store.matches("TOOL_RESULT") == [2, 4]
    assert store.search("needle", 3) == 1  # wraps around


def test_recent_steps_show_the_calls_the_supervisor_refused(root: Path) -> None:
    """A blocked call has no result: "Recent steps" showed a row of calls as if they had run
    (the demo's looping agent refused at every call). Its refusal is shown beside it; the
    verdicts that let a call run are not."""
    blocked = [{"type": "tool_call", "call_id": f"b{n}", "tool": "bash",
                "args": {"cmd": "pytest -q"}} for n in range(2)]
    write_events(root, "s1", [
        start(), call(1)[0],
        {"type": "verdict", "call_id": "c1", "action": "allow", "level": 0},
        call(1)[1],
        blocked[0], {"type": "verdict", "call_id": "b0", "action": "block", "level": 2,
                     "message": "Blocked: this exact call already ran"},
        blocked[1], {"type": "verdict", "call_id": "b1", "action": "pause", "level": 3,
                     "message": "Paused: this exact call already ran"},
        escalation(evidence=[2, 5])])
    model, _ = _model(root)
    st = model.sessions["s1"]
    steps = recent_steps(st.history, 8, before_seq=st.pending()[0]["seq"])
    assert [(row.seq, row.type) for row in steps] == [
        (2, "tool_call"), (4, "tool_result"), (5, "tool_call"), (6, "verdict"),
        (7, "tool_call"), (8, "verdict")]
    assert steps[3].text.startswith("block (level 2) [b0] Blocked: this exact call")
    assert steps[5].text.startswith("pause (level 3) [b1] Paused")
    assert [row.seq for row in recent_steps(st.history, 3, before_seq=9)] == [6, 7, 8]


def test_history_search_finds_what_json_escapes_and_any_case(root: Path) -> None:
    """The search found its candidates in the stored lines, byte for byte: a quote, a
    backslash or a newline (stored escaped) and a non-ASCII letter in another case (the bytes
    fold ASCII only) were never found, though the row shows them. A word is now looked for by
    its longest part stored as it is; the shown text decides, in any case."""
    write_events(root, "s1", [start(), *call(1),
                              {"type": "message", "role": "assistant",
                               "text": 'He said "no" to C:\\Temp\nthen Ä CAFÉ 日本'},
                              *call(2)])
    model, _ = _model(root)
    store = model.sessions["s1"].history
    said = 3  # session_start, call 1 and its result, then the message
    assert store.matches('"no"') == [said]
    assert store.matches('said "no" to c:\\temp') == [said]
    assert store.matches("café") == [said] and store.matches("ä") == [said]
    assert store.matches("Ä café") == [said]
    assert store.matches("日本") == [said] and store.matches("東京") == []
    assert store.matches('"yes"') == [] and store.matches("ö") == []


def test_gone_batch_for_unknown_session_is_ignored() -> None:
    model = DashboardModel()
    changes = model.apply([SessionBatch("ghost", "events", gone=True)])
    assert model.sessions == {} and changes.vanished == []


def test_checkpoint_without_changed_files_is_unknown(root: Path) -> None:
    write_events(root, "s1", [start(), checkpoint("cp-1", 1)])
    model, _ = _model(root)
    assert model.sessions["s1"].checkpoint_files("cp-1") is None


def test_what_a_rollback_throws_away_comes_from_the_guards_repository(root: Path,
                                                                      tmp_path: Path) -> None:
    from supervisor.guard.checkpoints import CheckpointStore
    from supervisor.tui.checkpoint_changes import files_since, patch_since

    work = tmp_path / "work"
    work.mkdir()
    (work / "a.py").write_text("a = 1\n")
    (work / "gone.py").write_text("x = 1\n")
    write_events(root, "s1", [start(cwd=str(work))])
    git_dir = root / "sessions" / "s1" / "checkpoints.git"
    cp = CheckpointStore(git_dir, work, exclude_paths=[root]).create("before")
    write_events(root, "s1", [checkpoint(cp.checkpoint_id, 1)])
    (work / "a.py").write_text("a = 2\n")
    (work / "new.py").write_text("n = 1\n")
    (work / "gone.py").unlink()
    model, _ = _model(root)
    st = model.sessions["s1"]
    since = files_since(LocalStore(root), st, cp.checkpoint_id)
    assert since.exact and since.files == ["+ new.py", "~ a.py", "- gone.py"]
    patch = patch_since(LocalStore(root), st, cp.checkpoint_id)
    assert patch.text is not None and "-a = 1\n+a = 2" in patch.text
    assert "+n = 1" in patch.text and "-x = 1" in patch.text
    missing = files_since(LocalStore(root), st, "no-such-checkpoint")
    assert not missing.exact and missing.files is None
    assert patch_since(LocalStore(root), st, "cp-9").text is None


def test_without_a_repository_later_checkpoints_say_what_a_rollback_undoes(root: Path) -> None:
    from supervisor.tui.checkpoint_changes import files_since, patch_since

    write_events(root, "s1", [start(cwd="/nowhere"), checkpoint("cp-1", 1, ["a.py"]),
                              checkpoint("cp-2", 2, ["b.py", "a.py"]),
                              checkpoint("cp-3", 3, ["c.py"])])
    model, _ = _model(root)
    st = model.sessions["s1"]
    since = files_since(LocalStore(root), st, "cp-1")
    assert not since.exact and since.files == ["~ a.py", "~ b.py", "~ c.py"]
    assert files_since(LocalStore(root), st, "cp-3").files == []
    write_events(root, "s1", [checkpoint("cp-4", 4)])  # says nothing: unknown from cp-1 on
    model, _ = _model(root)
    assert files_since(LocalStore(root), model.sessions["s1"], "cp-1").files is None
    patch = patch_since(LocalStore(root), model.sessions["s1"], "cp-1")
    assert patch.text is None and "no checkpoint repository" in patch.reason


def test_gauges_use_the_values_the_guard_reported(root: Path) -> None:
    write_events(root, "g1", [
        {"type": "session_start", "agent": "a",
         "policy": {"limits": {"consecutive_tool_calls": {"limit": 150, "action": "pause"},
                               "errors_per_session": {"limit": 200, "action": "pause"}}}},
        {"type": "verdict", "call_id": "c1", "action": "allow", "level": 0,
         "gauges": {"consecutive_tool_calls": 7, "errors_per_session": 2}},
        {"type": "verdict", "call_id": "c2", "action": "allow", "level": 0,
         "gauges": {"consecutive_tool_calls": 8, "bogus": "x"}},
    ])
    model, _ = _model(root)
    gauges = {g.name: g for g in model.sessions["g1"].gauges()}
    assert gauges["consecutive_tool_calls"].value == 7.0
    assert gauges["errors_per_session"].value == 2.0
    # a gauge that is no number makes its verdict a bad line, shown with the reason
    assert "gauges.bogus" in model.sessions["g1"].bad_lines[0].reason


def test_a_session_whose_agent_has_no_usage_record_says_so(root: Path) -> None:
    write_events(root, "droid", [start("droid", usage_record=False)])
    write_events(root, "claude", [start("claude-code", usage_record=True)])
    write_events(root, "sdk", [start()])  # the SDK reports usage itself
    model, _ = _model(root)
    assert {sid: st.usage_record for sid, st in model.sessions.items()} == {
        "droid": False, "claude": True, "sdk": True}


def test_a_queue_item_says_what_its_loop_cost() -> None:
    from supervisor.tui.model import SessionState
    from supervisor.tui.queue_summary import escalation_summary

    st = SessionState("s1")
    spent = {"tokens": 52000, "cost_usd": 1.8412, "calls": 14, "at_least": False}
    assert escalation_summary(st, {"kind": "cycle", "spent": spent}) == "cycle · $1.84"
    unknown = {**spent, "cost_usd": None}
    assert escalation_summary(st, {"kind": "cycle", "spent": unknown}) == "cycle · 52,000 tokens"
    assert escalation_summary(st, {"kind": "cycle"}) == "cycle"
