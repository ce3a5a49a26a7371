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


@functools.lru_cache(maxsize=16)
def _candidate(root: Path) -> Path:
    """`<root>/policy.toml` (made once per root: the hook looks for it at every call)."""
    return Path(root) / POLICY_FILE


def budgets_of(root: Path) -> list[BudgetRule]:
    """The daily budgets of the policy in force (its `[budgets]` tables), read at every call
    like `[guard]`. Raises `PolicyError` for a file or a table that cannot be used."""
    path = policy_path(root)
    if path is None:
        return []
    try:
        return budget_rules(read_policy_file(path).get("budgets"))
    except ValueError as exc:
        raise PolicyError(f"policy file {path}: {exc}") from exc


_read_before: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = {}
"""path -> (its inode, size and mtime when read, what it held): the resident hook server reads
the policy at every call, parsed again only when the file changed."""


def read_policy_file(path: Path) -> dict[str, Any]:
    """The file's TOML tables, unchecked (shared with later reads: not to be changed). Raises
    `PolicyError` when it cannot be read."""
    import tomllib  # only when there is a policy file

    try:
        st = os.stat(path)
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
