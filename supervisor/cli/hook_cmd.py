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

from supervisor.hookclient import parse_args
from supervisor.store.paths import resolve_root

USAGE = "usage: supervisor hook claude-code [--timeout SECONDS] [--root DIR]"


def run_hook(argv: list[str], data: bytes | None = None) -> int:
    """Run one hook invocation; returns the exit status (0 unless the command line is wrong).

    `data` is the payload when the caller already read stdin (the client of the hook server).
    """
    started = time.monotonic()
    try:
        timeout, root_arg = parse_args(argv)
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
