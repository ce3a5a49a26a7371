"""The native client without the C library (`native.NOLIBC`, `fastclient_nolibc.h`) against the
C library's static build of the same `fastclient.c`, side by side on the same inputs: the same
exit code, the same stdout bytes, the same stderr, the same bytes sent to the server.

The stand-in replaced trusted code (the C library's system call wrappers, `strtod`, `printf`,
`malloc`, `getcwd`, `strerror`) on every tool call of every agent with command hooks, so each
of its answers is held to the library's. The peer is a scripted fake server on the socket the
client looks for (every answer shape, a peer that closes early, is silent or slow, a socket
nobody may trust); the Python client behind both is a script that says what it was given, so a
fallback is seen with its arguments and its stdin. The real resident server's relay through the
build without the C library is tested in `tests/test_hook_native.py`."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supervisor import __version__
from supervisor.hooks import native

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux" or os.uname().machine != "x86_64"
                       or shutil.which("gcc") is None,
                       reason="the client without the C library is built for Linux x86-64, GCC"),
]

LIMIT = 16 * 1024 * 1024  # client.READ_LIMIT_BYTES
FALLBACK = """#!/bin/sh
printf 'fallback:'
for a in "$@"; do printf ' [%s]' "$a"; done
printf '\\n'
exec wc -c
"""


@dataclass
class Peer:
    """A fake resident server on `path`: each connection gets `answer` (bytes, sent `step`
    bytes at a time `pause` seconds apart), or `mode` 'silent' (reads the call, answers
    nothing, holding the connection open), 'header' (reads the header line, closes with the
    payload unread). What each connection sent is kept in `calls`."""

    path: Path
    answer: bytes = b"0\n"
    step: int = 0
    pause: float = 0.0
    mode: str = "answer"
    calls: list[bytes] = field(default_factory=list)

    @contextmanager
    def serve(self) -> Iterator["Peer"]:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.path))
        listener.listen(8)
        listener.settimeout(0.2)
        stop = threading.Event()

        def loop() -> None:
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                threading.Thread(target=self._one, args=(conn, stop), daemon=True).start()

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            stop.set()
            thread.join(5)
            listener.close()
            self.path.unlink(missing_ok=True)

    def _one(self, conn: socket.socket, stop: threading.Event) -> None:
        with conn:
            conn.settimeout(30)
            self._answer(conn, stop)

    def _answer(self, conn: socket.socket, stop: threading.Event) -> None:
        got = b""
        while True:
            try:
                chunk = conn.recv(1 << 20)
            except OSError:
                break
            got += chunk
            if not chunk or (self.mode == "header" and b"\n" in got):
                break
        self.calls.append(got)
        if self.mode == "header":
            return
        if self.mode == "silent":  # the connection held open, no answer, until the test ends
            stop.wait(60)
            return
        step = self.step or len(self.answer) or 1
        try:
            for at in range(0, len(self.answer), step):
                conn.sendall(self.answer[at:at + step])
                if self.pause:
                    time.sleep(self.pause)
        except OSError:
            pass


@dataclass
class Setup:
    builds: dict[str, Path]
    root: Path
    env: dict[str, str]
    fallback: Path
    socket: Path


def _key(env: dict[str, str]) -> str:
    """client.server_key for `env` and the fallback script's interpreter (its `#!`)."""
    text = "\0".join(("", "/bin/sh", __version__, env.get("HOME", ""),
                      env.get("XDG_CONFIG_HOME", ""), env["PATH"]))
    value = 0xCBF29CE484222325
    for byte in text.encode():
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"[:12]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    base = tmp_path_factory.mktemp("differential")
    fallback = base / "hook-client"
    fallback.write_text(FALLBACK)
    fallback.chmod(0o700)
    real = shutil.which("gcc")
    assert real is not None
    refusing = base / "bin" / "cc"
    refusing.parent.mkdir()
    refusing.write_text(f'#!/bin/sh\nfor a in "$@"; do [ "$a" = -nostdlib ] && exit 1; done\n'
                        f'exec {real} "$@"\n')
    refusing.chmod(0o755)
    builds = {}
    saved = {name: os.environ.get(name) for name in ("CC", "XDG_CACHE_HOME")}
    try:
        for name, compiler in (("nolibc", real), ("libc", str(refusing))):
            os.environ["CC"] = compiler
            os.environ["XDG_CACHE_HOME"] = str(base / f"cache-{name}")
            built = native.client([str(fallback)])
            assert built is not None, f"the {name} build was not made"
            builds[name] = built
    finally:
        native._found.clear()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    assert b"GLIBC" not in builds["nolibc"].read_bytes()
    assert b"GLIBC" in builds["libc"].read_bytes()
    root = base / "store"
    (root / "run").mkdir(parents=True, mode=0o700)
    home = base / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "SUPERVISOR_HOME": str(root)}
    yield Setup(builds, root, env, fallback, root / "run" / f"hook-{_key(env)}.sock")


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: bytes
    stderr: bytes
    seconds: float


