"""The dashboard: live lag under load, CPU, opening a 100,000-event session, and the first
screen at 1,000 sessions.

- Lag: 50 sessions each appending 100 events/s (a writer process, 5 events per session every
  50 ms). The lag of an event is the time at which the dashboard's model holds it (folded, ready
  for the next redraw) minus the `ts` the writer stamped. The dashboard runs for real (Textual,
  headless, its sessions table redrawing on its tick); the baseline is the bare `Follower` with a
  consumer that only notes the time, in the same run (A B B A, lags pooled). Also the CPU time
  the dashboard's process used per second of wall time, against the bare follower's.
- Opening a 100,000-event session (written by `sample_sessions/generate.py`): time from start
  until the session's screen has painted its history with the last event, against reading the
  same file with a bare `json.loads` loop; and the memory the dashboard keeps per event
  (tracemalloc around folding the file into the model), against the file's bytes per event.
- The first screen of a root with 1,000 sessions of 100 events: time from start until the
  sessions table paints its first rows, with the sessions' summaries kept and without, against
  the first screen of an empty root; and until every session is read and painted, against a
  bare `json.loads` loop over every file.
- The sessions table's update at 1,000 sessions against 100 (issue 40): 10 live sessions get an
  event before each update, the others ended long ago; the CPU time of one update (the screen's
  diff and the paint that follows), median of the rounds, A B B A.
- The queue and the root line's totals per tick at 10,000 sessions against 1,000 (issue 40):
  ten busy sessions fold an event, then the queue, its stale group, today's cost and the loops'
  cost are read; CPU time, median of the ticks, A B B A.
"""

import asyncio
import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

from common import REPO, Figure, percentile, work_dir

# The events' parser loads when the dashboard reads its first line: imported here, so that
# these in-process figures leave out imports, as they did before it was loaded lazily (the
# process's start, imports and all, is bench_startup's).
import supervisor.protocol.codec  # noqa: F401
from supervisor.store.follower import Follower, SessionBatch
from supervisor.store.writer import event_writer

SESSIONS = 50
RATE = 100  # events per second per session
INTERVAL_S = 0.05
SECONDS = 6.0
STEP_MS, DEBOUNCE_MS = 50, 100
LONG_EVENTS = 100_000
SESSIONS_MANY, EVENTS_EACH = 1000, 100

WRITER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from supervisor.store.writer import event_writer
root, sessions, rounds = Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
per_round, interval = int(sys.argv[5]), float(sys.argv[6])
writers = [event_writer(root, f"s{i:03d}") for i in range(sessions)]
sys.stdin.readline()
tick = time.monotonic()
for r in range(rounds):
    for i, w in enumerate(writers):
        w.append_many([{"type": "tool_call", "call_id": f"c{r}-{k}", "tool": "bash",
                        "args": {"cmd": f"step {r} {k}"}} for k in range(per_round)])
    tick += interval
    time.sleep(max(0.0, tick - time.monotonic()))
