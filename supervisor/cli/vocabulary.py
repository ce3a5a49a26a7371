"""Every contribution to the agents' tool vocabulary, loaded before a replay builds its policy.

A hook target or an importer contributes its agent's tool names when its module is imported
(`engine/tools.py`); the live hook imports its own target before it builds a policy, and the
SDK's own agents use the engine's shared names. A replay (`supervisor analyze`, the quality
benchmark) may read any agent's log, and `analysis` may not import `hooks`, so the commands
that replay call `load_all` first: from here every layer is in reach.
"""

import importlib

from supervisor.hooks import targets


def load_all() -> tuple[str, ...]:
    """Import every importer and every hook target (so each has contributed); the
    contributors, in order."""
    from supervisor.engine import tools

    importlib.import_module("supervisor.importers")
    for name in targets.names():
        targets.load(name)
    return tools.contributors()
