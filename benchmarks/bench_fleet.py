"""Fleet: 200 sessions on 4 hosts, 1,000 events/s in total for 10 s, through Redis Streams.

Four local roots stand for four hosts, 50 sessions each; a writer process per host appends
250 `tool_call` events/s spread over its sessions. On a private redis-server (AOF on):

- ours: a real `supervisor relay` process per host, and the dashboard's side in this process
  (the Redis store's follower folding into a `DashboardModel`);
- the baseline, in the same run: a bare loop per host (watchfiles with the same step and
  debounce, `readline`, a pipelined XADD per line to a stream per session) and a bare reader
  (one XREAD BLOCK over the 200 streams, `json.loads` per entry).

The lag of an event is the time the consumer holds it minus the `ts` the writer stamped. The two
are run twice each (A B B A) and their lags pooled. Also: events lost (and repeated) by ours,
the relays' CPU per 1,000 events/s against the bare loops', and the dashboard model's memory
for the 200 sessions (tracemalloc around folding them) against the same sessions folded from
local roots; and the first load of the store as a dashboard starts it (its first piece folded,
against all of it).
"""

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

from common import REPO, Figure, percentile, work_dir

from supervisor.store.writer import event_writer

HOSTS = 4
SESSIONS = 200
RATE = 1000  # events per second, all hosts together
SECONDS = 10.0
INTERVAL_S = 0.05
STEP_MS, DEBOUNCE_MS = 50, 100  # the relay's watcher settings, used by the bare loop too
DRAIN_S = 20.0