def _run(program: Path, args: list[str], stdin: bytes | None, env: dict[str, str],
         cwd: Path | None = None, **popen: object) -> Outcome:
    started = time.monotonic()
    done = subprocess.run([str(program), *args], input=stdin, capture_output=True, env=env,
                          timeout=60, cwd=cwd, **popen)  # type: ignore[call-overload]
    return Outcome(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def _both(setup: Setup, args: list[str], stdin: bytes | None = b"{}",
          env: dict[str, str] | None = None, **popen: object) -> Outcome:
    """Run both builds; they agree on everything but time. The build without the library's."""
    outcomes = [_run(setup.builds[name], args, stdin, setup.env if env is None else env,
                     **popen) for name in ("nolibc", "libc")]
    nolibc, libc = outcomes
    assert (nolibc.code, nolibc.stdout, nolibc.stderr) == (libc.code, libc.stdout, libc.stderr)
    return nolibc


def _sent(calls: list[bytes]) -> list[tuple[bytes, bytes]]:
    """Each call as (header with the seconds left put aside, payload)."""
    found = []
    for call in calls:
        header, _, body = call.partition(b"\n")
        found.append((re.sub(rb'"timeout": [0-9.]+', b'"timeout": T', header), body))
    return found


@pytest.fixture
def peer(setup: Setup) -> Iterator[Peer]:
    with Peer(setup.socket).serve() as serving:
        yield serving


CALL = ["claude-code", "--timeout", "30"]


@pytest.mark.parametrize("size", [0, 1, 65536, LIMIT, LIMIT + 1])
def test_payloads_reach_the_server_alike(setup: Setup, peer: Peer, size: int) -> None:
    body = bytes(range(256)) * (size // 256 + 1)
    outcome = _both(setup, CALL, body[:size])
    assert outcome.code == 0 and outcome.stdout == b""
    first, second = _sent(peer.calls)
    assert first == second and first[1] == body[:min(size, LIMIT)]
    assert b'"target": "claude-code"' in first[0] and b'"reply": "raw"' in first[0]


@pytest.mark.parametrize("answer, code", [
    (b"0\n", 0),
    (b'0\n{"hookSpecificOutput": {"permissionDecision": "deny"}}\n', 0),
    (b"1\nrefused: \x00\xff binary\n", 1),
    (b"2\nsomething\n", 0),
    (b"1", 0),  # no newline: not an answer
    (b"", 0),  # closed without one: the fail-safe
    (b"0\n" + b"x" * (5 << 20), 0),  # a huge stdout
])
def test_every_answer_shape_is_printed_alike(setup: Setup, peer: Peer, answer: bytes,
                                             code: int) -> None:
    peer.answer = answer
    outcome = _both(setup, CALL)
    _head, newline, out = answer.partition(b"\n")
    assert outcome.code == code and outcome.stdout == (out if newline else b"")
    assert outcome.stderr == b""


def test_an_answer_sent_byte_by_byte_is_read_whole(setup: Setup, peer: Peer) -> None:
    peer.answer, peer.step, peer.pause = b'1\n{"decision": "block"}', 1, 0.002
    outcome = _both(setup, CALL)
    assert outcome.code == 1 and outcome.stdout == b'{"decision": "block"}'


def test_another_version_hands_the_payload_to_the_python_client(setup: Setup,
                                                               peer: Peer) -> None:
    peer.answer = b"version\n"
    outcome = _both(setup, [*CALL, "--root", str(setup.root)], b"x" * 1000)
    assert outcome.stdout.split(b"\n")[0] == (
        f"fallback: [claude-code] [--timeout] [30] [--root] [{setup.root}]".encode())
    assert outcome.stdout.split(b"\n")[1].strip() == b"1000"  # the payload, untouched


def test_a_peer_that_closes_with_the_call_unread_gets_the_fail_safe(setup: Setup,
                                                                   peer: Peer) -> None:
    peer.mode = "header"
    outcome = _both(setup, CALL)
    assert (outcome.code, outcome.stdout, outcome.stderr) == (0, b"", b"")


def test_a_silent_peer_is_left_in_time(setup: Setup, peer: Peer) -> None:
    peer.mode = "silent"
    outcome = _both(setup, ["claude-code", "--timeout", "1.2"])
    assert (outcome.code, outcome.stdout) == (0, b"")
    assert outcome.seconds < 1.2  # the reply margin (0.5 s) before the agent's timeout


def test_no_server_and_an_untrusted_one_go_to_the_python_client(setup: Setup) -> None:
    outcome = _both(setup, CALL, b"abc")
    assert outcome.stdout == b"fallback: [claude-code] [--timeout] [30]\n3\n"
    with Peer(setup.socket).serve() as peer:
        os.chmod(setup.root / "run", 0o770)  # a directory others may write to
        try:
            outcome = _both(setup, CALL, b"abc")
        finally:
            os.chmod(setup.root / "run", 0o700)
        time.sleep(0.2)  # (the peer's threads see the clients hang up)
        assert set(peer.calls) <= {b""}  # connected, then not trusted: nothing sent
    assert outcome.stdout == b"fallback: [claude-code] [--timeout] [30]\n3\n"


@pytest.mark.parametrize("args", [
    [], ["--check", "x"], ["no-such-target"], ["claude-code", "--timeout"],
    ["claude-code", "--timeout", "0"], ["claude-code", "--timeout", "-1"],
    ["claude-code", "--timeout=1e309"], ["claude-code", "--timeout", "1e-400"],
    ["claude-code", "--timeout", "nan"], ["claude-code", "--timeout", "inf"],
    ["claude-code", "--timeout", "86400.0000001"], ["claude-code", "--verbose"],
    ["claude-code", "--root", "relative"], ["claude-code", "--root", "/a/../b"],
    ["claude-code", "--root=~nobody/x"], ["claude-code", "--root", "\udcff"],
])
def test_command_lines_it_does_not_take_go_to_the_python_client_alike(
        setup: Setup, peer: Peer, args: list[str]) -> None:
    outcome = _both(setup, args, b"{}")
    assert outcome.stdout.startswith(b"fallback:") and peer.calls == []


def test_check_and_the_environment(setup: Setup, peer: Peer) -> None:
    check = _both(setup, ["--check"])
    assert check.stdout == f"{__version__}\n{setup.fallback}\n".encode()
    # no HOME: another server key (nobody listens there), so the Python client
    bare = {k: v for k, v in setup.env.items() if k != "HOME"}
    assert _both(setup, CALL, env=bare).stdout.startswith(b"fallback:")
    # a huge environment, and the variables the header carries
    huge = dict(setup.env, SUPERVISOR_RUN_SESSION="run-\u00e9", SUPERVISOR_RUN_PID="4242",
                **{f"FILLER_{i}": "v" * 1000 for i in range(1500)})
    assert _both(setup, CALL, env=huge).code == 0
    long_pid = dict(setup.env, SUPERVISOR_RUN_SESSION="s", SUPERVISOR_RUN_PID="9" * 19)
    assert _both(setup, CALL, env=long_pid).stdout.startswith(b"fallback:")
    sent = _sent(peer.calls)
    assert sent[0] == sent[1] and b'"run": ["run-\xc3\xa9", 4242]' in sent[0][0]


def test_stdin_closed_and_stdout_closed(setup: Setup, peer: Peer) -> None:
    peer.answer = b"0\n" + b"y" * (1 << 20)
    closed_in = _both(setup, CALL, None, preexec_fn=lambda: os.close(0))
    assert closed_in.code == 0 and len(closed_in.stdout) == 1 << 20
    assert [body for _, body in _sent(peer.calls)] == [b"", b""]
    # the agent closed the read end of stdout: SIGPIPE ends both alike
    outcomes = []
    for name in ("nolibc", "libc"):
        read, write = os.pipe()
        os.close(read)
        proc = subprocess.Popen([str(setup.builds[name]), *CALL], stdin=subprocess.DEVNULL,
                                stdout=write, stderr=subprocess.PIPE, env=setup.env)
        os.close(write)
        _, err = proc.communicate(timeout=60)
        outcomes.append((proc.returncode, err))
    assert outcomes[0] == outcomes[1] == (-signal.SIGPIPE, b"")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_waiting_ends_both_alike(setup: Setup, peer: Peer, sig: int) -> None:
    peer.mode = "silent"
    codes = []
    for name in ("nolibc", "libc"):
        count = len(peer.calls)
        proc = subprocess.Popen([str(setup.builds[name]), *CALL], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=setup.env)
        end = time.monotonic() + 30
        while len(peer.calls) == count and time.monotonic() < end:
            time.sleep(0.01)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        codes.append((proc.returncode, out, err))
    assert codes[0] == codes[1] == (-sig, b"", b"")


def test_a_stop_and_continue_mid_wait_is_not_an_answer(setup: Setup, peer: Peer) -> None:
    """SIGSTOP and SIGCONT interrupt the wait (EINTR with a receive time-out set): both read
    on and print the answer."""
    peer.answer, peer.step, peer.pause = b"1\nlate", 3, 0.3
    codes = []
    for name in ("nolibc", "libc"):
        proc = subprocess.Popen([str(setup.builds[name]), *CALL], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=setup.env)
        time.sleep(0.1)
        proc.send_signal(signal.SIGSTOP)
        time.sleep(0.1)
        proc.send_signal(signal.SIGCONT)
        out, err = proc.communicate(timeout=60)
        codes.append((proc.returncode, out, err))
    assert codes[0] == codes[1] == (1, b"late", b"")


def test_a_python_client_that_cannot_run_is_named_with_the_cause(setup: Setup) -> None:
    """The one message the client writes for the operator: the C library's build says why the
    Python client could not be run; the stand-in said only 'a system call failed'."""
    off = dict(setup.env, SUPERVISOR_HOOK_DAEMON="0")
    moved = setup.fallback.with_name("moved")
    setup.fallback.rename(moved)
    try:
        gone = _both(setup, CALL, env=off)
    finally:
        moved.rename(setup.fallback)
    assert gone.code == 0 and b"No such file or directory" in gone.stderr
    setup.fallback.chmod(0o600)
    try:
        refused = _both(setup, CALL, env=off)
    finally:
        setup.fallback.chmod(0o700)
    assert refused.code == 0 and b"Permission denied" in refused.stderr


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=3000), status=st.sampled_from([b"0", b"1", b"2", b"", b"01"]),
       out=st.binary(max_size=3000), step=st.sampled_from([0, 1, 7, 4096]))
