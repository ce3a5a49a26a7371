"""The hook's command line, `TARGET [--timeout SECONDS] [--root DIR]` (stdlib only).

Shared by the thin client and the in-process path, so both accept and refuse the same lines.
"""

from supervisor.hooks.targets import TARGETS

MAX_TIMEOUT_S = 86400.0
"""The longest `--timeout` taken: a day (a larger one is a mistake, and no clock waits it)."""
DEFAULT_TIMEOUT_S = 60.0
"""Budget assumed without `--timeout`: the hook timeout of older Claude Code releases (newer ones
give 600 s), so a hold never outlives the hook. `supervisor install` writes `--timeout`."""


def usage() -> str:
    return f"usage: supervisor hook {{{','.join(TARGETS)}}} [--timeout SECONDS] [--root DIR]"


def parse_args(args: list[str]) -> tuple[str, float, str | None]:
    """(target, timeout, root or None); `ValueError` with a one-line reason otherwise."""
    if not args or args[0] not in TARGETS:
        got = args[0] if args else "nothing"
        raise ValueError(f"unknown hook target {got!r} (known: {', '.join(TARGETS)})")
    target, timeout, root = args[0], DEFAULT_TIMEOUT_S, None
    rest = args[1:]
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
        if not 0 < timeout < float("inf"):
            raise ValueError("--timeout must be a positive number of seconds")
        if timeout > MAX_TIMEOUT_S:
            raise ValueError(f"--timeout must be at most {MAX_TIMEOUT_S:g} seconds")
    return target, timeout, root
