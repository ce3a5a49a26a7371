"""The relay against real faults: a private redis-server, the real `supervisor relay` process,
agents writing their local files meanwhile. Whatever happens, each line of each local
`events.jsonl` ends up in its Redis stream exactly once, in order, and each decision in the
local `control.jsonl` exactly once.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from redis_helpers import REPO, RedisServer, RelayThread, relay_process, wait_for

from supervisor.operator.send import send_decision
from supervisor.store.open import open_store
from supervisor.store.paths import session_files
from supervisor.store.writer import event_writer

pytestmark = pytest.mark.slow
HOST = "h1"

WRITER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from supervisor.store.writer import event_writer
root, sessions, count, pause = Path(sys.argv[2]), sys.argv[3].split(","), int(sys.argv[4]), \\
    float(sys.argv[5])
until = Path(sys.argv[6]) if len(sys.argv) > 6 else None
writers = [event_writer(root, s) for s in sessions]
i = 0
while (i < count) if until is None else not until.exists():
    for w in writers:
        w.append({"type": "message", "role": "assistant", "text": f"line {i} " + "x" * (i % 50)})
    time.sleep(pause)
    i += 1
"""


def start_writer(root: Path, sessions: list[str], count: int, pause: float = 0.001,
                 until: Path | None = None) -> subprocess.Popen[bytes]:
    """An agent-like process appending `count` events to each session, `pause` s apart; with
    `until`, as many as it can until that file exists (a loaded machine cannot make it finish
    before the faults it is meant to write through)."""
    return subprocess.Popen([sys.executable, "-c", WRITER, str(REPO), str(root),
                             ",".join(sessions), str(count), str(pause),
                             *([str(until)] if until is not None else [])])


def local_lines(root: Path, sid: str) -> list[tuple[int, bytes]]:
    """(offset, line) of every complete line of the local events file."""
    data = session_files(root, sid).events.read_bytes()
    out, pos = [], 0
    for line in data.split(b"\n")[:-1]:
        out.append((pos, line))
        pos += len(line) + 1
    return out


def stream_lines(server: RedisServer, sid: str, host: str = HOST) -> list[tuple[int, bytes]]:
    """(offset, line) of every line entry of the session's stream, in stream order."""
    with server.admin() as admin:
        entries = admin.xrange(f"sv:ev:{host}/{sid}")
    return [(int(f[b"o"]), f[b"l"]) for _, f in entries if b"l" in f]


def shipped(server: RedisServer, root: Path, sids: list[str]) -> bool:
    return all(len(stream_lines(server, sid)) == len(local_lines(root, sid)) for sid in sids)


def assert_exact_copy(server: RedisServer, root: Path, sid: str) -> None:
    """Every local line once, in order, nothing else."""
    local, remote = local_lines(root, sid), stream_lines(server, sid)
    assert [o for o, _ in remote] == [o for o, _ in local], "lines missing, repeated or moved"
    assert remote == local


