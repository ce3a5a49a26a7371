"""Apply a recorded `decision_applied` event to an engine (for replays such as `analyze`).

The live guard calls `Engine.approve`/`reset`/`new_cycle`/`task_skipped` itself when it applies
an operator decision; a replay of a recorded session calls this instead, so the engine sees the
same effects in the same order.
"""

from typing import Any

from supervisor.engine.core import Engine


def apply_decision(engine: Engine, event: dict[str, Any], now: float) -> None:
    """Apply the effect of one `decision_applied` event (unknown actions are ignored)."""
    action = event.get("action")
    if action == "approve":
        engine.approve(None)
    elif action == "reset":
        engine.reset(now)
    elif action == "skip":
        engine.task_skipped()
    elif action == "guidance":
        engine.new_cycle()
    elif action == "rollback":
        engine.observe({"type": "rollback"}, now)  # the workspace changed
        engine.approve(None, 0)  # the escalation is answered; no extra repeats granted
    elif action == "abort":
        engine.st.level = 4
