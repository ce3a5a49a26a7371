"""The Pi target (`@mariozechner/pi-coding-agent`): the extension the installer writes
(`plugin.js`), the steps it sends (`payload`), and the answers it reads (those of the OpenCode
plugin). See docs/pi.md.

Pi has no command hooks; its TypeScript/JavaScript extensions subscribe to its events, and a
`tool_call` handler can refuse the call with a reason the model reads. `supervisor install pi`
writes the supervisor's extension into Pi's extensions folder.

Only what the platform needs is imported here: the hook path starts once per tool call.
"""

import os
from pathlib import Path

from supervisor.hooks.opencode.respond import PluginAnswers
from supervisor.hooks.pi.payload import map_payload
from supervisor.hooks.plugin_file import PluginFile, within
from supervisor.hooks.target import Target

FILE_NAME = "agent-supervisor.js"


def user_plugin_path() -> Path:
    """`$PI_CODING_AGENT_DIR/extensions/agent-supervisor.js` if that is set, else
    `~/.pi/agent/extensions/agent-supervisor.js` (where Pi looks)."""
    base = os.environ.get("PI_CODING_AGENT_DIR", "").strip()
    folder = Path(base).expanduser() if base else Path.home() / ".pi" / "agent"
    return folder / "extensions" / FILE_NAME


def project_plugin_path(project: Path) -> Path:
    """A project's extension, `DIR/.pi/extensions/agent-supervisor.js`."""
    return within(project, ".pi", "extensions", FILE_NAME)


TARGET = Target(
    name="pi",
    label="Pi",
    read=map_payload,
    answers=PluginAnswers(frozenset({"tool_result", "before_agent_start"})),
    settings=PluginFile(
        target="pi",
        user_path=user_plugin_path,
        project_path=project_plugin_path,
        template=Path(__file__).with_name("plugin.js"),
        notes=("Pi loads extensions when it starts: restart a running Pi (or /reload).",),
    ),
    context_before_call=False,  # a tool_call handler can only block the call or let it run
)
