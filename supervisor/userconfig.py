"""Where the operator's own configuration lives: `$SUPERVISOR_CONFIG`, else the platform's user
config directory (`~/.config/agent-supervisor` on Linux). Themes are in its `themes/` folder,
settings such as `[notify]` and `[web]` in its `config.toml`.

Stdlib only (platformdirs is imported only when the variable is not set), so the guard can ask
whether notifications are configured without weighing on a hook.
"""

import os
from pathlib import Path

CONFIG_FILE = "config.toml"


def config_dir() -> Path:
    """`$SUPERVISOR_CONFIG`, else the platform's user config dir for agent-supervisor."""
    env = os.environ.get("SUPERVISOR_CONFIG")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("agent-supervisor", appauthor=False))


def config_file() -> Path:
    """The operator's `config.toml` (it need not exist)."""
    return config_dir() / CONFIG_FILE
