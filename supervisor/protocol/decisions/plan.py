"""A plan's sub-tasks, as `split` and `replan` carry them (docs/plans.md)."""

from typing import Any

from supervisor.protocol.names import PLAN_MAX_TASKS, PLAN_TASK_MAX_CHARS

NO_PLAN = "there is no plan to change (see docs/plans.md)"
"""Why a `replan` or `drop_plan` is ignored when the session has no plan."""


def plan_problem(tasks: Any, action: str = "split") -> str | None:
    """Why `tasks` is not a valid plan for a `split` or `replan` (a non-empty list of at most
    `PLAN_MAX_TASKS` non-empty texts, each at most `PLAN_TASK_MAX_CHARS`), or None."""
    if not isinstance(tasks, list) or not tasks:
        return f"{action} needs 'tasks': a non-empty list of sub-tasks"
    if len(tasks) > PLAN_MAX_TASKS:
        return f"{action} has {len(tasks)} sub-tasks; at most {PLAN_MAX_TASKS}"
    for number, task in enumerate(tasks, 1):
        if not isinstance(task, str) or not task.strip():
            return f"sub-task {number} must be a non-empty text"
        if len(task) > PLAN_TASK_MAX_CHARS:
            return (f"sub-task {number} has {len(task)} characters; at most "
                    f"{PLAN_TASK_MAX_CHARS}")
    return None
