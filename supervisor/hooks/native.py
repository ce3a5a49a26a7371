"""The native hook client: `fastclient.c`, built here with the machine's C compiler.

A Python hook client costs an interpreter start per tool call (tens of milliseconds, six times a
`cat`); the resident server already does the work, so what runs per call only has to relay the
payload to it and the answer back. `supervisor install` builds `fastclient.c` (shipped in this
package, never a downloaded binary) with `cc` into a private directory and writes the result into
the agent's hook entries; without a compiler, or when the build or its check fails, the entries
run the Python client as before (`settings_file.hook_argv`).

Linked statically where the C library allows it (`FLAGS`): the agent starts the client once per
hook, and a static program starts with no dynamic loader and no shared C library to map and
relocate (here 1.0 ms against 1.6 ms a process start, median of 400 each), which an agent that
runs its hooks one after the other on the call's path (Copilot CLI: two a call) pays in full.
Without a static C library (`libc.a`) that build fails and the dynamically linked one is made.

Where: `$XDG_CACHE_HOME/agent-supervisor/hook-client/<key>/supervisor-hook` (`~/.cache` without
it), every level from `agent-supervisor` down 0700 and ours, the program 0700. The key hashes the
source, the definitions the build is made for (version, interpreter, the Python client, the
targets), the compiler's path and its flags, so an upgrade or another environment builds beside
the old one and an installed entry never changes under the agent. A build is made in a fresh private
directory and checked (`--check` prints the version and the Python client it falls back to)
before it is renamed into place; an existing build is checked the same way, and its directory and
program must be ours and private, before it is used.
"""

import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from supervisor import __version__
from supervisor.hooks.targets import TARGETS

SOURCE = Path(__file__).with_name("fastclient.c")
PROGRAM = "supervisor-hook"
"""The program's name: the installers recognise their entries by it (`settings_file._ours`)."""
ENV_NATIVE = "SUPERVISOR_HOOK_NATIVE"
"""`0`: install the Python client, never build the native one."""
FALLBACK_NOTE = "fallback"
"""Beside the program: the Python client it falls back to (`fallback_of`), for the checks that
only stat files (`installed.unresolved`: a removed environment leaves the native client with
nothing to start the server)."""
NOLIBC_SOURCE = Path(__file__).with_name("fastclient_nolibc.h")
NOLIBC = ("-O2", "-static", "-nostdlib", "-ffreestanding", "-fno-stack-protector", "-fno-pie",
          "-no-pie", "-fno-tree-loop-distribute-patterns", "-fno-asynchronous-unwind-tables")
"""The build without the C library (`fastclient_nolibc.h` prepended: Linux on x86-64): no
library start-up in the process the agent starts per hook (0.20 ms against 0.48 ms from spawn
to reaping for `--check`, 7 page faults against 31, 2026-11-29); the loop patterns are not made
into calls of the `memset` and `memcpy` that file defines with such loops."""
FLAGS = (NOLIBC, ("-O2", "-static"), ("-O2",))
"""The builds tried, in order: without the C library, static (see above), then dynamically
linked."""
BUILD_TIMEOUT_S = 120.0
CHECK_TIMEOUT_S = 10.0


def client(fallback: list[str]) -> Path | None:
    """The checked native client falling back to `fallback` (the Python client's command line
    without its arguments), built when needed; None without a compiler or when it cannot be
    built and checked (then the Python client is the hook command)."""
    if os.environ.get(ENV_NATIVE) == "0":
        return None
    compiler = shutil.which(os.environ.get("CC") or "cc")
    if compiler is None:
        return None
    asked = (compiler, tuple(fallback), str(_cache_base()))
    if asked not in _found:  # an install writes several entries: build and check once
        _found[asked] = _client(compiler, fallback)
    return _found[asked]


_found: dict[tuple[str, tuple[str, ...], str], Path | None] = {}


def _client(compiler: str, fallback: list[str]) -> Path | None:
    """The first build of `FLAGS` already made that passes its check, else the first that can
    be made. A build made but failing its check now (a kernel or sandbox refusing one of the
    system calls the build without the C library makes by number, a program changed since) is
    passed over for the next build, never made the reason every call runs the Python client;
    it is not made again (its directory is taken)."""
    try:
        base = _private_dir(_cache_base() / "agent-supervisor" / "hook-client")
        builds = [(flags, source, base / _key(compiler, flags, source) / PROGRAM)
                  for flags in FLAGS for source in [_source(flags, fallback)]]
        for _flags, _text, final in builds:
            if final.parent.exists() and _checked(final, fallback):
                return final
        for flags, source, final in builds:
            if final.parent.exists():
                continue
            built = _build(compiler, flags, source, base, final, fallback)
            if built is not None:
                return built
        return None
    except OSError:
        return None


