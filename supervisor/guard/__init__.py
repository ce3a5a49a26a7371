"""The guard: the agent side of Agent Supervisor.

- `Session` (`sdk.py`): the SDK an agent loop calls around each tool call;
- `Guard` (`core.py`): the step machine the SDK and the Claude Code hook share;
- `CheckpointStore` (`checkpoints/`, a package): git checkpoints of the working directory.

Operators' decisions are written by `supervisor.operator`, never through this package.

Names are imported lazily, so `import supervisor.guard.core` (the hook's path) loads nothing else;
a type checker reads them from the imports under `TYPE_CHECKING` (without them every name here
is `Any` to the user's mypy or pyright, and their loop is not checked at all).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from supervisor.guard.checkpoints import CheckpointStore
    from supervisor.guard.core import Guard
    from supervisor.guard.sdk import Session, SessionStopped, ToolRefused
    from supervisor.guard.settings import GuardSettings
    from supervisor.guard.verdict import Verdict

__all__ = [
    "CheckpointStore", "Guard", "GuardSettings", "Session", "SessionStopped", "ToolRefused",
    "Verdict",
]

_WHERE = {
    "Session": "supervisor.guard.sdk",
    "ToolRefused": "supervisor.guard.sdk",
    "SessionStopped": "supervisor.guard.sdk",
    "Guard": "supervisor.guard.core",
    "Verdict": "supervisor.guard.verdict",
    "GuardSettings": "supervisor.guard.settings",
    "CheckpointStore": "supervisor.guard.checkpoints",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'supervisor.guard' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