def test_any_payload_and_answer_alike(setup: Setup, peer: Peer, body: bytes, status: bytes,
                                      out: bytes, step: int) -> None:
    peer.calls.clear()
    peer.answer, peer.step = status + b"\n" + out, step
    outcome = _both(setup, CALL, body)
    assert outcome.code == (1 if status == b"1" else 0) and outcome.stdout == out
    first, second = _sent(peer.calls)
    assert first == second and first[1] == body


@pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root")
def test_a_working_directory_outside_the_root_is_not_sent_as_a_path(setup: Setup,
                                                                    tmp_path: Path) -> None:
    """A process whose working directory lies outside its root (a chroot, another mount
    namespace) gets `(unreachable)/...` from the kernel's getcwd; the C library fails it
    (ENOENT), so the client hands the call on instead of sending that as the call's cwd."""
    jail = Path(tempfile.mkdtemp(prefix="jail-"))  # short: the socket's path must fit AF_UNIX
    (jail / "store" / "run").mkdir(parents=True, mode=0o700)
    outside = tmp_path / "outside"
    outside.mkdir()
    env = dict(setup.env, SUPERVISOR_HOME="/store")
    for name, build in setup.builds.items():
        shutil.copy(build, jail / name)
    try:
        with Peer(jail / "store" / "run" / setup.socket.name).serve() as peer:
            outcomes = [subprocess.run([f"/{name}", *CALL], input=b"{}", capture_output=True,
                                       env=env, cwd=outside, timeout=60,
                                       preexec_fn=lambda: os.chroot(jail))
                        for name in ("nolibc", "libc")]
    finally:
        shutil.rmtree(jail)
    assert b"(unreachable)" not in b"".join(peer.calls)
    nolibc, libc = [(done.returncode, done.stdout, done.stderr) for done in outcomes]
    assert nolibc == libc and b"cannot run the Python client" in libc[2]


