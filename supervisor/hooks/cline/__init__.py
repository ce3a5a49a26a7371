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


HOOK_LIMIT_S = 3.0
"""Cline's plugin sandbox fails the run when a plugin hook call takes this long (cline 3.0.65,
`hookTimeoutMs`, no setting): an escalation cannot hold a call for the operator."""

NOTES = (
    "Cline runs plugins in its background hub daemon, with the environment the daemon started "
    "with: stop a running daemon (cline --cline-hub-daemon) so it loads the plugin, or run "
    "Cline with CLINE_SESSION_BACKEND_MODE=local (docs/cline.md).",
    "Cline gives a plugin 4 s to load and runs on without it when it is late (a loaded "
    "machine): set CLINE_PLUGIN_IMPORT_TIMEOUT_MS=30000 in the environment Cline (and its hub "
    "daemon) starts with.",
    "Cline gives a plugin hook 3 s: an escalation refuses the call as on hold and waits for "
    "the operator across calls; the answer reaches the model at its next step or prompt.",
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
        hook_limit_s=HOOK_LIMIT_S,
    ),
    context_before_call=False,  # a plugin's beforeTool can only skip the call or let it run
)
