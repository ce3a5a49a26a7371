"""`supervisor web` without a browser: nothing is served without the token, the token never
reaches the log, answers get the terminal's refusals, a port in use is one line."""

import json
import socket
import time
from pathlib import Path

import pytest

from supervisor.store.writer import event_writer
from tests.conftest import run_cli
from tests.notify_helpers import escalate
from tests.web_helpers import Web


@pytest.mark.slow
def test_without_a_sign_in_nothing_is_served(root: Path) -> None:
    escalate(root, "secret-session")
    web = Web(root)
    assert web.line.startswith(f"serving {root.resolve()} at http://")  # absolute
    try:
        cookie = f"supervisor_session_{web.port}"
        for path, data in (("/", None), ("/api/queue", None), ("/api/answer", b"{}"),
                           ("/?token=" + web.token, None), ("/login?code=wrong", None),
                           ("/login", None), ("/api/escalation?session=secret-session"
                                              "&escalation_id=esc-1", None)):
            status, body = web.get(path, data=data)
            assert status == 401, path
            assert b"secret-session" not in body and b"esc-1" not in body
            assert b"supervisor web --login" in body  # the 401 page says how to sign in
        for value in ("nope", web.token, web.code):  # the token is no cookie value
            assert web.get("/api/queue", {"Cookie": f"{cookie}={value}"})[0] == 401
        for _ in range(100):  # the server folds the store in the background
            status, body = web.get("/api/queue?session=secret-session", web.bearer)
            if status != 200 or json.loads(body)["sessions"]:
                break
            time.sleep(0.05)
        assert status == 200 and json.loads(body)["sessions"] == {"secret-session": "waiting"}
        assert json.loads(body)["count"] == 1
        session = web.login()
        assert session not in (web.token, web.code)
        assert web.get("/api/queue", {"Cookie": f"{cookie}={session}"})[0] == 200
        assert web.get(f"/login?code={web.code}", follow=False)[0] == 401  # spent
        minted = run_cli("web", "--login")
        assert minted.returncode == 0, minted.stderr
        new_url = minted.stdout.split()[0]
        assert new_url.startswith(f"{web.base}/login?code=")
        second = web.login(new_url.rpartition("=")[2])
        assert second != session
        assert web.get("/api/queue", {"Cookie": f"{cookie}={second}"})[0] == 200
    finally:
        log = web.stop()
    assert web.token not in log and web.code not in log and "wrong" not in log
    assert "GET /api/queue 401" in log and "GET /api/queue 200" in log


@pytest.mark.slow
def test_answers_are_checked_like_the_terminal(root: Path) -> None:
    escalate(root, "s1")
    web = Web(root)
    auth = {**web.bearer, "Content-Type": "application/json"}

    def post(body: dict, extra: dict | None = None) -> tuple[int, dict]:
        status, raw = web.get("/api/answer", {**auth, **(extra or {})}, json.dumps(body).encode())
        return status, json.loads(raw)

    try:
        answer = {"session": "s1", "escalation_id": "esc-1", "action": "approve",
                  "operator": "ana"}
        assert post(answer)[0] == 403  # no X-Supervisor header: not from our page
        page = {"X-Supervisor": "1"}
        assert post({**answer, "operator": " "}, page) == (
            409, {"refused": "say who you are: the answer is recorded with your name"})
        assert post({**answer, "action": "rollback"}, page)[1]["refused"] == (
            "'rollback' is not an option of esc-1 (options: approve, guidance, skip, abort)")
        status, done = post(answer, page)  # no agent reads it: written, not applied
        assert status == 200 and done["operator"] == "ana", done
        assert post({**answer, "operator": "bo"}, page)[1]["refused"] == (
            "already answered by ana: approve (the agent has not applied it yet)")
        cli = run_cli("answer", "s1", "--skip", "--root", str(root))
        assert cli.returncode != 0 and "already answered by ana: approve" in cli.stderr
    finally:
        web.stop()
    control = (root / "sessions" / "s1" / "control.jsonl").read_text().splitlines()
    [decision] = [json.loads(line) for line in control]
    assert decision["operator"] == "ana" and decision["action"] == "approve"


