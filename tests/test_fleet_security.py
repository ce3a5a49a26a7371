"""The Redis store's security, for real: the least-privilege ACL split on a private server (a
relay cannot write control, an operator cannot write events, a relay cannot touch another
host), passwords that never reach the screen, the refusal of an unauthenticated remote server,
and TLS with a CA made for the test.
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import redis
from conftest import run_cli
from redis_helpers import RedisServer, RelayThread, wait_for

from supervisor.operator.send import send_decision
from supervisor.store.errors import StoreError
from supervisor.store.open import StoreOptions, open_store
from supervisor.store.paths import session_files
from supervisor.store.redis.connect import parse_url
from supervisor.store.redis.layout import Layout
from supervisor.store.writer import event_writer

pytestmark = pytest.mark.slow
SECRETS = {"relay-h1": "r1-Secret-pw", "relay-h2": "r2-Secret-pw", "operator": "op-Secret-pw"}


def add_users(server: RedisServer) -> None:
    """The ACL of docs/fleet.md: a relay user per host and an operator user."""
    layout = Layout("sv")
    with server.admin() as admin:
        for user, password in SECRETS.items():
            rules = (layout.acl_rules("operator") if user == "operator"
                     else layout.acl_rules("relay", user.removeprefix("relay-")))
            admin.execute_command("ACL", "SETUSER", user, "reset", "on", f">{password}",
                                  *rules.split())


def as_user(server: RedisServer, user: str) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=server.port, username=user,
                       password=SECRETS[user], socket_timeout=10)


def start(root: Path, sid: str = "s") -> None:
    with event_writer(root, sid) as w:
        w.append({"type": "session_start", "agent": "bot", "task": None})


def test_the_acl_split_holds(tmp_path: Path, redis_server: RedisServer) -> None:
    add_users(redis_server)
    h1, h2 = tmp_path / "h1", tmp_path / "h2"
    start(h1)
    start(h2)
    relay1 = RelayThread(h1, redis_server.url("relay-h1", SECRETS["relay-h1"]), "h1")
    relay2 = RelayThread(h2, redis_server.url("relay-h2", SECRETS["relay-h2"]), "h2")
    operator = open_store(redis_server.url("operator", SECRETS["operator"]))
    try:
        wait_for(lambda: operator.session_ids() == ["h1/s", "h2/s"], 30, "both hosts shipped")
        assert [e.agent for e in operator.read_all("h1/s").events] == ["bot"]
        send_decision(operator, "h1/s", "pause", operator="ana")
        wait_for(session_files(h1, "s").control.exists, 30, "the decision on host h1")
        assert not session_files(h2, "s").control.exists()

        relay_h1 = as_user(redis_server, "relay-h1")
        for forbidden in (
            lambda: relay_h1.xadd("sv:ctl:h1/s", {"l": "{}"}),  # steer its own agents
            lambda: relay_h1.xadd("sv:ev:h2/s", {"l": "{}"}),  # forge another host's events
            lambda: relay_h1.hset("sv:host:h2", "s", "1 0 0 0-0"),
            lambda: relay_h1.xrange("sv:ev:h2/s"),  # read another host's events
            lambda: relay_h1.xrange("sv:ctl:h2/s"),
            lambda: relay_h1.flushall(),
        ):
            with pytest.raises(redis.exceptions.NoPermissionError):
                forbidden()
        op = as_user(redis_server, "operator")
        for forbidden in (
            lambda: op.xadd("sv:ev:h1/s", {"o": 0, "l": "{}"}),  # forge an agent's events
            lambda: op.hset("sv:host:h1", "s", "9 0 0 0-0"),
            lambda: op.delete("sv:ev:h1/s"),
            lambda: op.config_get("*"),
        ):
            with pytest.raises(redis.exceptions.NoPermissionError):
                forbidden()
        relay_as_operator = open_store(redis_server.url("relay-h1", SECRETS["relay-h1"]))
        with pytest.raises(StoreError, match="not allowed by the server's ACL"):
            send_decision(relay_as_operator, "h1/s", "abort", operator="mallory")
        relay_as_operator.close()
        assert len(session_files(h1, "s").control.read_text().splitlines()) == 1
    finally:
        relay1.stop()
        relay2.stop()
        operator.close()


def test_a_relay_with_another_hosts_credentials_ships_nothing(tmp_path: Path,
                                                              redis_server: RedisServer) -> None:
    add_users(redis_server)
    start(tmp_path / "h2")
    relay = RelayThread(tmp_path / "h2", redis_server.url("relay-h1", SECRETS["relay-h1"]), "h2")
    try:
        wait_for(lambda: any("not allowed by the server's ACL" in line for line in relay.logs),
                 30, "the refusal reported")
        with redis_server.admin() as admin:
            assert admin.exists("sv:ev:h2/s", "sv:host:h2") == 0
    finally:
        relay.stop()
    assert not any(SECRETS["relay-h1"] in line for line in relay.logs)


def test_passwords_never_reach_the_screen(root: Path, tmp_path: Path,
                                          redis_server: RedisServer) -> None:
    add_users(redis_server)
    wrong = redis_server.url("operator", "Wrong-Secret-123")
    result = run_cli("sessions", "--store", wrong)
    assert result.returncode == 2 and "authentication failed" in result.stderr
    assert "Wrong-Secret-123" not in result.stderr + result.stdout
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr

    start(root)
    url = redis_server.url("relay-h1", SECRETS["relay-h1"])
    relay = RelayThread(root, url, "h1")
    try:
        wait_for(lambda: redis_server.admin().exists("sv:ev:h1/s"), 30, "the session shipped")
    finally:
        relay.stop()
    status = run_cli("relay", "--status", "--root", str(root), "--store", url)
    assert "relay of host h1 to redis://relay-h1@127.0.0.1" in status.stdout
    for text in (status.stdout, status.stderr, *relay.logs,
                 *(p.read_text() for p in (root / "relay").glob("*.json"))):
        assert SECRETS["relay-h1"] not in text

    password_file = tmp_path / "operator.password"
    password_file.write_text(SECRETS["operator"] + "\n")
    user_only = redis_server.url("operator")
    by_file = run_cli("sessions", "--json", "--store", user_only, "--password-file",
                      str(password_file))
    assert by_file.returncode == 0, by_file.stderr
    assert [json.loads(x)["session"] for x in by_file.stdout.splitlines()] == ["h1/s"]
    by_env = run_cli("sessions", "--json", "--store", user_only,
                     SUPERVISOR_STORE_PASSWORD=SECRETS["operator"])
    assert by_env.returncode == 0 and "h1/s" in by_env.stdout
    by_env_file = run_cli("tail", "h1/s", SUPERVISOR_STORE=user_only,
                          SUPERVISOR_STORE_PASSWORD_FILE=str(password_file))
    assert by_env_file.returncode == 0 and "session_start" in by_env_file.stdout
    missing = run_cli("sessions", "--store", user_only, "--password-file",
                      str(tmp_path / "nope"))
    assert missing.returncode == 2 and "cannot read the password file" in missing.stderr


def test_an_unauthenticated_remote_redis_is_refused() -> None:
    result = run_cli("sessions", "--store", "redis://redis.invalid:6379/0")
    assert result.returncode == 2
    assert "refusing an unauthenticated connection to redis://redis.invalid:6379/0" \
        in result.stderr and "--insecure" in result.stderr
    relay = run_cli("relay", "--store", "redis://ops@redis.invalid/0")
    assert relay.returncode == 2 and "refusing an unauthenticated" in relay.stderr
    # what is allowed (nothing connects here: the client connects on first use)
    assert parse_url("redis://redis.invalid/0", StoreOptions(insecure=True)).host \
        == "redis.invalid"
    assert parse_url("redis://u:pw@redis.invalid/0", StoreOptions()).password == "pw"
    assert parse_url("redis://127.0.0.2:7000/3", StoreOptions()).loopback
    assert parse_url("redis://[::1]/0", StoreOptions()).loopback
    for bad, why in (("redis://h/x", "must be a number"), ("redis://127.0.0.1/0?color=1",
                     "unknown store URL option"), ("redis://127.0.0.1/0?ca=x",
                     "need TLS"), ("redis://127.0.0.1/0?prefix=a*", "invalid key prefix")):
        with pytest.raises(StoreError, match=why):
            parse_url(bad, StoreOptions())


@pytest.fixture
def certificates(tmp_path: Path) -> dict[str, str]:
    """A CA and a server certificate for 127.0.0.1, made with openssl for this test."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    d = tmp_path / "tls"
    d.mkdir()

    def ssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
        "-days", "2", "-subj", "/CN=supervisor-test-ca")
    ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=127.0.0.1")
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    ssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "ext.cnf")
    return {"ca": str(d / "ca.crt"), "cert": str(d / "server.crt"), "key": str(d / "server.key")}


def test_tls_for_real(root: Path, tmp_path: Path, certificates: dict[str, str]) -> None:
    server = RedisServer(tmp_path / "tls-redis", tls=certificates).start()
    try:
        start(root)
        url = server.url(ca=certificates["ca"])
        assert url.startswith("rediss://")
        relay = RelayThread(root, url, "h1")
        try:
            wait_for(lambda: run_cli("sessions", "--json", "--store", url).stdout.count("h1/s"),
                     30, "the session over TLS")
        finally:
            relay.stop()
        untrusted = run_cli("sessions", "--store", server.url())  # no CA: the system's
        assert untrusted.returncode == 2 and "certificate verify failed" in untrusted.stderr
        plain = run_cli("sessions", "--store", f"redis://127.0.0.1:{server.port}/0")
        assert plain.returncode == 2 and "cannot reach the server" in plain.stderr
    finally:
        server.stop()