"""


def _prepare(root: Path, sessions: int) -> None:
    for i in range(sessions):
        with event_writer(root, f"s{i:03d}") as w:
            w.append({"type": "session_start", "agent": "bench", "task": f"task {i}"})


async def _drive(root: Path, sessions: int, rounds: int, lags: list[float]) -> tuple[int, float]:
    """Run the writer; return (events missing after draining, CPU seconds per wall second)."""
    await asyncio.sleep(0.8)  # the reader's first scan
    per_round = max(1, round(RATE * INTERVAL_S))
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(REPO), str(root), str(sessions), str(rounds),
         str(per_round), str(INTERVAL_S)], stdin=subprocess.PIPE, text=True)
    await asyncio.sleep(0.3)
    start = len(lags)
    assert proc.stdin is not None
    cpu0, wall0 = time.process_time(), time.monotonic()
    proc.stdin.write("go\n")
    proc.stdin.close()
    await asyncio.to_thread(proc.wait)
    expected = sessions * rounds * per_round
    deadline = time.monotonic() + 10
    while len(lags) - start < expected and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    cpu = (time.process_time() - cpu0) / (time.monotonic() - wall0)
    return expected - (len(lags) - start), cpu


def _note_lags(lags: list[float]):
    def note(batches: list[SessionBatch]) -> None:
        now = time.time()
        lags.extend(now - e.ts for b in batches for e in b.events if e.type == "tool_call")
    return note


async def _dashboard(root: Path, sessions: int, rounds: int, lags: list[float]
                     ) -> tuple[int, float]:
    from supervisor.tui.app import SupervisorApp

    app = SupervisorApp(root, theme="supervisor-dark",
                        follower=Follower(root, step_ms=STEP_MS, debounce_ms=DEBOUNCE_MS))
    app.on_ingest = _note_lags(lags)
    async with app.run_test(headless=True, size=(120, 60)):
        return await _drive(root, sessions, rounds, lags)


async def _bare_follower(root: Path, sessions: int, rounds: int, lags: list[float]
                         ) -> tuple[int, float]:
    note = _note_lags(lags)

    async def consumer(batches: list[SessionBatch]) -> None:
        note(batches)

    stop = asyncio.Event()
    follower = Follower(root, step_ms=STEP_MS, debounce_ms=DEBOUNCE_MS)
    task = asyncio.create_task(follower.run(consumer, stop))
    try:
        return await _drive(root, sessions, rounds, lags)
    finally:
        stop.set()
        await task


def lag(scale: float) -> list[Figure]:
    sessions = max(2, int(SESSIONS * scale))
    rounds = max(10, int(SECONDS / INTERVAL_S * scale))
    dash_lags: list[float] = []
    bare_lags: list[float] = []
    dash_cpu: list[float] = []
    bare_cpu: list[float] = []
    lost = 0
    for which in ("dashboard", "bare", "bare", "dashboard"):
        root = work_dir("dashboard-lag")
        try:
            _prepare(root, sessions)
            if which == "dashboard":
                missing, cpu = asyncio.run(_dashboard(root, sessions, rounds, dash_lags))
                lost += missing
                dash_cpu.append(cpu)
            else:
                _, cpu = asyncio.run(_bare_follower(root, sessions, rounds, bare_lags))
                bare_cpu.append(cpu)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    ms = 1000.0
    note = (f"{sessions} sessions x {RATE} events/s for {rounds * INTERVAL_S:g} s, twice each; "
            f"step {STEP_MS} ms, debounce {DEBOUNCE_MS} ms")
    return [
        Figure("append -> dashboard state, lag p50", percentile(dash_lags, 50) * ms, "ms",
               percentile(bare_lags, 50) * ms, note=note),
        Figure("append -> dashboard state, lag p95", percentile(dash_lags, 95) * ms, "ms",
               percentile(bare_lags, 95) * ms, 1.5, note="baseline: the bare Follower"),
        Figure("dashboard CPU under load", 100 * sum(dash_cpu) / len(dash_cpu), "% of a core",
               100 * sum(bare_cpu) / len(bare_cpu),
               note="baseline: the bare Follower's CPU for the same load"),
        Figure("events lost by the dashboard", float(lost), "", max_value=0.0),
    ]


def _long_session(count: int) -> Path:
    root = work_dir("dashboard-open")
    _generator().write_long(root, count)
    return root


def _bare_read(path: Path) -> float:
    start = time.perf_counter()
    with path.open("rb") as f:
        for line in f:
            json.loads(line)
    return time.perf_counter() - start


async def _open(root: Path, session: str, count: int) -> tuple[float, float]:
    """`supervisor dashboard --session ID` on the long session: (first paint of its history,
    history painted with the last event loaded), in seconds from the start. A paint is the
    compositor asking the history view for its lines (noted by wrapping `render_line`)."""
    from supervisor.tui.app import SupervisorApp
    from supervisor.tui.widgets.history_view import HistoryView

    painted: list[tuple[float, int]] = []
    original = HistoryView.render_line

    def noting(view: HistoryView, y: int):  # type: ignore[no-untyped-def]
        if view.row_count:
            painted.append((time.perf_counter(), view.row_count))
        return original(view, y)

    HistoryView.render_line = noting  # type: ignore[method-assign]
    try:
        start = time.perf_counter()
        app = SupervisorApp(root, theme="supervisor-dark", open_session=session)
        async with app.run_test(headless=True, size=(120, 40)):
            while not painted or painted[-1][1] < count:
                await asyncio.sleep(0.005)
            return painted[0][0] - start, painted[-1][0] - start
    finally:
        HistoryView.render_line = original  # type: ignore[method-assign]


def _memory_per_event(root: Path, session: str) -> float:
    from supervisor.tui.model import DashboardModel

    follower = Follower(root)
    batches = []
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    model = DashboardModel()
    while True:  # fold batch by batch, as the live app does (parsed events are not kept)
        new = follower.poll_session(session)
        if not new:
            break
        model.apply(new)
        del new
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    del batches
    used = sum(s.size_diff for s in after.compare_to(before, "filename"))
    return used / max(1, len(model.sessions[session].history))


def open_long(scale: float) -> list[Figure]:
    count = max(5000, int(LONG_EVENTS * scale))
    root = _long_session(count)
    session = f"long-{count}"
    path = root / "sessions" / session / "events.jsonl"
    try:
        bare = [_bare_read(path)]
        runs = [asyncio.run(_open(root, session, count))]
        bare.append(_bare_read(path))
        runs.append(asyncio.run(_open(root, session, count)))
        per_event = _memory_per_event(root, session)
        size = path.stat().st_size
    finally:  # the long session is tens of MB: never left behind
        shutil.rmtree(root, ignore_errors=True)
    file_per_event = size / count
    note = f"{count} events, {size / 1e6:.1f} MB"
    return [
        Figure("open a long session: time to first paint", min(r[0] for r in runs), "s",
               min(bare), 2.0, note=note + "; baseline: bare json.loads loop over the file"),
        Figure("open a long session: all of it loaded and painted", min(r[1] for r in runs),
               "s", min(bare), note="the rest arrives in 2 MB chunks while the screen is live"),
        Figure("dashboard memory per event", per_event, "bytes", file_per_event,
               note="baseline: the file's bytes per event"),
    ]


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "sample_generate", REPO / "sample_sessions" / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _first_screen(root: Path, events: int) -> tuple[float, float]:
    """`supervisor dashboard` on `root`: (the sessions table's first paint with rows in it, or
    at all for an empty root; every session's events read and folded into the model), in
    seconds from the start. A paint is the compositor asking the table for its lines."""
    from supervisor.tui.app import SupervisorApp
    from supervisor.tui.widgets.session_table import SessionTable

    painted: list[tuple[float, int]] = []
    original = SessionTable.render_line

    def noting(table: SessionTable, y: int):  # type: ignore[no-untyped-def]
        painted.append((time.perf_counter(), table.row_count))
        return original(table, y)

    SessionTable.render_line = noting  # type: ignore[method-assign]
    try:
        start = time.perf_counter()
        app = SupervisorApp(root, theme="supervisor-dark")
        async with app.run_test(headless=True, size=(120, 40)):
            while not painted or (events and not any(rows for _, rows in painted)):
                await asyncio.sleep(0.005)
            first = next(at for at, rows in painted if rows or not events) - start
            while app.ingested < events or any(st.preview for st in app.model.sessions.values()):
                await asyncio.sleep(0.01)
            return first, time.perf_counter() - start
    finally:
        SessionTable.render_line = original  # type: ignore[method-assign]


def first_screen(scale: float) -> list[Figure]:
    """The sessions screen of a root with 1,000 sessions (issue 40): the first rows come from
    the kept summaries (`supervisor sessions` or `notify watch` leave them) before any
    session's events are read; without them, from the first piece the follower reads (the
    most recently written sessions first), the rest filling in."""
    from supervisor.store.local import LocalStore

    sessions, each = max(50, int(SESSIONS_MANY * scale)), EVENTS_EACH
    kept, bare_root, empty = work_dir("dashboard-kept"), work_dir("dashboard-bare"), \
        work_dir("dashboard-empty")
    generate = _generator()
    for where in (kept, bare_root):
        generate.write_many(where, sessions, each)
    store = LocalStore(kept)
    for sid in store.session_ids():
        store.summary(sid)
    total = sessions * each
    runs: dict[str, list[tuple[float, float]]] = {"kept": [], "bare": [], "empty": []}
    try:
        for which in ("empty", "kept", "bare", "bare", "kept", "empty"):
            root = {"kept": kept, "bare": bare_root, "empty": empty}[which]
            for path in (root / "sessions").glob("*/summary.json") if which == "bare" else ():
                path.unlink()  # the previous run's dashboard kept them
            runs[which].append(asyncio.run(_first_screen(root, 0 if which == "empty" else total)))
        reads = [_bare_read_all(bare_root), _bare_read_all(bare_root)]
    finally:
        for root in (kept, bare_root, empty):
            shutil.rmtree(root, ignore_errors=True)
    anchor = min(r[0] for r in runs["empty"])
    note = f"{sessions} sessions of {each} events; best of 2, interleaved"
    return [
        Figure(f"first screen, {sessions} sessions: rows from the kept summaries",
               min(r[0] for r in runs["kept"]), "s", anchor, 2.0,
               note=note + "; baseline: the first screen of an empty root"),
        Figure(f"first screen, {sessions} sessions: no summaries kept",
               min(r[0] for r in runs["bare"]), "s", anchor,
               max_value=2.0, note="rows from the follower's first piece (about 64 KB)"),
        Figure(f"first screen, {sessions} sessions: all of them read and folded",
               min(r[1] for r in runs["kept"]), "s", min(reads),
               note="baseline: a bare json.loads loop over every session's file"),
    ]


def _bare_read_all(root: Path) -> float:
    return sum(_bare_read(path) for path in sorted((root / "sessions").glob("*/events.jsonl")))


BUSY, UPDATES = 10, 30


def _busy_root(sessions: int) -> Path:
    root = work_dir("dashboard-update")
    _generator().write_many(root, sessions - BUSY, 20)  # ended, their last event long ago
    _prepare(root, BUSY)
    return root


async def _updates(root: Path) -> list[float]:
    """CPU seconds of each update of the sessions screen after an event in each live session:
    the screen's refresh (the table's diff, the queue, the root line) and the paint after it."""
    from supervisor.tui.app import SupervisorApp

    follower = Follower(root)
    app = SupervisorApp(root, theme="supervisor-dark", live=False, table_tick=0.0)
    writers = [event_writer(root, f"s{i:03d}") for i in range(BUSY)]
    cost: list[float] = []
    try:
        async with app.run_test(headless=True, size=(120, 40)) as pilot:
            app.ingest(follower.scan(), initial=True)
            app.refresh_screens()
            await pilot.pause()
            for r in range(UPDATES):
                for w in writers:
                    w.append({"type": "tool_call", "call_id": f"c{r}", "tool": "bash",
                              "args": {"cmd": f"step {r}"}})
                app.ingest([b for i in range(BUSY) for b in follower.poll_session(f"s{i:03d}")])
                started = time.process_time()
                app.refresh_screens()
                await pilot.pause()
                cost.append(time.process_time() - started)
    finally:
        for w in writers:
            w.close()
    return cost


def table_update(scale: float) -> list[Figure]:
    """The sessions table's update cost does not grow with the store (issue 40): at 1,000
    sessions against 100, with the same 10 busy sessions."""
    many, few = max(2 * BUSY + 10, int(SESSIONS_MANY * scale)), max(BUSY + 10, int(100 * scale))
    roots = {few: _busy_root(few), many: _busy_root(many)}
    cost: dict[int, list[float]] = {few: [], many: []}
    try:
        for n in (few, many, many, few):
            cost[n] += asyncio.run(_updates(roots[n]))
    finally:
        for root in roots.values():
            shutil.rmtree(root, ignore_errors=True)
    ms = 1000.0
    return [Figure(f"sessions table update, {many} sessions ({BUSY} live)",
                   statistics.median(cost[many]) * ms, "ms CPU", statistics.median(cost[few]) * ms,
                   1.2, note=f"baseline: the same update at {few} sessions; median of "
                             f"{2 * UPDATES} updates each, A B B A")]


TOTALS_FEW, TOTALS_MANY, TICKS, WAITING = 1000, 10_000, 200, 20


def _totals_batches(root: Path) -> tuple[list[SessionBatch], list[SessionBatch],
                                         list[SessionBatch]]:
    """Batches of real events to fold into many sessions: (a session that spent today, one
    that also waits for an answer after a loop, one more usage event of a busy session)."""
    usage = {"type": "usage", "input_tokens": 900, "output_tokens": 90, "cost_usd": 0.01}
    calls = [{"type": "tool_call", "call_id": f"c{n}", "tool": "bash", "args": {"cmd": "make"}}
             for n in range(3)]
    for sid, extra in (("spent", []), ("waits", [
            {"type": "escalation", "escalation_id": "esc-1", "level": 3, "kind": "cycle",
             "reason": "make 3 times", "evidence": [2, 4], "options": ["skip", "abort"]}])):
        with event_writer(root, sid) as w:
            w.append_many([{"type": "session_start", "agent": "bench", "task": sid},
                           calls[0], usage, calls[1], usage, calls[2], *extra])
    follower = Follower(root)
    spent, waits = follower.poll_session("spent"), follower.poll_session("waits")
    with event_writer(root, "spent") as w:
        w.append(usage)
    return spent, waits, follower.poll_session("spent")


def _totals_ticks(sessions: int, batches: tuple[list[SessionBatch], ...]) -> list[float]:
    """CPU seconds of each tick's totals over `sessions` sessions (`WAITING` of them wait for
    an answer, however many there are: the queue's length is not the store's size): ten
    busy sessions fold an event, then the queue, its stale group and the root line's sums
    are read, as the sessions screen reads them."""
    from dataclasses import replace

    from supervisor.tui.model import DashboardModel

    spent, waits, more = batches
    model = DashboardModel()
    model.apply([replace(b, session_id=f"s{i:05d}")
                 for i in range(sessions)
                 for b in (waits if i % (sessions // WAITING) == 0 else spent)])
    busy = [f"s{i:05d}" for i in range(0, sessions, sessions // BUSY)][:BUSY]
    cost = []
    for _ in range(TICKS):
        started = time.process_time()
        model.apply([replace(b, session_id=sid) for sid in busy for b in more])
        now = time.time()
        model.queue(now), model.stale(now), model.day_cost(now), model.loop_cost()
        cost.append(time.process_time() - started)
    return cost


def totals(scale: float) -> list[Figure]:
    """The queue and the root line's totals per tick do not grow with the store (issue 40):
    10,000 sessions against 1,000, ten of them busy."""
    few = max(10 * BUSY, int(TOTALS_FEW * scale))
    many = max(10 * few, int(TOTALS_MANY * scale))
    root = work_dir("dashboard-totals")
    try:
        batches = _totals_batches(root)
        cost: dict[int, list[float]] = {few: [], many: []}
        for n in (few, many, many, few):
            cost[n] += _totals_ticks(n, batches)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    ms = 1000.0
    return [Figure(f"queue and root-line totals per tick, {many} sessions",
                   statistics.median(cost[many]) * ms, "ms CPU",
                   statistics.median(cost[few]) * ms, 1.2,
                   note=f"baseline: the same tick at {few} sessions; {BUSY} busy, {WAITING} "
                        f"waiting; median of {2 * TICKS} ticks each, A B B A")]


def run(scale: float = 1.0) -> list[Figure]:
    return (lag(scale) + open_long(scale) + first_screen(scale) + table_update(scale)
            + totals(scale))
