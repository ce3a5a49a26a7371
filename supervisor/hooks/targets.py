"""The registry of hook targets: one line per agent CLI (stdlib only).

The client checks the target named on its command line against `TARGETS` without importing any
target, so its start-up cost does not grow with the number of targets; the server and the
in-process path import the one target a call names (`load`). Adding an agent: a package beside
`claude_code` whose `__init__` defines `TARGET`, and one line here (docs/hooks.md).
"""

TARGETS = {
    # command-line name: the module whose `TARGET` is a `supervisor.hooks.target.Target`
    "claude-code": "supervisor.hooks.claude_code",
    "codex": "supervisor.hooks.codex",
    "gemini": "supervisor.hooks.gemini",
    "qwen-code": "supervisor.hooks.qwen_code",
    "droid": "supervisor.hooks.droid",
    "copilot": "supervisor.hooks.copilot",
    "opencode": "supervisor.hooks.opencode",
    "kilo": "supervisor.hooks.kilo",
    "cline": "supervisor.hooks.cline",
    "pi": "supervisor.hooks.pi",
}


def names() -> tuple[str, ...]:
    """The target names, in registry order."""
    return tuple(TARGETS)


def load(name: str):  # -> supervisor.hooks.target.Target (no typing import on this path)
    """The target registered as `name`; `KeyError` for an unknown one."""
    import importlib

    return importlib.import_module(TARGETS[name]).TARGET
