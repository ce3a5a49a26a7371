"""A task plan on the agent side: an operator's `split` and the sub-tasks the agent takes one by
one (docs/plans.md).

The plan lives in the guard's persisted state (`GuardState.plan`), so it survives the end of the
process that applied it (each hook call is its own process; the resident hook server may be
restarted) and the SDK's saves alike:

    {"decision_id": "d-…", "why": "the same Bash call failed 5 times",
     "steps": [{"title": "…", "task_id": "t2", "status": "current"}, …]}

Each sub-task is a protocol task: its `task_start` carries the extension field `plan`
(`{"decision_id", "step", "of"}`), so the engine's per-task limits apply to it alone (a
sub-task that loops escalates on its own) and every reader rebuilds the plan from the event log
(`supervisor.store.plan_view`). A step's status is `waiting`, `current`, `done`, `skipped` or
`failed`; `dropped` for a waiting one an operator dropped (`drop_plan`).

Operators may also replace the sub-tasks after the current one (`replan`) or drop them
(`drop_plan`): neither touches the current sub-task nor the engine (their effect is `none`).

The guard's operator desk (and `Guard.next_task`) calls these functions with the session's
journal: they change its state and start and end tasks through it (`task_start`, `task_end`),
so every event is recorded and observed as usual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from supervisor.guard.journal import SessionJournal
    from supervisor.guard.state import GuardState

DONE_WORDS = "When this step is done, say so and end your turn; the next step will follow."


def active(state: GuardState) -> dict[str, Any] | None:
    """The session's plan while a step of it is current or waiting, else None."""
    plan = state.plan
    if not isinstance(plan, dict):
        return None
    if any(s["status"] in ("current", "waiting") for s in plan["steps"]):
        return plan
    return None


def replan(journal: SessionJournal, tasks: list[str]) -> str | None:
    """Replace the waiting sub-tasks with `tasks` (`replan`); returns what the agent is told, or
    None when there is no plan to change."""
    plan = active(journal.state)
    if plan is None:
        return None
    kept = [s for s in plan["steps"] if s["status"] != "waiting"]
    plan["steps"] = kept + [{"title": str(t).strip(), "task_id": None, "status": "waiting"}
                            for t in tasks]
    return (f"The operator changed the plan: {len(tasks)} step(s) follow the current one "
            f"(the plan now has {len(plan['steps'])}). Go on with the current step.")


def drop(journal: SessionJournal) -> str | None:
    """Drop the waiting sub-tasks (`drop_plan`); returns what the agent is told, or None when
    there is no plan to drop."""
    plan = active(journal.state)
    if plan is None:
        return None
    for step in plan["steps"]:
        if step["status"] == "waiting":
            step["status"] = "dropped"
    return ("The operator dropped the rest of the plan: finish the current step, then stop; no "
            "further steps will follow.")


def start(journal: SessionJournal, decision: dict[str, Any], why: str | None) -> str:
    """Apply a `split`: the open task (if any) ends (`skipped`, with `split_into`), the plan is
    kept in the state and its first step starts; returns what the agent must be told."""
    tasks = [str(t).strip() for t in decision.get("tasks") or []]
    state = journal.state
    current = state.task
    if current is not None:
        journal.task_end("skipped", {"reason": f"split into {len(tasks)} sub-tasks"})
    state.plan = {
        "decision_id": decision["decision_id"], "why": why,
        "steps": [{"title": t, "task_id": None, "status": "waiting"}
                  for t in tasks],
    }
    first = _start_next(journal)
    assert first is not None  # a valid split has at least one sub-task
    head = f"The operator split this task into {len(tasks)} steps; work only on step 1 now."
    if why:  # the escalation's reason: the evidence of the loop
        head += f" What the supervisor saw: {why}"
    return f"{head}\n{first}"


def advance(journal: SessionJournal, status: str = "done") -> str | None:
    """End the current step (`done`, or `skipped` by an operator) and start the next one;
    returns its instruction, or None when the plan is finished (or there is none)."""
    plan = active(journal.state)
    if plan is None:
        return None
    task = journal.state.task
    if task is not None and any(s["task_id"] == task["task_id"] and s["status"] == "current"
                                for s in plan["steps"]):
        journal.task_end(status)
    return _start_next(journal)


def skip(journal: SessionJournal) -> tuple[str, str | None] | None:
    """An operator's `skip` during a plan: the current step ends `skipped` and the next one
    starts. Returns (the line for the operators, naming the step skipped and the step that
    starts; the next step's instruction for the agent, or None when the plan is finished), or
    None when there is no plan."""
    plan = active(journal.state)
    if plan is None:
        return None
    steps = plan["steps"]
    task = journal.state.task
    was = _current(steps)
    following = advance(journal, "skipped")
    if was is not None:
        line = f"step {was + 1} of {len(steps)} skipped (task {steps[was]['task_id']})"
    else:  # the open task is no step of the plan (or none is open)
        line = f"task {task['task_id']} skipped" if task is not None else "no task was open"
    now = _current(steps)
    line += ("; the plan is finished" if now is None
             else f"; step {now + 1} of {len(steps)} starts (task {steps[now]['task_id']})")
    return line, following


def _current(steps: list[dict[str, Any]]) -> int | None:
    return next((i for i, s in enumerate(steps) if s["status"] == "current"), None)


def instruction(steps: list[dict[str, Any]], index: int) -> str:
    """What the agent is told when step `index` (0-based) starts."""
    return (f"Step {index + 1} of {len(steps)}: {steps[index]['title']}\n{DONE_WORDS}")


def _start_next(journal: SessionJournal) -> str | None:
    plan = journal.state.plan
    if not isinstance(plan, dict):
        return None
    steps = plan["steps"]
    for index, step in enumerate(steps):
        if step["status"] != "waiting":
            continue
        extra = {"plan": {"decision_id": plan["decision_id"], "step": index + 1,
                          "of": len(steps)}}
        if journal.state.task is not None:
            journal.task_end("done")
        step["task_id"] = journal.task_start(step["title"], None, extra)
        step["status"] = "current"
        return instruction(steps, index)
    return None
