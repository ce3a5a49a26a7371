"""The native hook client (`supervisor/hooks/fastclient.c`) in real processes: it relays a call to
the resident server with no Python started, answers as the Python client does, and hands every
call it cannot relay (no server, a killed server, a server it does not trust, an unusual command
line) to the Python client, so no call goes unsupervised.

Whether a Python process ran is read from the process itself: with `PYTHONPROFILEIMPORTTIME=1`
every interpreter writes its imports to stderr, so a relayed call has an empty stderr."""

import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from supervisor.hooks import native
from supervisor.operator.send import send_decision
from tests.conftest import cli_env
from tests.hook_helpers import CAPTURED, events, native_command, payload
from tests.hookd_helpers import server_pids


def _hook(command: list[str], body: dict | bytes, root: Path,
          **env: str) -> subprocess.CompletedProcess[str]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    done = subprocess.run(command, input=data, capture_output=True, timeout=60,
                          env=cli_env(SUPERVISOR_HOME=str(root), PYTHONPROFILEIMPORTTIME="1",
                                      **env))
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(),
                                       done.stderr.decode())


def _python_ran(done: subprocess.CompletedProcess[str]) -> bool:
    return "import time:" in done.stderr


def _read(ws: Path, i: int, session: str = "loop-1") -> dict:
    return payload("PreToolUse", session, cwd=ws, tool_name="Read",
                   tool_input={"file_path": f"/w/f{i}.py"}, tool_use_id=f"toolu_{i}")


def _wait_server(root: Path, other_than: int | None = None) -> int:
    end = time.monotonic() + 30
    while time.monotonic() < end:
        pids = [p for p in server_pids(root) if p != other_than]
        if pids and list((root / "run").glob("hook-*.sock")):
            return pids[0]
        time.sleep(0.05)
    raise AssertionError("no server")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.mark.slow