def _source(flags: tuple[str, ...], fallback: list[str]) -> str:
    """The text a build compiles: the definitions, `fastclient_nolibc.h` for `NOLIBC`, the
    client."""
    parts = [_definitions(fallback)]
    if flags == NOLIBC:
        parts += ["#define SUPERVISOR_NOLIBC 1\n", NOLIBC_SOURCE.read_text(encoding="utf-8")]
    return "".join([*parts, SOURCE.read_text(encoding="utf-8")])


def _key(compiler: str, flags: tuple[str, ...], source: str) -> str:
    """A build's directory name: the compiler, its flags and the source it was given."""
    return hashlib.sha256("\0".join((compiler, *flags, source)).encode()).hexdigest()[:16]


def _definitions(fallback: list[str]) -> str:
    from supervisor.hooks.installed import interpreter

    python = interpreter(fallback[0]) or fallback[0]  # the server key names the client's

    def literal(text: str) -> str:
        raw = text.encode("utf-8", "surrogateescape")
        return '"' + "".join(f"\\{byte:03o}" for byte in raw) + '"'

    return "".join([
        f"#define SUPERVISOR_VERSION {literal(__version__)}\n",
        f"#define SUPERVISOR_PYTHON {literal(python)}\n",
        f"#define FALLBACK_ARGV {', '.join(literal(part) for part in fallback)}\n",
        f"#define TARGET_NAMES {', '.join(literal(name) for name in TARGETS)}\n",
    ])


def _build(compiler: str, flags: tuple[str, ...], source: str, base: Path, final: Path,
           fallback: list[str]) -> Path | None:
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=base))  # 0700
    try:
        (work / "fastclient.c").write_text(source, encoding="utf-8")
        done = subprocess.run(
            [compiler, *flags, "-o", str(work / PROGRAM), str(work / "fastclient.c")],
            cwd=work, capture_output=True, timeout=BUILD_TIMEOUT_S, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            return None
        os.chmod(work / PROGRAM, 0o700)
        (work / "fastclient.c").unlink()
        (work / FALLBACK_NOTE).write_text(fallback[0] + "\n", encoding="utf-8")
        if not _checked(work / PROGRAM, fallback):
            return None
        try:
            work.rename(final.parent)
        except OSError:  # another install built it meanwhile: use that one, checked
            return final if _checked(final, fallback) else None
        return final
    except subprocess.TimeoutExpired:
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _checked(program: Path, fallback: list[str]) -> bool:
    """The build is ours, private, and answers `--check` with this version and `fallback`."""
    me = os.geteuid()
    try:
        for path in (program.parent, program):
            found = os.lstat(path)
            if found.st_uid != me or found.st_mode & 0o077 or stat.S_ISLNK(found.st_mode):
                return False
        done = subprocess.run([str(program), "--check"], capture_output=True, text=True,
                              timeout=CHECK_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and done.stdout == f"{__version__}\n{fallback[0]}\n"


def fallback_of(program: str) -> str | None:
    """The Python client a native client falls back to; None when `program` is not one (a
    script, an interpreter). Reads one small file beside it; starts nothing."""
    if os.path.basename(program) != PROGRAM:
        return None
    try:
        with open(program, "rb") as f:
            if f.read(2) == b"#!":
                return None
        note = Path(program).with_name(FALLBACK_NOTE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return note.strip() or None


def _cache_base() -> Path:
    value = os.environ.get("XDG_CACHE_HOME", "").strip()
    return Path(value) if os.path.isabs(value) else Path.home() / ".cache"


def _private_dir(path: Path) -> Path:
    """`path` made (each missing level 0700) from the cache folder down, every level from
    `agent-supervisor` ours and private."""
    from supervisor.store.paths import ensure_private_dir, require_private

    ensure_private_dir(path)
    require_private(path.parent, "cache directory")  # ours and readable by others: made 0700
    for level in (path.parent, path):
        found = os.lstat(level)
        if found.st_uid != os.geteuid() or found.st_mode & 0o077 or stat.S_ISLNK(found.st_mode):
            raise OSError(f"{level} is not a private directory of this user")
    return path
