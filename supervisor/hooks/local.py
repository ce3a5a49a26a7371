"""One hook call handled in this process: `supervisor hook TARGET ...` without a server.

The client (`supervisor.hooks.client`) comes here when no resident server answers, or always
with `SUPERVISOR_HOOK_DAEMON=0`. The call never disturbs the agent because of the supervisor's
own trouble (`runtime.run_safely`): a bad payload, a corrupt state or a full disk is reported on
stderr (and, when possible, as a `supervisor_error` event in the session), and the hook exits 0
without output, which lets the call go on. Exit 1 (a non-blocking error for Claude Code) only for
a command line that cannot be right. Never exit 2: for Claude Code that blocks the call.
"""

import os
import sys
import time

from supervisor.hooks.args import parse_args, usage


def run_hook(argv: list[str], data: bytes | None = None, started: float | None = None) -> int:
    """Run one hook invocation; returns the exit status (0 unless the command line is wrong).

    `data` is the payload when the caller already read stdin; `started` the `time.monotonic()`
    at which the call began (the client's start), from which its time budget is counted.
    """
    started = time.monotonic() if started is None else started
    try:
        target, timeout, root_arg = parse_args(argv)
    except ValueError as exc:
        print(f"supervisor hook: {exc}\n{usage()}", file=sys.stderr)
        return 1
    if data is None:
        from supervisor.hooks.client import read_stdin

        data = read_stdin()
    from supervisor.guard import memory
    from supervisor.hooks.budget import Budget
    from supervisor.hooks.runtime import run_safely
    from supervisor.runenv import run_of

    memory.ONE_CALL = True  # this process handles one call: no whole-memory index to load

    text = run_safely(target, data, root_arg, Budget(timeout, started), _complain,
                      run=run_of(os.environ))
    if text:
        sys.stdout.write(text)
        sys.stdout.flush()
    return 0


def _complain(message: str) -> None:
    print(f"supervisor hook: {message}", file=sys.stderr)