@pytest.mark.parametrize("target", ["droid", "claude-code"])
def test_both_builds_answer_and_record_a_captured_session_alike_with_the_real_server(
        tmp_path: Path, target: str) -> None:
    """A captured session replayed through each build against the real resident server (each
    its own root; the first call finds no server, so the Python client starts it), an
    operator's abort halfway: the same answers, exit codes and events."""
    from supervisor.operator.send import send_decision
    from tests.conftest import cli_env
    from tests.hook_helpers import CAPTURED, events, native_command

    real = shutil.which("gcc")
    assert real is not None
    refusing = tmp_path / "bin" / "cc"
    refusing.parent.mkdir()
    refusing.write_text(f'#!/bin/sh\nfor a in "$@"; do [ "$a" = -nostdlib ] && exit 1; done\n'
                        f'exec {real} "$@"\n')
    refusing.chmod(0o755)
    saved = {name: os.environ.get(name) for name in ("CC", "XDG_CACHE_HOME")}
    try:
        os.environ["CC"] = str(refusing)
        os.environ["XDG_CACHE_HOME"] = str(tmp_path / "cache")
        libc = native.client([sys.executable, "-m", "supervisor.hooks.client"])
    finally:
        native._found.clear()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    nolibc = Path(native_command()[0])
    assert libc is not None and b"GLIBC" in libc.read_bytes()
    assert b"GLIBC" not in nolibc.read_bytes()
    lines = [json.loads(line) for line in CAPTURED[target].read_text().splitlines() if line]
    bodies = [json.dumps(line["payload"]).encode() for line in lines]
    sessions = {line["payload"].get("session_id") for line in lines} - {None}
    seen: dict[str, list[tuple[int, bytes]]] = {"nolibc": [], "libc": []}
    for i, body in enumerate(bodies):
        for name, program in (("nolibc", nolibc), ("libc", libc)):
            root = tmp_path / name
            if i == len(bodies) // 2:
                for session in sessions:
                    send_decision(root, str(session), "abort", operator="ana")
            done = subprocess.run([str(program), target, "--timeout", "60"], input=body,
                                  capture_output=True, timeout=60,
                                  env=cli_env(SUPERVISOR_HOME=str(root)))
            seen[name].append((done.returncode, done.stdout.replace(name.encode(), b"ROOT")))
    assert seen["nolibc"] == seen["libc"]
    assert any(out for _, out in seen["nolibc"][len(bodies) // 2:])  # the abort's refusals

    def recorded(root: Path) -> list[tuple[str, str, str]]:
        return [(str(session), e["type"], str(e.get("call_id", "")))
                for session in sorted(sessions, key=str) for e in events(root, str(session))
                if e["type"] not in ("heartbeat", "supervisor_error")]

    assert recorded(tmp_path / "nolibc") == recorded(tmp_path / "libc")
    assert any(kind == "tool_call" for _, kind, _ in recorded(tmp_path / "nolibc"))


def test_a_long_python_client_path_is_printed_whole(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A Python client whose path is longer than the stand-in's 1,024-byte line: `--check`
    printed it cut, so the build without the C library failed its check (the C library's
    build was used), and the message that it cannot be run named half of it."""
    deep = tmp_path.joinpath(*["d" * 200] * 8) / "python3"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    try:
        built = native.client([str(deep), "-m", "supervisor.hooks.client"])
    finally:
        native._found.clear()
    assert built is not None and b"GLIBC" not in built.read_bytes()
    done = subprocess.run([str(built), "claude-code"], input=b"{}", capture_output=True,
                          env={"SUPERVISOR_HOOK_DAEMON": "0"}, timeout=60)
    assert done.returncode == 0
    assert done.stderr == (f"supervisor-hook: cannot run the Python client {deep}: "
                           "No such file or directory\n").encode()
