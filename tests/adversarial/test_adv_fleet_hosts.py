"""One host cannot blind the fleet (issue 24, item 5), on a real redis-server with the ACL of
docs/fleet.md.

A relay's ACL allowed `DEL sv:hosts`: after it, operators saw no session of any host (pending
escalations included), and the relay could forge "gone" entries for another host's sessions.
Now a relay has no `DEL` (it may add to the registry, not remove from it), its relay puts its
host back into the registry, and "gone" is believed only when the owning host's position hash
(which only that host's relay may write) no longer has the session."""

import time
from pathlib import Path

import pytest
import redis
from redis_helpers import RedisServer, RelayThread, wait_for

from supervisor.store.open import open_store
from supervisor.store.redis.backend import RedisFollower
from supervisor.store.writer import event_writer
from tests.test_fleet_security import SECRETS, add_users, as_user

pytestmark = pytest.mark.slow


def _start(root: Path, sid: str = "s") -> None:
    with event_writer(root, sid) as w:
        w.append({"type": "session_start", "agent": "bot", "task": None})


def test_a_relay_cannot_delete_the_registry_nor_forge_another_hosts_gone(
        tmp_path: Path, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from supervisor.store.redis import relay as relay_module

    monkeypatch.setattr(relay_module, "HEAL_S", 0.5)
    add_users(redis_server)
    h1, h2 = tmp_path / "h1", tmp_path / "h2"
    _start(h1)
    _start(h2)
    relay1 = RelayThread(h1, redis_server.url("relay-h1", SECRETS["relay-h1"]), "h1")
    relay2 = RelayThread(h2, redis_server.url("relay-h2", SECRETS["relay-h2"]), "h2")
    operator = open_store(redis_server.url("operator", SECRETS["operator"]))
    try:
        wait_for(lambda: operator.session_ids() == ["h1/s", "h2/s"], 30, "both hosts shipped")
        follower = RedisFollower(operator, rescan_interval=3600, block_ms=200)
        follower.scan()
        mallory = as_user(redis_server, "relay-h1")
        with pytest.raises(redis.exceptions.NoPermissionError):
            mallory.delete("sv:hosts")  # blind every operator
        with pytest.raises(redis.exceptions.NoPermissionError):
            mallory.delete("sv:activity")
        with pytest.raises(redis.exceptions.NoPermissionError):
            mallory.srem("sv:hosts", "h2")
        assert operator.session_ids() == ["h1/s", "h2/s"]
        # a forged "gone" for host h2's session, from host h1's credentials
        mallory.xadd("sv:activity", {"s": "h2/s", "k": "g"})
        gone = [b.session_id for _ in range(5) for b in follower._step(False) if b.gone]
        assert "h2/s" not in gone
        # the registry heals: lost by an admin's mistake, it comes back from the relays
        with redis_server.admin() as admin:
            admin.delete("sv:hosts")
        wait_for(lambda: operator.session_ids() == ["h1/s", "h2/s"], 30, "the registry healed")
    finally:
        relay1.stop()
        relay2.stop()
        operator.close()


def test_a_session_really_gone_from_its_host_is_still_gone(
        tmp_path: Path, redis_server: RedisServer) -> None:
    add_users(redis_server)
    h1 = tmp_path / "h1"
    _start(h1, "s")
    _start(h1, "t")
    relay1 = RelayThread(h1, redis_server.url("relay-h1", SECRETS["relay-h1"]), "h1")
    operator = open_store(redis_server.url("operator", SECRETS["operator"]))
    try:
        wait_for(lambda: operator.session_ids() == ["h1/s", "h1/t"], 30, "shipped")
        follower = RedisFollower(operator, rescan_interval=3600, block_ms=200)
        follower.scan()
        import shutil

        shutil.rmtree(h1 / "sessions" / "t")
        end = time.monotonic() + 30
        gone: list[str] = []
        while "h1/t" not in gone:
            assert time.monotonic() < end, "the vanished session was never reported gone"
            gone += [b.session_id for b in follower._step(False) if b.gone]
        assert "h1/s" not in gone
    finally:
        relay1.stop()
        operator.close()
