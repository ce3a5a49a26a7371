"""The OpenCode target: the plugin the installer writes (`plugin.js`), the steps it sends
(`payload`) and the answers it reads (`respond`). See docs/opencode.md.

OpenCode has no command hooks: `supervisor install opencode` writes a plugin into its plugin
folder, which runs the hook client for each step. Kilo (an OpenCode fork, `supervisor.hooks.kilo`)
takes the same plugin.

Only what the platform needs is imported here: the hook path starts once per tool call.
"""

import os
from pathlib import Path

from supervisor.hooks.opencode.payload import mapper
from supervisor.hooks.opencode.respond import PluginAnswers
from supervisor.hooks.plugin_file import PluginFile, within
from supervisor.hooks.target import Target

PLUGIN = Path(__file__).with_name("plugin.js")
"""The plugin's template, shared with Kilo."""
FILE_NAME = "agent-supervisor.js"


def config_home() -> Path:
    """`$XDG_CONFIG_HOME` if that is set, else `~/.config` (where OpenCode and Kilo look)."""
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    return Path(base).expanduser() if base else Path.home() / ".config"


def user_plugin_path() -> Path:
    """`~/.config/opencode/plugin/agent-supervisor.js`."""
    return config_home() / "opencode" / "plugin" / FILE_NAME


def project_plugin_path(project: Path) -> Path:
    """A project's plugin, `DIR/.opencode/plugin/agent-supervisor.js`."""
    return within(project, ".opencode", "plugin", FILE_NAME)


TARGET = Target(
    name="opencode",
    label="OpenCode",
    read=mapper("opencode", "OpenCode"),
    answers=PluginAnswers(),
    settings=PluginFile(
        target="opencode",
        user_path=user_plugin_path,
        project_path=project_plugin_path,
        template=PLUGIN,
        notes=("OpenCode loads the plugin when it starts: restart a running OpenCode.",),
    ),
    context_before_call=False,  # OpenCode takes nothing added before a call
)