@pytest.mark.slow
def test_a_port_in_use_is_one_line(root: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("web", "--root", str(root), "--port", str(port))
    assert result.returncode == 2
    assert result.stderr.strip() == (f"supervisor: error: port {port} on 127.0.0.1 is already "
                                     "in use: stop what uses it or choose another with --port")


@pytest.mark.slow
def test_a_fleet_store_is_answered_through_redis(root: Path, redis_server) -> None:
    """`supervisor web --store redis://...`: the queue comes from Redis (the relay shipped it),
    and the answer travels back through Redis into the agent host's control file."""
    from tests.redis_helpers import RelayThread, wait_for

    escalate(root, "s1")
    relay = RelayThread(root, redis_server.url(), "h1")
    web = Web(None, "--store", redis_server.url())
    auth = {"Authorization": f"Bearer {web.token}", "Content-Type": "application/json",
            "X-Supervisor": "1"}
    try:
        def queued() -> bool:
            _, body = web.get("/api/queue", auth)
            return [e["session"] for e in json.loads(body)["queue"]] == ["h1/s1"]

        wait_for(queued, 30, "the escalation to reach the web view through Redis")
        status, raw = web.get("/api/answer", auth, json.dumps(
            {"session": "h1/s1", "escalation_id": "esc-1", "action": "approve",
             "operator": "ana"}).encode())
        assert status == 200, raw
        control = root / "sessions" / "s1" / "control.jsonl"
        wait_for(lambda: control.exists() and control.read_text().strip() != "", 30,
                 "the relay to bring the decision back")
        [decision] = [json.loads(line) for line in control.read_text().splitlines()]
        assert decision["operator"] == "ana" and decision["escalation_id"] == "esc-1"
    finally:
        web.stop()
        relay.stop()


@pytest.mark.slow
def test_answers_take_what_their_kind_needs(root: Path) -> None:
    """Each option is offered as its kind says (`supervisor.protocol.decisions.KINDS`): its
    title, what it needs and the question asked before it is sent; a split takes its steps, a
    rollback a checkpoint the session recorded, and both are refused with the registry's
    words when what they need is missing."""
    from supervisor.protocol.decisions import KINDS

    with event_writer(root, "s1") as w:
        w.append({"type": "session_start", "agent": "test", "task": "fix it", "cwd": None,
                  "pid": None})
        w.append({"type": "escalation", "escalation_id": "esc-1", "level": 3,
                  "reason": "looping", "evidence": [], "deadline_ts": None,
                  "options": ["approve", "guidance", "skip", "abort", "split"],
                  "fallback": "skip", "kind": "detection", "call_id": "c1"})
    web = Web(root)
    auth = {**web.bearer, "Content-Type": "application/json", "X-Supervisor": "1"}

    def post(**fields: object) -> tuple[int, dict]:
        status, raw = web.get("/api/answer", auth, json.dumps(
            {"session": "s1", "escalation_id": "esc-1", "operator": "ana", **fields}).encode())
        return status, json.loads(raw)

    try:
        queue: list = []
        for _ in range(100):  # the server folds the store in the background
            queue = json.loads(web.get("/api/queue", auth)[1])["queue"]
            if queue:
                break
            time.sleep(0.05)
        [item] = queue
        assert [o["action"] for o in item["options"]] == [
            "approve", "guidance", "skip", "abort", "split"]
        for option in item["options"]:
            kind = KINDS[option["action"]]
            assert (option["title"], option["needs"], option["confirm"]) == (
                kind.title, kind.needs, kind.confirm)
        assert post(action="split", tasks=[" ", ""]) == (
            409, {"refused": "split needs 'tasks': a non-empty list of sub-tasks"})
        assert post(action="guidance", text="  ")[1] == {
            "refused": "guidance needs a text: write it first"}
        status, done = post(action="split", tasks=["Read the failing test", "Fix add()"])
        assert status == 200 and done["status"] == "written", done
    finally:
        web.stop()
    [decision] = [json.loads(line) for line in
                  (root / "sessions" / "s1" / "control.jsonl").read_text().splitlines()]
    assert decision["action"] == "split"
    assert decision["tasks"] == ["Read the failing test", "Fix add()"]


def test_before_its_first_read_the_queue_says_it_is_loading(root: Path) -> None:
    """An empty queue means nothing until the store has been read once (100,000 sessions
    take a while): the snapshot says `loading` until then, and how many sessions there are."""
    from supervisor.store.local import LocalStore
    from supervisor.web.queue import LiveQueue

    escalate(root, "s1")
    queue = LiveQueue(LocalStore(root))
    assert queue.snapshot()["loading"] is True
    queue.start()
    try:
        assert queue.loaded.wait(30)
        for _ in range(100):
            if queue.snapshot()["queue"]:
                break
            time.sleep(0.05)
        after = queue.snapshot()
        assert after["loading"] is False and after["total"] == 1
        assert [e["session"] for e in after["queue"]] == ["s1"]
    finally:
        queue.close()
    empty = LiveQueue(LocalStore(root / "empty"))
    empty.start()
    try:  # nothing to read: loaded at once, not loading for ever
        assert empty.loaded.wait(30) and empty.snapshot()["loading"] is False
    finally:
        empty.close()


def test_a_first_load_in_pieces_is_loaded_only_with_its_last_piece(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The follower delivers its first load in pieces, the newest sessions first: the page
    says `loading` until the last piece is in, so an empty queue is never shown while the
    escalation of an older session is still unread."""
    import os

    from supervisor.store import follower as follower_module
    from supervisor.store.local import LocalStore
    from supervisor.store.paths import session_files
    from supervisor.web.queue import LiveQueue

    escalate(root, "s0")  # the oldest: read last
    os.utime(session_files(root, "s0").events, (1e9, 1e9))
    for n in range(1, 4):
        with event_writer(root, f"s{n}") as w:
            w.append({"type": "session_start", "agent": "a", "task": f"t{n}"})
    monkeypatch.setattr(follower_module, "FIRST_LOAD_BYTES", 1)  # one session per piece
    read_piece = follower_module.Follower._read_piece

    def slowly(follower, session_ids, start):  # type: ignore[no-untyped-def]
        if start > 0:
            time.sleep(0.3)  # a large store: the later pieces take a while
        return read_piece(follower, session_ids, start)

    monkeypatch.setattr(follower_module.Follower, "_read_piece", slowly)
    queue = LiveQueue(LocalStore(root))
    queue.start()
    try:
        assert queue.loaded.wait(30)
        after = queue.snapshot()
        assert after["count"] == 4 and after["loading"] is False
        assert [e["session"] for e in after["queue"]] == ["s0"]
    finally:
        queue.close()