def kill(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
    proc.wait(20)


def relay_status(root: Path) -> subprocess.CompletedProcess[str]:
    from conftest import cli_env

    return subprocess.run([sys.executable, "-m", "supervisor", "relay", "--status", "--root",
                           str(root)], capture_output=True, text=True, timeout=60,
                          env=cli_env())


def test_relay_killed_mid_stream_resumes_without_loss_or_duplicate(
        root: Path, redis_server: RedisServer, tmp_path: Path) -> None:
    sids = ["a", "b"]
    done = tmp_path / "stop-writing"
    writer = start_writer(root, sids, 0, pause=0.003, until=done)
    relay = relay_process(root, redis_server.url(), HOST, log=tmp_path / "relay.log")
    try:
        for _ in range(2):  # killed twice while the agents keep writing
            before = len(stream_lines(redis_server, "a"))
            wait_for(lambda n=before: len(stream_lines(redis_server, "a")) > n + 100, 30,
                     "the relay to ship more")
            assert writer.poll() is None, "the agents stopped before the relay was killed"
            kill(relay)
            time.sleep(0.3)
            relay = relay_process(root, redis_server.url(), HOST, log=tmp_path / "relay.log")
        before = len(local_lines(root, "a"))
        wait_for(lambda: len(local_lines(root, "a")) > before + 100, 30,
                 "the agents to write on while the new relay starts")
        done.touch()
        assert writer.wait(60) == 0
        wait_for(lambda: shipped(redis_server, root, sids), 60, "every line shipped")
    finally:
        kill(writer)
        kill(relay, signal.SIGTERM)
    written = len(local_lines(root, "a"))
    assert written > 200
    for sid in sids:
        assert len(local_lines(root, sid)) == written
        assert_exact_copy(redis_server, root, sid)


def test_redis_restarted_mid_stream_loses_nothing(root: Path, redis_server: RedisServer,
                                                  tmp_path: Path) -> None:
    done = tmp_path / "stop-writing"
    writer = start_writer(root, ["a"], 0, pause=0.004, until=done)
    relay = relay_process(root, redis_server.url(), HOST, log=tmp_path / "relay.log")
    try:
        wait_for(lambda: len(stream_lines(redis_server, "a")) > 100, 30, "some lines shipped")
        redis_server.stop()  # SIGTERM: a clean shutdown, the AOF flushed
        before = len(local_lines(root, "a"))
        wait_for(lambda: len(local_lines(root, "a")) > before + 100, 30,
                 "the agent to write on while Redis is down")
        assert writer.poll() is None, "the agent stopped before Redis came back"
        redis_server.start()
        done.touch()
        assert writer.wait(60) == 0
        wait_for(lambda: shipped(redis_server, root, ["a"]), 60, "every line shipped")
    finally:
        kill(writer)
        kill(relay, signal.SIGTERM)
    assert_exact_copy(redis_server, root, "a")
    assert "cannot reach the server" in (tmp_path / "relay.log").read_text()


def test_redis_that_lost_its_data_is_filled_again(root: Path, tmp_path: Path) -> None:
    """A Redis without persistence killed -9 comes back empty: the relay ships it all again."""
    server = RedisServer(tmp_path / "volatile", extra=("--appendonly", "no")).start()
    relay = RelayThread(root, server.url(), HOST)
    try:
        with event_writer(root, "a") as w:
            w.append_many([{"type": "message", "role": "user", "text": f"m{i}"}
                           for i in range(300)])
        wait_for(lambda: shipped(server, root, ["a"]), 30, "the first shipping")
        server.restart(signal.SIGKILL)
        with server.admin() as admin:
            assert admin.xlen("sv:ev:h1/a") == 0
        # no agent writes: the relay notices the restart itself and fills Redis again
        wait_for(lambda: shipped(server, root, ["a"]), 30, "everything shipped again")
        assert_exact_copy(server, root, "a")
        with event_writer(root, "a") as w:
            w.append({"type": "message", "role": "user", "text": "after"})
        wait_for(lambda: shipped(server, root, ["a"]), 30, "the new line shipped")
        assert_exact_copy(server, root, "a")
    finally:
        relay.stop()
        server.stop()


def test_redis_down_buffers_reports_the_backlog_and_catches_up(root: Path, tmp_path: Path
                                                               ) -> None:
    server = RedisServer(tmp_path / "late")  # not started yet
    relay = relay_process(root, server.url(), HOST, log=tmp_path / "relay.log")
    try:
        with event_writer(root, "a") as w:
            w.append_many([{"type": "message", "role": "user", "text": f"m{i}"}
                           for i in range(40)])
        status = wait_for(lambda: (s := relay_status(root)).stdout.count("not connected")
                          and "backlog: 40 events" in s.stdout and s, 30, "the backlog shown")
        assert status.returncode == 1 and "cannot reach the server" in status.stdout
        server.start()
        wait_for(lambda: shipped(server, root, ["a"]), 60, "the backlog shipped")
        status = wait_for(lambda: (s := relay_status(root)).returncode == 0 and s, 30,
                          "a healthy status")
        assert "connected" in status.stdout and "backlog: 0 events" in status.stdout
        assert_exact_copy(server, root, "a")
    finally:
        kill(relay, signal.SIGTERM)
        server.stop()
    assert relay.returncode == 0
    assert "not running" in relay_status(root).stdout


def test_redis_out_of_memory_holds_the_lines_until_there_is_room(
        root: Path, redis_server: RedisServer) -> None:
    with event_writer(root, "a") as w:
        w.append({"type": "message", "role": "user", "text": "first"})
    relay = RelayThread(root, redis_server.url(), HOST)
    try:
        wait_for(lambda: shipped(redis_server, root, ["a"]), 30, "the first line")
        with redis_server.admin() as admin:
            admin.config_set("maxmemory-policy", "noeviction")
            admin.config_set("maxmemory", "1")
        with event_writer(root, "a") as w:
            w.append_many([{"type": "message", "role": "user", "text": "y" * 500}
                           for _ in range(200)])
        wait_for(lambda: any("OOM" in line for line in relay.logs), 30, "the OOM reported")
        assert len(stream_lines(redis_server, "a")) == 1
        with redis_server.admin() as admin:
            admin.config_set("maxmemory", "0")
        wait_for(lambda: shipped(redis_server, root, ["a"]), 60, "everything shipped")
        assert_exact_copy(redis_server, root, "a")
    finally:
        relay.stop()


def test_decisions_arrive_once_even_when_the_relay_forgets_or_the_disk_refuses(
        root: Path, redis_server: RedisServer) -> None:
    with event_writer(root, "s") as w:
        w.append({"type": "session_start", "agent": "bot", "task": None})
    relay = RelayThread(root, redis_server.url(), HOST)
    store = open_store(redis_server.url())
    control = session_files(root, "s").control
    try:
        wait_for(lambda: store.exists("h1/s"), 30, "the session registered")
        first = send_decision(store, "h1/s", "pause", operator="ana")
        wait_for(control.exists, 30, "the decision delivered")
        relay.stop()
        # the relay loses its state (cursors): it must not deliver the decision again
        for state in (root / "relay").glob("*.json"):
            state.unlink()
        control.rename(control.with_suffix(".bak"))
        control.mkdir()  # the local file cannot be written (as with a full disk)
        relay = RelayThread(root, redis_server.url(), HOST)
        second = send_decision(store, "h1/s", "guidance", text="go on", operator="bo")
        wait_for(lambda: any("not written locally" in line for line in relay.logs), 30,
                 "the local failure reported")
        control.rmdir()
        control.with_suffix(".bak").rename(control)
        wait_for(lambda: control.read_text().count("\n") >= 2, 30, "the second decision")
        time.sleep(1.0)  # would a third line come?
        lines = [json.loads(line) for line in control.read_text().splitlines()]
        assert [(d["decision_id"], d["action"]) for d in lines] == [
            (first, "pause"), (second, "guidance")]
        assert lines[1]["text"] == "go on" and lines[1]["operator"] == "bo"
    finally:
        relay.stop()
        store.close()


def test_a_reused_session_name_does_not_get_old_decisions(root: Path,
                                                          redis_server: RedisServer) -> None:
    with event_writer(root, "s") as w:
        w.append({"type": "session_start", "agent": "bot", "task": None})
    relay = RelayThread(root, redis_server.url(), HOST)
    store = open_store(redis_server.url())
    try:
        wait_for(lambda: store.exists("h1/s"), 30, "the session registered")
        send_decision(store, "h1/s", "abort", operator="ana")
        wait_for(session_files(root, "s").control.exists, 30, "the abort delivered")
        shutil.rmtree(session_files(root, "s").dir)
        wait_for(lambda: not store.exists("h1/s"), 30, "the session removed from the store")
        with event_writer(root, "s") as w:  # a new session under the same name
            w.append({"type": "session_start", "agent": "bot2", "task": None})
        wait_for(lambda: store.summary("h1/s").agent == "bot2", 30, "the new session")
        assert [e.agent for e in store.read_all("h1/s").events] == ["bot2"]
        time.sleep(1.5)
        assert not session_files(root, "s").control.exists()
    finally:
        relay.stop()
        store.close()


def test_truncated_and_replaced_files_start_a_new_generation(root: Path,
                                                             redis_server: RedisServer) -> None:
    msg = [{"type": "message", "role": "user", "text": t} for t in ("one", "two", "three")]
    with event_writer(root, "s") as w:
        w.append_many(msg)
    relay = RelayThread(root, redis_server.url(), HOST)
    store = open_store(redis_server.url())

    def texts() -> list[str]:
        return [e.text for e in store.read_all("h1/s").events]

    try:
        wait_for(lambda: texts() == ["one", "two", "three"], 30, "the first generation")
        path = session_files(root, "s").events
        path.write_bytes(b"")
        with event_writer(root, "s") as w:
            w.append({"type": "message", "role": "user", "text": "four"})
        wait_for(lambda: texts() == ["four"], 30, "the truncated file")
        assert store.read_all("h1/s").reset
        relay.stop()  # replaced while no relay runs
        replacement = path.with_name("new")
        replacement.write_bytes(path.read_bytes())
        os.replace(replacement, path)
        with event_writer(root, "s") as w:
            w.append({"type": "message", "role": "user", "text": "five"})
        relay = RelayThread(root, redis_server.url(), HOST)
        wait_for(lambda: texts() == ["four", "five"], 30, "the replaced file")
    finally:
        relay.stop()
        store.close()


def test_a_second_relay_of_the_same_root_and_store_is_refused(root: Path,
                                                              redis_server: RedisServer) -> None:
    from conftest import run_cli

    relay = RelayThread(root, redis_server.url(), HOST)
    try:
        result = run_cli("relay", "--store", redis_server.url(), "--root", str(root), "--host",
                         HOST, timeout=30)
        assert result.returncode == 2 and "another relay already relays" in result.stderr
        assert "Traceback" not in result.stderr
    finally:
        relay.stop()


def test_the_ship_script_keeps_one_copy_and_refuses_gaps(redis_server: RedisServer) -> None:
    """What makes shipping idempotent, on its own: the same run twice is one copy; a run that
    starts after what Redis has is refused with where Redis stands; a newer generation starts
    with a reset mark."""
    from supervisor.store.redis import scripts

    with redis_server.admin() as admin:
        ship = admin.register_script(scripts.SHIP)
        keys = ["sv:ev:h/s", "sv:host:h", "sv:activity", "sv:hosts"]

        def call(gen: int, start: int, end: int, *lines: tuple[int, int, bytes]) -> list:
            args = ["h", "s", "sv:ctl:h/s", gen, start, end, 1000]
            for off, seq, data in lines:
                args += [off, seq, "", data, 0]
            return [x.decode() if isinstance(x, bytes) else x for x in ship(keys, args)]

        one, two = (0, 1, b'{"seq":1}'), (10, 2, b'{"seq":2}')
        assert call(1, 0, 20, one, two) == ["ok", 1, 20, 2, "0-0"]
        assert call(1, 0, 20, one, two) == ["ok", 1, 20, 0, "0-0"]  # a resend: nothing added
        assert call(1, 10, 20, two) == ["ok", 1, 20, 0, "0-0"]
        assert call(1, 30, 40, (30, 4, b'{"seq":4}')) == ["gap", 1, 20, 0, "0-0"]
        assert admin.xlen("sv:ev:h/s") == 2
        assert call(2, 0, 10, (0, 1, b'{"seq":1}')) == ["ok", 2, 10, 1, "0-0"]
        assert call(1, 20, 30) == ["gen", 2, 10, 0, "0-0"]  # an older generation
        entries = admin.xrange("sv:ev:h/s")
        assert [sorted(f) for _, f in entries] == [[b"l", b"o"], [b"l", b"o"], [b"r"],
                                                    [b"l", b"o"]]
        assert admin.hget("sv:host:h", "s") == b"2 10 1 0-0"