WRITER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from supervisor.store.writer import event_writer
root, sessions, rate = Path(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
seconds, interval = float(sys.argv[5]), float(sys.argv[6])
writers = [event_writer(root, f"s{i:03d}") for i in range(sessions)]
sys.stdin.readline()
start = tick = time.monotonic()
sent = due = 0.0
n = 0
while tick - start < seconds:
    due += rate * interval
    while sent + 1 <= due:
        writers[n % sessions].append({"type": "tool_call", "call_id": f"c{n}", "tool": "bash",
                                      "args": {"cmd": f"make step-{n}"}})
        n += 1
        sent += 1
    tick += interval
    time.sleep(max(0.0, tick - time.monotonic()))
print(n)
"""

BARE_RELAY = """
import sys, signal
sys.path.insert(0, sys.argv[1])
from pathlib import Path
import redis
from watchfiles import watch
root, host, port = Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
step, debounce = int(sys.argv[5]), int(sys.argv[6])
client = redis.Redis(port=port)
files = {}
for path in sorted((root / "sessions").glob("*/events.jsonl")):
    f = open(path, "rb")
    f.seek(0, 2)
    files[str(path)] = (f, f"bare:{host}/{path.parent.name}")
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
print("ready", flush=True)
try:
    for changes in watch(root / "sessions", step=step, debounce=debounce, recursive=True):
        pipe = client.pipeline(transaction=False)
        for _, path in changes:
            if path in files:
                f, key = files[path]
                for line in iter(f.readline, b""):
                    pipe.xadd(key, {"l": line})
        pipe.execute()
except (KeyboardInterrupt, SystemExit):
    pass
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Redis:
    """A private redis-server for the benchmark."""

    def __init__(self, directory: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("the fleet benchmark needs redis-server (apt-get install "
                               "redis-server)")
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(directory),
             "--appendonly", "yes", "--save", "", "--logfile", str(directory / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        self.client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 15
        while True:
            with contextlib.suppress(redis.RedisError):
                if self.client.ping():
                    return
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        self.client.close()
        self.proc.terminate()
        self.proc.wait(15)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _prepare(base: Path, hosts: int, per_host: int) -> list[Path]:
    roots = []
    for h in range(hosts):
        root = base / f"h{h + 1}"
        for i in range(per_host):
            with event_writer(root, f"s{i:03d}") as w:
                w.append({"type": "session_start", "agent": "bench", "task": f"task {i}"})
        roots.append(root)
    return roots


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a running process (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _drive(roots: list[Path], relays: list[subprocess.Popen], per_host: int, seconds: float,
           delivered: "callable") -> tuple[int, float, float]:
    """Run the writers; wait for delivery. Events written, relay CPU seconds, window seconds."""
    rate = RATE / len(roots)
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(REPO), str(root),
                                 str(per_host), str(rate), str(seconds), str(INTERVAL_S)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                env=_env()) for root in roots]
    time.sleep(1.0)  # the writers' imports
    cpu_before = sum(_cpu_seconds(p.pid) for p in relays)
    started = time.monotonic()
    for w in writers:
        assert w.stdin is not None
        w.stdin.write("go\n")
        w.stdin.close()
    written = 0
    for w in writers:
        assert w.stdout is not None
        written += int(w.stdout.read().strip() or 0)
        w.wait()
    deadline = time.monotonic() + DRAIN_S
    while delivered() < written and time.monotonic() < deadline:
        time.sleep(0.05)
    window = time.monotonic() - started
    cpu = sum(_cpu_seconds(p.pid) for p in relays) - cpu_before
    return written, cpu, window


def _ours(base: Path, redis_url: str, hosts: int, per_host: int, seconds: float,
          lags: list[float]) -> tuple[int, int, int, float, float]:
    """Relays and the Redis follower folding into a model: written, lost, repeated, CPU, s."""
    from supervisor.store.open import open_store
    from supervisor.tui.model import DashboardModel

    roots = _prepare(base, hosts, per_host)
    relays = [subprocess.Popen([sys.executable, "-m", "supervisor", "relay", "--store",
                                redis_url, "--root", str(root), "--host", root.name],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=_env()) for root in roots]
    store = open_store(redis_url)
    model = DashboardModel(store)
    seen: set[tuple[str, int]] = set()
    repeated = 0
    stop = threading.Event()
    ready = threading.Event()

    async def consumer(batches) -> None:
        nonlocal repeated
        now = time.time()
        model.apply(batches)
        for b in batches:
            for e in b.events:
                if e.type != "tool_call":
                    continue
                key = (b.session_id, e.seq)
                if key in seen:
                    repeated += 1
                    continue
                seen.add(key)
                lags.append(now - e.ts)
        if sum(len(st.history) for st in model.sessions.values()) >= hosts * per_host:
            ready.set()

    def follow() -> None:
        async def main() -> None:
            done = asyncio.Event()
            follower = store.follower()
            task = asyncio.create_task(follower.run(consumer, done))
            while not stop.is_set():
                await asyncio.sleep(0.05)
            done.set()
            await task

        asyncio.run(main())

    thread = threading.Thread(target=follow)
    thread.start()
    try:
        ready.wait(60)  # every session_start shipped and folded
        before = len(seen)
        written, cpu, window = _drive(roots, relays, per_host, seconds,
                                      lambda: len(seen) - before)
        lost = written - (len(seen) - before)
    finally:
        stop.set()
        thread.join(30)
        _stop(relays)
        store.close()
    global _LAST_MODEL
    _LAST_MODEL = (redis_url, roots)
    return written, lost, repeated, cpu, window


def _bare(base: Path, port: int, hosts: int, per_host: int, seconds: float,
          lags: list[float]) -> tuple[float, float]:
    """Bare loops and a bare XREAD BLOCK reader: relay CPU seconds and the window."""
    import redis

    roots = _prepare(base, hosts, per_host)
    relays = [subprocess.Popen([sys.executable, "-c", BARE_RELAY, str(REPO), str(root),
                                root.name, str(port), str(STEP_MS), str(DEBOUNCE_MS)],
                               stdout=subprocess.PIPE, text=True, env=_env()) for root in roots]
    for proc in relays:
        assert proc.stdout is not None
        proc.stdout.readline()  # ready
    client = redis.Redis(port=port, socket_timeout=10)
    streams = {f"bare:{root.name}/s{i:03d}": "0-0" for root in roots for i in range(per_host)}
    count = [0]
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            got = client.xread(streams, count=10_000, block=500)
            now = time.time()
            for key, entries in got or []:
                for entry_id, fields in entries:
                    streams[key.decode()] = entry_id.decode()
                    event = json.loads(fields[b"l"])
                    lags.append(now - event["ts"])
                    count[0] += 1

    thread = threading.Thread(target=read)
    thread.start()
    try:
        _, cpu, window = _drive(roots, relays, per_host, seconds, lambda: count[0])
    finally:
        stop.set()
        thread.join(30)
        _stop(relays)
        client.close()
    return cpu, window


_LAST_MODEL: tuple[str, list[Path]] | None = None


def _model_memory(redis_url: str, roots: list[Path], base: Path) -> tuple[float, float, int]:
    """Bytes the dashboard model holds for every session: from Redis, and (the baseline) from
    the same files in one local root. Also the number of events folded."""
    from supervisor.store.local import LocalStore
    from supervisor.store.open import open_store
    from supervisor.tui.model import DashboardModel

    combined = base / "combined"
    (combined / "sessions").mkdir(parents=True)
    for root in roots:
        for session in (root / "sessions").iterdir():
            (combined / "sessions" / f"{root.name}-{session.name}").symlink_to(session)

    def fold(store) -> tuple[float, int]:
        follower = store.follower()
        tracemalloc.start()
        model = DashboardModel(store)
        while batches := [b for b in follower.scan() if not b.gone]:
            model.apply(batches)
        used = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        return used, sum(len(st.history) for st in model.sessions.values())

    store = open_store(redis_url)
    try:
        ours, events = fold(store)
    finally:
        store.close()
    local, _ = fold(LocalStore(combined))
    return ours, local, events


def _first_load(redis_url: str) -> tuple[float, float, int]:
    """The Redis follower's first load of the store as a dashboard starts it: (seconds until
    its first piece is delivered, until the last one is, pieces), each piece folded into a
    `DashboardModel` as it comes."""
    from supervisor.store.open import open_store
    from supervisor.tui.model import DashboardModel

    store = open_store(redis_url)
    follower = store.follower()
    model = DashboardModel(store)
    times: list[float] = []
    stop = asyncio.Event()

    async def consumer(batches) -> None:  # type: ignore[no-untyped-def]
        model.apply(batches)
        times.append(time.perf_counter())
        if getattr(follower, "loading", None) is None:
            stop.set()

    started = time.perf_counter()
    try:
        asyncio.run(follower.run(consumer, stop))
    finally:
        store.close()
    return times[0] - started, times[-1] - started, len(times)


def run(scale: float = 1.0) -> list[Figure]:
    hosts = HOSTS
    per_host = max(2, int(SESSIONS * scale) // hosts)
    seconds = max(1.0, SECONDS * scale)
    base = work_dir("fleet")
    server = Redis(base)
    ours_lags: list[float] = []
    bare_lags: list[float] = []
    written = lost = repeated = 0
    ours_cpu = bare_cpu = ours_window = bare_window = 0.0
    try:
        for index, which in enumerate(("ours", "bare", "bare", "ours")):
            run_dir = base / f"{index}-{which}"
            server.client.flushall()  # each run starts on an empty Redis
            if which == "ours":
                w, lo, rep, cpu, window = _ours(run_dir, server.url, hosts, per_host, seconds,
                                                ours_lags)
                written, lost, repeated = written + w, lost + lo, repeated + rep
                ours_cpu, ours_window = ours_cpu + cpu, ours_window + window
            else:
                cpu, window = _bare(run_dir, server.port, hosts, per_host, seconds, bare_lags)
                bare_cpu, bare_window = bare_cpu + cpu, bare_window + window
        assert _LAST_MODEL is not None
        memory, local_memory, folded = _model_memory(*_LAST_MODEL, base)
        first_piece, whole, pieces = _first_load(_LAST_MODEL[0])
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)
    ms = 1000.0
    per_k = RATE / 1000.0
    note = (f"{hosts * per_host} sessions on {hosts} hosts, {RATE} events/s for {seconds:g} s, "
            f"twice each; watcher step {STEP_MS} ms, debounce {DEBOUNCE_MS} ms for both")
    return [
        Figure("lag p50, append to dashboard", percentile(ours_lags, 50) * ms, "ms",
               percentile(bare_lags, 50) * ms, 1.5, note=note),
        Figure("lag p95, append to dashboard", percentile(ours_lags, 95) * ms, "ms",
               percentile(bare_lags, 95) * ms, 1.5, 250.0,
               note="baseline: bare loop, XADD per line, one XREAD BLOCK over every stream"),
        Figure("events lost", float(lost), "", max_value=0.0, note=f"of {written} written"),
        Figure("events delivered twice", float(repeated), "", max_value=0.0),
        Figure("relay CPU per 1,000 events/s", 100.0 * ours_cpu / ours_window / per_k,
               "% core", 100.0 * bare_cpu / bare_window / per_k,
               note=f"{hosts} relays together; baseline: the bare loops"),
        Figure(f"dashboard model memory, {hosts * per_host} sessions",
               memory / (1024 * 1024), "MiB", local_memory / (1024 * 1024), 1.5,
               note=f"{folded} events; baseline: the same sessions from local roots"),
        Figure(f"first load from Redis, {hosts * per_host} sessions: first piece folded",
               first_piece, "s", whole,
               note=f"baseline: all of them read and folded ({pieces} deliveries): rows as "
                    "they come"),
    ]
