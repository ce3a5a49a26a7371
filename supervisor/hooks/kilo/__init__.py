"""The Kilo CLI target (`@kilocode/cli`, a fork of OpenCode): OpenCode's plugin, steps and
answers (`supervisor.hooks.opencode`), in Kilo's plugin folders. See docs/opencode.md.
"""

import os
from pathlib import Path

from supervisor.hooks.opencode import FILE_NAME, PLUGIN, config_home
from supervisor.hooks.opencode.payload import mapper
from supervisor.hooks.opencode.respond import PluginAnswers
from supervisor.hooks.plugin_file import PluginFile, within
from supervisor.hooks.target import Target


def user_plugin_path() -> Path:
    """`$KILO_CONFIG_DIR/plugin/agent-supervisor.js` if that is set, else
    `~/.config/kilo/plugin/agent-supervisor.js`."""
    base = os.environ.get("KILO_CONFIG_DIR", "").strip()
    folder = Path(base).expanduser() if base else config_home() / "kilo"
    return folder / "plugin" / FILE_NAME


def project_plugin_path(project: Path) -> Path:
    """A project's plugin, `DIR/.kilo/plugin/agent-supervisor.js`."""
    return within(project, ".kilo", "plugin", FILE_NAME)


TARGET = Target(
    name="kilo",
    label="Kilo CLI",
    read=mapper("kilo", "Kilo CLI"),
    answers=PluginAnswers(),
    settings=PluginFile(
        target="kilo",
        user_path=user_plugin_path,
        project_path=project_plugin_path,
        template=PLUGIN,
        notes=("Kilo loads the plugin when it starts: restart a running Kilo.",),
    ),
    context_before_call=False,
)