def test_calls_are_relayed_with_no_python_once_the_server_runs(tmp_path: Path, ws: Path) -> None:
    root = tmp_path / "store"
    first = _hook(native_command("--timeout", "60"), _read(ws, 0), root)
    assert first.returncode == 0 and first.stdout == ""
    assert _python_ran(first)  # no server yet: the Python client handled it and started one
    pid = _wait_server(root)
    for i in (1, 2):
        done = _hook(native_command("--timeout", "60"), _read(ws, i), root)
        assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    assert server_pids(root) == [pid]
    calls = [e["call_id"] for e in events(root, "loop-1") if e["type"] == "tool_call"]
    assert calls == ["toolu_0", "toolu_1", "toolu_2"]
    # a refusal comes back through the relay exactly as the Python client prints it
    send_decision(root, "loop-1", "abort", operator="ana")
    relayed = _hook(native_command("--timeout", "60"), _read(ws, 3), root)
    assert relayed.stderr == ""
    client = [sys.executable, "-m", "supervisor.hooks.client", "claude-code", "--timeout", "60"]
    for i in (0, 1, 2):
        _hook(client, _read(ws, i, "loop-2"), root)
    send_decision(root, "loop-2", "abort", operator="ana")
    python = _hook(client, _read(ws, 3, "loop-2"), root)
    answer = json.loads(relayed.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert relayed.stdout.replace("loop-1", "loop-2") == python.stdout


@pytest.mark.slow
def test_a_killed_server_leaves_no_call_unsupervised(tmp_path: Path, ws: Path) -> None:
    root = tmp_path / "store"
    _hook(native_command("--timeout", "60"), _read(ws, 0), root)
    first = _wait_server(root)
    assert _hook(native_command("--timeout", "60"), _read(ws, 1), root).stderr == ""
    os.kill(first, signal.SIGKILL)  # mid-session: its socket file stays behind
    time.sleep(0.2)
    send_decision(root, "loop-1", "abort", operator="ana")
    done = _hook(native_command("--timeout", "60"), _read(ws, 2), root)
    assert _python_ran(done)  # the Python client took the call and started a new server
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    second = _wait_server(root, other_than=first)
    served = _hook(native_command("--timeout", "60"), _read(ws, 3), root)
    assert served.stderr == "" and server_pids(root) == [second]
    assert json.loads(served.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    calls = [e["call_id"] for e in events(root, "loop-1") if e["type"] == "tool_call"]
    assert calls == ["toolu_0", "toolu_1"]  # the operator's abort refused the later ones


@pytest.mark.slow
def test_what_it_does_not_handle_goes_to_the_python_client(tmp_path: Path, ws: Path) -> None:
    root = tmp_path / "store"
    _hook(native_command("--timeout", "60"), _read(ws, 0), root)
    _wait_server(root)
    # the Python client's own message for a bad command line, exit 1 (never 2)
    bad = _hook(native_command("--timeout", "soon"), _read(ws, 1), root)
    assert bad.returncode == 1 and "--timeout must be a number" in bad.stderr
    # the in-process path when asked for
    off = _hook(native_command("--timeout", "60"), _read(ws, 2), root, SUPERVISOR_HOOK_DAEMON="0")
    assert off.returncode == 0 and _python_ran(off)
    # an environment whose paths it does not normalise itself: relayed by the Python client
    odd = _hook(native_command("--timeout", "60", "--root", f"{root}/./"), _read(ws, 3), root)
    assert odd.returncode == 0 and _python_ran(odd)
    calls = [e["call_id"] for e in events(root, "loop-1") if e["type"] == "tool_call"]
    assert calls == ["toolu_0", "toolu_2", "toolu_3"]


READ_SYSCALLS = {"x86_64": "0", "aarch64": "63"}


@pytest.mark.slow
def test_the_client_connects_only_once_it_has_the_whole_payload(tmp_path: Path, ws: Path) -> None:
    """While the agent has not finished writing the payload the client holds no connection, so
    an agent slow to write keeps none of the server's workers waiting, and the server reads the
    whole call at the one wake-up of its `accept` (header and payload in one send): before, the
    client connected first and the server woke for the header, the payload and the end apart."""
    read = READ_SYSCALLS.get(os.uname().machine)
    if read is None or not Path("/proc/self/syscall").exists():
        pytest.skip("no /proc/PID/syscall for this machine: cannot see the client wait on stdin")
    root = tmp_path / "store"
    _hook(native_command("--timeout", "60"), _read(ws, 0), root)
    _wait_server(root)
    proc = subprocess.Popen(native_command("--timeout", "60"), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=cli_env(SUPERVISOR_HOME=str(root)))
    try:
        end = time.monotonic() + 30
        while Path(f"/proc/{proc.pid}/syscall").read_text().split()[:2] != [read, "0x0"]:
            assert proc.poll() is None and time.monotonic() < end, "it never read its stdin"
            time.sleep(0.01)
        fds = Path(f"/proc/{proc.pid}/fd")
        assert not [fd for fd in fds.iterdir() if os.readlink(fd).startswith("socket:")]
        out, err = proc.communicate(json.dumps(_read(ws, 1)).encode(), timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and out == b"" and err == b""  # relayed, no Python started
    calls = [e["call_id"] for e in events(root, "loop-1") if e["type"] == "tool_call"]
    assert calls == ["toolu_0", "toolu_1"]


@pytest.mark.slow
def test_codex_sessions_share_one_server_though_each_adds_its_own_path_entry(
        tmp_path: Path, ws: Path) -> None:
    """Codex puts a fresh `$CODEX_HOME/tmp/arg0-linux/codex-arg0XXXXXX` in front of PATH in
    every run: the server key leaves it out, so the next session's calls reach the server the
    first one started (before, each session started a server of its own), and that server's
    PATH has no such entry."""
    root = tmp_path / "store"
    codex_tmp = tmp_path / "codex-home" / "tmp" / "arg0-linux"
    base = os.environ["PATH"]

    def codex_path(run: str) -> str:
        return f"{codex_tmp / ('codex-arg0' + run)}:{base}"

    first = _hook(native_command("--timeout", "60", target="codex"), _read(ws, 0), root,
                  PATH=codex_path("A1b2C3"))
    assert first.returncode == 0 and _python_ran(first)  # no server yet: the Python client
    pid = _wait_server(root)
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    assert f"PATH={base}".encode() in environ
    relayed = _hook(native_command("--timeout", "60", target="codex"), _read(ws, 1), root,
                    PATH=codex_path("Zz9y8X"))
    assert relayed.returncode == 0 and relayed.stderr == ""  # relayed: no Python started
    client = [sys.executable, "-m", "supervisor.hooks.client", "codex", "--timeout", "60"]
    python = _hook(client, _read(ws, 2), root, PATH=codex_path("q7R6s5"))
    assert python.returncode == 0
    # an entry that only looks alike is still the agent's own PATH: a server of its own
    other = _hook(client, _read(ws, 3), root, PATH=f"{tmp_path / 'codex-arg0x'}:{base}")
    assert other.returncode == 0
    end = time.monotonic() + 30
    while len(server_pids(root)) < 2 and time.monotonic() < end:
        time.sleep(0.05)
    assert len(server_pids(root)) == 2 and pid in server_pids(root)
    assert len(list((root / "run").glob("hook-*.sock"))) == 2
    log = (root / "run" / "hookd.log").read_text()
    assert log.count("starting a server") == 2  # the first call's and the look-alike's
    calls = [e["call_id"] for e in events(root, "loop-1") if e["type"] == "tool_call"]
    assert calls == ["toolu_0", "toolu_1", "toolu_2", "toolu_3"]


def test_the_build_is_private_and_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = Path(native_command()[0])
    for path in (program.parent, program.parent.parent):
        assert path.stat().st_mode & 0o077 == 0 and path.stat().st_uid == os.geteuid()
    check = subprocess.run([str(program), "--check"], capture_output=True, text=True, timeout=30)
    assert check.stdout.splitlines() == [__import__("supervisor").__version__, sys.executable]
    assert native.fallback_of(str(program)) == sys.executable
    # a build another user could have replaced is never used
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "cache" / "agent-supervisor").mkdir(parents=True)
    os.chmod(tmp_path / "cache" / "agent-supervisor", 0o755)  # ours, readable by others
    fallback = [sys.executable, "-m", "supervisor.hooks.client"]
    built = native.client(fallback)
    assert built is not None and built != program
    assert (tmp_path / "cache" / "agent-supervisor").stat().st_mode & 0o777 == 0o700
    os.chmod(built, 0o755)
    native._found.clear()
    again = native.client(fallback)  # the next build of native.FLAGS, made private and checked
    assert again != built and (again is None or again.stat().st_mode & 0o077 == 0)


def _interpreter(program: Path) -> bytes | None:
    """The dynamic loader an ELF64 little-endian program names (`PT_INTERP`); None when it is
    linked statically."""
    data = program.read_bytes()
    assert data[:6] == b"\x7fELF\x02\x01", "not an ELF64 little-endian program"
    phoff, = struct.unpack_from("<Q", data, 0x20)
    size, count = struct.unpack_from("<HH", data, 0x36)
    for i in range(count):
        kind, _flags, offset, _vaddr, _paddr, length = struct.unpack_from(
            "<IIQQQQ", data, phoff + i * size)
        if kind == 3:  # PT_INTERP
            return data[offset:offset + length].rstrip(b"\0")
    return None


def test_the_client_is_linked_statically_where_the_c_library_allows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = Path(native_command()[0])
    libc = subprocess.run(["cc", "-print-file-name=libc.a"], capture_output=True, text=True,
                          timeout=30).stdout.strip()
    assert (_interpreter(program) is None) == os.path.isabs(libc)  # else cc just echoes the name
    # a compiler that cannot link statically: the dynamically linked build, checked and working
    real = shutil.which("cc")
    assert real is not None
    fake = tmp_path / "bin" / "cc"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\nfor a in "$@"; do [ "$a" = -static ] && exit 1; done\n'
                    f'exec {real} "$@"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fallback = [sys.executable, "-m", "supervisor.hooks.client"]
    built = native.client(fallback)
    assert built is not None and _interpreter(built) is not None
    check = subprocess.run([str(built), "--check"], capture_output=True, text=True, timeout=30)
    assert check.stdout.splitlines() == [__import__("supervisor").__version__, sys.executable]
    native._found.clear()
    assert native.client(fallback) == built  # found again, not built again


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux" or os.uname().machine != "x86_64",
                    reason="the client without the C library is built for Linux on x86-64")
def test_the_client_is_built_without_the_c_library_and_the_c_librarys_build_still_relays(
        tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first build (`native.NOLIBC`, fastclient_nolibc.h) is the one installed here: no C
    library started in the process an agent starts per hook. Where that build cannot be made
    (here: a compiler that refuses `-nostdlib`), the C library's build is made and relays."""
    program = Path(native_command()[0])
    assert b"GLIBC" not in program.read_bytes() and _interpreter(program) is None
    real = shutil.which("cc")
    assert real is not None
    fake = tmp_path / "bin" / "cc"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\nfor a in "$@"; do [ "$a" = -nostdlib ] && exit 1; done\n'
                    f'exec {real} "$@"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    built = native.client([sys.executable, "-m", "supervisor.hooks.client"])
    assert built is not None and b"GLIBC" in built.read_bytes()
    root = tmp_path / "store"
    command = [str(built), "claude-code", "--timeout", "60"]
    assert _python_ran(_hook(command, _read(ws, 0), root))  # no server yet: it starts one
    _wait_server(root)
    relayed = _hook(command, _read(ws, 1), root)
    assert relayed.returncode == 0 and relayed.stdout == "" and not _python_ran(relayed)
    calls = [e["call_id"] for e in events(root, "loop-1") if e["type"] == "tool_call"]
    assert calls == ["toolu_0", "toolu_1"]


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux" or os.uname().machine != "x86_64",
                    reason="the client without the C library is built for Linux on x86-64")
def test_a_build_failing_its_check_gives_way_to_the_next_build_not_the_python_client(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build without the C library made once, failing its check since (here: a program
    that answers nothing, as one whose system calls a sandbox refuses would): the C library's
    build is made and used. Before, the first build found decided: every hook of every
    install ran the Python client, an interpreter start a call."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fallback = [sys.executable, "-m", "supervisor.hooks.client"]
    first = native.client(fallback)
    assert first is not None and b"GLIBC" not in first.read_bytes()
    first.write_text("#!/bin/sh\nexit 1\n")
    native._found.clear()
    built = native.client(fallback)
    assert built is not None and built != first and b"GLIBC" in built.read_bytes()
    check = subprocess.run([str(built), "--check"], capture_output=True, text=True, timeout=30)
    assert check.stdout.splitlines() == [__import__("supervisor").__version__, sys.executable]
    native._found.clear()
    assert native.client(fallback) == built  # found again, the failing one passed over


HARDENING = ("-fstack-protector-strong -fstack-clash-protection -fcf-protection "
             "-D_FORTIFY_SOURCE=3 -fPIE -pie -Wl,-z,relro,-z,now -ftrivial-auto-var-init=zero")
"""What Debian's and Ubuntu's GCC enable by default (their specs: as if given first), with the
automatic variables' initialisation some distributions add."""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux" or os.uname().machine != "x86_64"
                    or shutil.which("gcc") is None,
                    reason="the client without the C library is built for Linux on x86-64, GCC")
@pytest.mark.parametrize("where, nolibc", [("first", True), ("last", False)])
def test_a_compiler_hardened_by_default_still_gives_a_checked_client(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, nolibc: bool) -> None:
    """A stack protector, CET's end-branch marks, _FORTIFY_SOURCE, PIE and zeroed variables
    enabled by default (before the build's own flags): `native.NOLIBC` turns off what needs the
    C library (the canary in thread-local storage, a relocating loader) and the build without
    the library is made. Given after them, so that they win, its link or check fails and the
    C library's build is made: slower to start, never the Python client, never unchecked."""
    real = shutil.which("gcc")
    fake = tmp_path / "bin" / "cc"
    fake.parent.mkdir()
    line = f'{real} {HARDENING} "$@"' if where == "first" else f'{real} "$@" {HARDENING}'
    fake.write_text(f"#!/bin/sh\nexec {line}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    built = native.client([sys.executable, "-m", "supervisor.hooks.client"])
    assert built is not None and (b"GLIBC" not in built.read_bytes()) == nolibc
    check = subprocess.run([str(built), "--check"], capture_output=True, text=True, timeout=30)
    assert check.stdout.splitlines() == [__import__("supervisor").__version__, sys.executable]


STAND_IN_CHECK = r"""
int main(int argc, char **argv) {
    char name[4096];
    snprintf(name, sizeof name, "%s/made-XXXXXX", argv[1]);
    int fd = mkstemp(name), again = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    printf("%d %d %s\n", fd >= 0, again < 0 && errno == EEXIST, strstr(name, "XXXXXX") ? "x" : "-");
    printf("%016llx|\\u%04x|%.6f|%.6f|%llu|%d\n", 0xCBF29CE484222325ULL, 0x1f, 59.9998125, 0.0,
           18446744073709551615ULL, -42);
    const char *numbers[] = {"600", "1.5e+3", ".5", "5.", "1e", "+-1", "1e-400", 0};
    for (int i = 0; numbers[i]; i++) {
        char *end;
        errno = 0;
        double t = strtod(numbers[i], &end);
        printf("%s=%.6f,%d,%s ", numbers[i], t, errno, end);
    }
    printf("\n%s %s\n", getenv("STAND_IN") ? getenv("STAND_IN") : "(none)", argc == 2 ? "" : "?");
    return unlink(name) == 0 ? 3 : 4;
}
"""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux" or os.uname().machine != "x86_64"
                    or shutil.which("gcc") is None, reason="the stand-in is for Linux x86-64, GCC")
def test_the_c_library_stand_in_does_what_the_client_asks_of_it(tmp_path: Path) -> None:
    """`fastclient_nolibc.h`'s formats, number parsing, files and environment, as the client
    uses them (its relay is tested through the built client above)."""
    source = tmp_path / "check.c"
    source.write_text("#define SUPERVISOR_NOLIBC 1\n" + native.NOLIBC_SOURCE.read_text()
                      + STAND_IN_CHECK)
    subprocess.run(["gcc", *native.NOLIBC, "-o", str(tmp_path / "check"), str(source)],
                   check=True, capture_output=True, timeout=120)
    done = subprocess.run([str(tmp_path / "check"), str(tmp_path)], capture_output=True,
                          text=True, timeout=30, env={"STAND_IN": "here"})
    assert done.returncode == 3  # the file mkstemp made was there to remove
    assert done.stdout.splitlines() == [
        "1 1 -",
        "cbf29ce484222325|\\u001f|59.999812|0.000000|18446744073709551615|-42",
        "600=600.000000,0, 1.5e+3=1500.000000,0, .5=0.500000,0, 5.=5.000000,0, "
        "1e=1.000000,0,e +-1=0.000000,0,+-1 1e-400=0.000000,0, ",
        "here ",
    ]
    assert not list(tmp_path.glob("made-*"))


def test_doctor_checks_the_native_client_and_its_fallback(tmp_path: Path) -> None:
    from supervisor.cli.doctor_cmd import check
    from supervisor.hooks.installed import unresolved

    program = native_command()[0]
    problem, what = check({"type": "command", "command": f"{program} claude-code"})
    assert problem is None and "native" in what and sys.executable in what
    # its Python client gone (the environment removed): the native one cannot start a server
    copy = tmp_path / "hook-client" / "supervisor-hook"
    copy.parent.mkdir()
    copy.write_bytes(Path(program).read_bytes())
    copy.chmod(0o700)
    (copy.parent / native.FALLBACK_NOTE).write_text(str(tmp_path / "gone" / "python") + "\n")
    problem, _ = unresolved(f"{copy} claude-code")
    assert problem is not None and "falls back to" in problem and "gone" in problem


def _recorded(root: Path) -> list[tuple[str, str]]:
    """Every session's events as (type, call id), in order, sessions by name."""
    found = []
    for directory in sorted((root / "sessions").iterdir()):
        found += [(e["type"], str(e.get("call_id", ""))) for e in events(root, directory.name)
                  if e["type"] not in ("heartbeat", "supervisor_error")]
    return found


@pytest.mark.slow
@pytest.mark.parametrize("target", sorted(CAPTURED))
def test_every_target_is_answered_alike_with_its_server_killed_mid_session(
        tmp_path: Path, target: str) -> None:
    """A captured session replayed through the native client, its server killed halfway,
    answers and records what the same session replayed through the Python client does."""
    data = CAPTURED[target]
    payloads = [json.dumps(json.loads(line)["payload"]).encode()
                for line in data.read_text().splitlines() if line.strip()]
    python = [sys.executable, "-m", "supervisor.hooks.client", target, "--timeout", "60"]
    native, reference = tmp_path / "native", tmp_path / "python"
    answers: dict[str, list[str]] = {"native": [], "python": []}
    relayed = []
    for i, body in enumerate(payloads):
        if i == len(payloads) // 2:
            first = _wait_server(native)
            os.kill(first, signal.SIGKILL)  # mid-session: the next call finds a dead socket
            time.sleep(0.2)
        done = _hook(native_command("--timeout", "60", target=target), body, native)
        assert done.returncode == 0, done.stderr
        answers["native"].append(done.stdout)
        relayed.append(not _python_ran(done))
        if i == len(payloads) // 2:
            assert _python_ran(done)  # the Python client took it, and started a new server
        done = _hook(python, body, reference)
        assert done.returncode == 0, done.stderr
        answers["python"].append(done.stdout)
    half = len(payloads) // 2
    assert any(relayed[1:half]) and any(relayed[half + 1:])  # before and after the kill
    assert answers["native"] == answers["python"]
    assert _recorded(native) == _recorded(reference)
    assert any(kind == "tool_call" for kind, _ in _recorded(native))
