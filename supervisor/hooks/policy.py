"""Which policy a hook session runs under, and how long a hold may last.

Lookup, first match wins (docs/hooks.md, `guard/root_policy.py`): the file named by
`$SUPERVISOR_POLICY`, else `<root>/policy.toml`, else the engine's `default` profile. The file
is read with `tomllib` and checked by the engine's validator when a session is created. The
engine policy is read only when a session is created (afterwards it travels in the session's saved
engine state); the `[guard]` table (hold time, fallback, checkpoints) at every invocation.
"""

import copy
from pathlib import Path
from typing import Any

from supervisor.guard.root_policy import (
    PolicyError,
    policy_path,
    policy_tables,
    read_policy_file,
)
from supervisor.guard.settings import GuardSettings
from supervisor.guard.spend import budget_rules
from supervisor.hooks.budget import Budget

DEFAULT_HOLD_S = 600.0
"""Hold time used when the policy waits forever (`escalation_deadline_s = 0`): a hook cannot."""


def load_policy(root: Path) -> tuple[Any, str]:
    """(the effective `Policy`, where it came from). Raises `PolicyError` for a bad file.

    The file is checked by the engine's one validator (`validate_policy_dict`, the one of
    `policy show`, `analyze` and the SDK), so a mistyped key (`nuge = 2`) is an error here too,
    never silently ignored. It imports pydantic, which the hook otherwise avoids: this runs
    only when a session is created (and for `install`), not on every call."""
    from supervisor.engine import Policy

    path = policy_path(root)
    if path is None:
        return Policy.profile("default"), "default profile"
    data = copy.deepcopy(read_policy_file(path))  # (the read is shared with later calls)
    from supervisor.engine.policy_file import validate_policy_dict  # pydantic: only for a file
    try:
        policy = validate_policy_dict(data, source=f"policy file {path}")
    except ValueError as exc:  # it names the file and the key
        raise PolicyError(str(exc)) from exc
    try:
        guard_settings(policy)
        budget_rules(policy.to_dict().get("budgets"))
    except (ValueError, TypeError, KeyError) as exc:
        raise PolicyError(f"policy file {path} is not valid: {exc}") from exc
    return policy, str(path)


def guard_table(root: Path) -> dict[str, Any]:
    """Only the `[guard]` table of the policy in force (cheap: no engine policy is built).
    Raises `PolicyError` for a file that cannot be read."""
    found = policy_tables(root)
    if found is None:
        return {}
    path, tables = found
    table = tables.get("guard") or {}
    if not isinstance(table, dict):
        raise PolicyError(f"policy file {path}: [guard] must be a table")
    return table


def guard_settings(policy: Any) -> GuardSettings:
    """The guard settings of the policy's `[guard]` table (defaults where it has none)."""
    table = policy.to_dict().get("guard") or {}
    return GuardSettings.from_dict(table)


def hold_seconds(policy: Any) -> float:
    """How long the policy lets an operator take over an escalation (the installer adds a
    margin to this for the PreToolUse hook's timeout)."""
    return guard_settings(policy).escalation_deadline_s or DEFAULT_HOLD_S


OPERATOR_HOLD_MIN_S = 30.0
"""A hold shorter than this gives no operator a chance to answer (a person must notice the
escalation, read it and decide)."""


def hook_settings(table: dict[str, Any], budget: Budget) -> GuardSettings:
    """The guard settings for one hook invocation (from the policy's `[guard]` table): the
    escalation deadline shortened to fit in this call's time budget, so the fallback answers
    before the agent gives up on the hook.

    A budget too short for any operator (an agent that bounds its hooks to a few seconds, as
    Cline does its plugins') keeps the policy's deadline instead: a fallback within a second
    would decide every escalation itself. The hold then ends with the call refused as on hold,
    and the escalation waits across calls (each one refused meanwhile) for the operator or its
    deadline, as an operator's own pause does."""
    settings = _table_settings(table)
    fits = budget.hold_s()
    short = fits < OPERATOR_HOLD_MIN_S
    deadline = settings.escalation_deadline_s
    if not short or (deadline and deadline <= fits):
        deadline = min(deadline or fits, fits)
    # an operator's pause without a deadline holds across calls (each held call is refused
    # when the budget ends); one with a deadline of its own is bounded like the others
    pause = settings.pause_deadline_s
    if pause and not short:
        pause = min(pause, fits)
    # (not `dataclasses.replace`, which looks the fields up again at every call)
    return GuardSettings(**{**settings.to_dict(), "escalation_deadline_s": float(deadline),
                            "pause_deadline_s": float(pause)})


_last_table: tuple[dict[str, Any], GuardSettings] | None = None
"""The `[guard]` table last read and its settings: the resident server reads the same table
(`read_policy_file` shares it until the file changes) at every call."""


def _table_settings(table: dict[str, Any]) -> GuardSettings:
    """`GuardSettings.from_dict(table)`, checked once per table read."""
    global _last_table
    last = _last_table
    if last is not None and last[0] is table:
        return last[1]
    settings = GuardSettings.from_dict(table)
    _last_table = (table, settings)  # (holds the table: its id is not reused meanwhile)
    return settings
