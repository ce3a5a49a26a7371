"""The policy file in force for a store root's sessions, and the root's daily budgets in it.

Lookup, first match wins (docs/hooks.md): the file named by `$SUPERVISOR_POLICY`, else
`<root>/policy.toml`, else none (the engine's `default` profile). The hook targets run their
sessions under it (`hooks/policy.py`); the daily budgets of its `[budgets]` tables are the
root's, so every session of the root counts in them, an SDK session too, whatever engine policy
it was opened with (`guard/sdk.py`). Stdlib only (`tomllib` when there is a file): the hook path
reads it at every call.
"""

import functools
import os
import stat
from pathlib import Path
from typing import Any

from supervisor.guard.spend import BudgetRule, budget_rules

ENV_POLICY = "SUPERVISOR_POLICY"
POLICY_FILE = "policy.toml"


class PolicyError(ValueError):
    """The policy file cannot be used; the message names the file and the problem."""


def policy_path(root: Path) -> Path | None:
    """The policy file in force for sessions under `root`, or None for the default."""
    env = os.environ.get(ENV_POLICY)
    if env:
        return Path(env).expanduser()
    candidate = _candidate(root)
    return candidate if os.path.isfile(candidate) else None


def policy_tables(root: Path) -> tuple[Path, dict[str, Any]] | None:
    """(the policy file in force, its tables as `read_policy_file` gives them), or None for
    the default: `policy_path` and `read_policy_file` with one `stat` (the hook path asks at
    every call, for `[guard]` and for `[budgets]`). Raises `PolicyError` like
    `read_policy_file`."""
    env = os.environ.get(ENV_POLICY)
    if env:
        path = Path(env).expanduser()
        return path, read_policy_file(path)
    path = _candidate(root)
    try:
        info = os.stat(path)
    except (OSError, ValueError):  # (what `os.path.isfile` takes for no file)
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return path, read_policy_file(path, info)


@functools.lru_cache(maxsize=16)
def _candidate(root: Path) -> Path:
    """`<root>/policy.toml` (made once per root: the hook looks for it at every call)."""
    return Path(root) / POLICY_FILE


def budgets_of(root: Path) -> list[BudgetRule]:
    """The daily budgets of the policy in force (its `[budgets]` tables), read at every call
    like `[guard]`. Raises `PolicyError` for a file or a table that cannot be used."""
    found = policy_tables(root)
    if found is None:
        return []
    path, tables = found
    try:
        return budget_rules(tables.get("budgets"))
    except ValueError as exc:
        raise PolicyError(f"policy file {path}: {exc}") from exc


_read_before: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = {}
"""path -> (its inode, size and mtime when read, what it held): the resident hook server reads
the policy at every call, parsed again only when the file changed."""


def read_policy_file(path: Path, st: os.stat_result | None = None) -> dict[str, Any]:
    """The file's TOML tables, unchecked (shared with later reads: not to be changed). Raises
    `PolicyError` when it cannot be read. `st`: its `stat`, when the caller just made it."""
    import tomllib  # only when there is a policy file

    try:
        st = os.stat(path) if st is None else st
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        known = _read_before.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        _read_before[path] = (stamp, data)
        return data
    except FileNotFoundError as exc:
        raise PolicyError(f"policy file {path} does not exist (${ENV_POLICY})") from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PolicyError(f"policy file {path} cannot be read: {exc}") from exc
