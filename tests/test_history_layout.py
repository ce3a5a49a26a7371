"""The history layout: heartbeat runs folded, filters that include and exclude, live growth."""

from supervisor.tui.history import HistoryStore
from supervisor.tui.history_layout import HistoryFilter, HistoryLayout


def _store(kinds: list[str]) -> HistoryStore:
    store = HistoryStore()
    for n, kind in enumerate(kinds, 1):
        text = {"verdict": "allow (level 0)" if n == 2 else "block (level 2)",
                "tool_call": f"bash make {n}"}.get(kind, "")
        store.append_row(n, float(n), kind, text)
    return store


def test_runs_of_heartbeats_fold_into_one_row() -> None:
    store = _store(["tool_call", *["heartbeat"] * 5, "tool_call", "heartbeat", "tool_call"])
    layout = HistoryLayout(store)
    assert layout.extend() and len(layout) == 4
    run = layout.entry(1)
    assert (run.index, run.count, run.last, run.folded) == (1, 5, 5, True)
    assert layout.index(3) == 8  # a lone heartbeat between two steps is left out (issue 25)
    assert layout.folded == 6
    assert [layout.row_of(i) for i in range(9)] == [0, 1, 1, 1, 1, 1, 2, None, 3]
    loud = HistoryLayout(store, quiet=False)
    loud.extend()
    assert len(loud) == 9 and loud.folded == 0


def test_a_run_grows_live_and_nothing_new_is_no_change() -> None:
    store = _store(["tool_call", "heartbeat"])
    layout = HistoryLayout(store)
    layout.extend()
    assert not layout.extend()
    store.append_row(3, 3.0, "heartbeat", "")
    assert layout.extend() and len(layout) == 2 and layout.entry(1).count == 2


def test_filters_include_and_exclude() -> None:
    store = _store(["tool_call", "verdict", "tool_call", "verdict", "heartbeat"])
    assert HistoryFilter.parse("  ") is None
    hide_allow = HistoryFilter.parse("-verdict allow")
    assert hide_allow is not None and hide_allow.clauses[0].exclude
    layout = HistoryLayout(store, filter=hide_allow)
    layout.extend()
    assert [layout.index(r) for r in range(len(layout))] == [0, 2, 3]  # row 1: the allow
    # (row 4, a lone heartbeat, is left out: quiet)
    assert layout.hidden == 1
    both = HistoryLayout(store, filter=HistoryFilter.parse("bash, -make 3"))
    both.extend()
    assert [both.index(r) for r in range(len(both))] == [0] and both.hidden == 4
    assert both.row_of(2) is None  # hidden rows have no row
