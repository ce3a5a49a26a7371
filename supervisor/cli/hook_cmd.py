"""`supervisor hook claude-code [--timeout SECONDS] [--root DIR]`: one Claude Code hook call.

Reads one payload from stdin and prints the answer. It never disturbs the agent because of the
supervisor's own trouble: a bad payload, a corrupt state or a full disk is reported on stderr
(and, when possible, as a `supervisor_error` event in the session), and the hook exits 0 without
output, which lets the call go on. Exit 1 (a non-blocking error for Claude Code) only for a
command line that cannot be right. Never exit 2: for Claude Code that blocks the call.

Kept tiny on purpose: no argparse parser for the rest of the CLI, no pydantic, no textual.
"""

import sys
import time
from pathlib import Path

from supervisor.store.paths import resolve_root

TARGETS = ("claude-code",)
DEFAULT_TIMEOUT_S = 60.0
"""Budget assumed without `--timeout`: the hook timeout of older Claude Code releases (newer
ones give 600 s), so a hold never outlives the hook. `supervisor install` writes `--timeout`."""
USAGE = "usage: supervisor hook claude-code [--timeout SECONDS] [--root DIR]"


def run_hook(argv: list[str], data: bytes | None = None) -> int:
    """Run one hook invocation; returns the exit status (0 unless the command line is wrong).

    `data` is the payload when the caller already read stdin (the client of the hook server).
    """
    started = time.monotonic()
    try:
        timeout, root_arg = _parse(argv)
    except ValueError as exc:
        print(f"supervisor hook: {exc}\n{USAGE}", file=sys.stderr)
        return 1
    root = None
    try:
        if data is None:
            data = sys.stdin.buffer.read()
        root = resolve_root(root_arg)
        from supervisor.guard.claude_code.hook import handle

        text = handle(data, root, timeout, started)
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()
    except Exception as exc:
        _fail_safe(root, data or b"", exc)
    return 0


def _parse(argv: list[str]) -> tuple[float, str | None]:
    if not argv or argv[0] not in TARGETS:
        got = argv[0] if argv else "nothing"
        raise ValueError(f"unknown hook target {got!r} (known: {', '.join(TARGETS)})")
    timeout, root = DEFAULT_TIMEOUT_S, None
    rest = argv[1:]
    while rest:
        option, rest = rest[0], rest[1:]
        name, _, value = option.partition("=")
        if name not in ("--timeout", "--root"):
            raise ValueError(f"unknown option {option!r}")
        if not value:
            if not rest:
                raise ValueError(f"{name} needs a value")
            value, rest = rest[0], rest[1:]
        if name == "--root":
            root = value
            continue
        try:
            timeout = float(value)
        except ValueError:
            raise ValueError(f"--timeout must be a number of seconds, not {value!r}") from None
        if not timeout > 0:
            raise ValueError("--timeout must be positive")
    return timeout, root


def _fail_safe(root: Path | None, data: bytes, exc: BaseException) -> None:
    """The supervisor failed: say so, record it in the session if possible, let the agent go."""
    from supervisor.guard.claude_code.payload import PayloadError

    if isinstance(exc, PayloadError):
        print(f"supervisor hook: ignored a payload it cannot use: {exc}", file=sys.stderr)
        return
    message = f"{type(exc).__name__}: {exc}"
    print(
        f"supervisor hook: the supervisor failed ({message}); this call goes on unsupervised",
        file=sys.stderr,
    )
    if root is None:
        return
    try:
        from supervisor.guard.claude_code.hook import record_error, session_of

        record_error(root, *session_of(root, data), message)
    except Exception:  # nothing more can be done without disturbing the agent
        return
