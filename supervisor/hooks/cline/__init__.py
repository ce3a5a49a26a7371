"""The Cline CLI target: the plugin the installer writes (`plugin.js`), the steps it sends
(`payload`), and the answers it reads (those of the OpenCode plugin). See docs/cline.md.

Only what the platform needs is imported here: the hook path starts once per tool call.
"""

from pathlib import Path

from supervisor.hooks.cline.payload import map_payload
from supervisor.hooks.opencode.respond import PluginAnswers
from supervisor.hooks.plugin_file import PluginFile, within
from supervisor.hooks.target import Target

FILE_NAME = "agent-supervisor.js"


def user_plugin_path() -> Path:
    """`~/.cline/plugins/agent-supervisor.js`."""
    return Path.home() / ".cline" / "plugins" / FILE_NAME


def project_plugin_path(project: Path) -> Path:
    """A project's plugin, `DIR/.cline/plugins/agent-supervisor.js`."""
    return within(project, ".cline", "plugins", FILE_NAME)


NOTES = (
    "Cline runs plugins in its background hub daemon, with the environment the daemon started "
    "with: stop a running daemon (cline --cline-hub-daemon) so it loads the plugin, or run "
    "Cline with CLINE_SESSION_BACKEND_MODE=local (docs/cline.md).",
)

TARGET = Target(
    name="cline",
    label="Cline CLI",
    read=map_payload,
    answers=PluginAnswers(frozenset({"afterTool", "beforeRun"})),
    settings=PluginFile(
        target="cline",
        user_path=user_plugin_path,
        project_path=project_plugin_path,
        template=Path(__file__).with_name("plugin.js"),
        notes=NOTES,
    ),
    context_before_call=False,  # a plugin's beforeTool can only skip the call or let it run
)
