"""Pi (`@mariozechner/pi-coding-agent`): its runner and its driver for the shared scenarios.

`pi --provider fake --model fake-model --mode json -p PROMPT` in the work dir, with
`PI_CODING_AGENT_DIR` in the sandbox: its `models.json` names the fake Chat Completions API as
an `openai-completions` provider, and `PI_OFFLINE=1` turns off every start-up request, so
nothing leaves 127.0.0.1. `supervisor install pi --project WORK` writes the extension into
`WORK/.pi/extensions/`. The extension's refusal is the call's result, word for word.
"""

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agent_cli import clis
from tests.agent_cli.chat_api import MODEL, ChatServer
from tests.agent_cli.e2e import of_type
from tests.agent_cli.runner import AgentRun, AgentRunner
from tests.agent_cli.sandbox import Sandbox
from tests.agent_cli.scenarios import (
    DENY,
    ESCALATION,
    FAILED_EDIT,
    HEALTHY,
    LINE_3,
    Agent,
    Driver,
    Events,
    Pairs,
    closest,
)
from tests.agent_cli.script import ToolCall, Turn, turn


@dataclass(slots=True)
class PiRun(AgentRun):
    """What one `pi --mode json -p` printed: JSON lines, the session's header first."""

    @property
    def session_id(self) -> str | None:
        for line in self.json_lines():
            if line.get("type") == "session" and isinstance(line.get("id"), str):
                return line["id"]
        return None


class Pi(AgentRunner[PiRun]):
    server: ChatServer
    run_class = PiRun

    def __init__(self, executable: Path, sandbox: Sandbox, server: ChatServer) -> None:
        super().__init__(executable, sandbox, server)
        self.agent_dir.mkdir(parents=True, exist_ok=True)
        (self.agent_dir / "models.json").write_text(json.dumps({"providers": {"fake": {
            "baseUrl": f"{server.url}/v1", "api": "openai-completions", "apiKey": "sk-fake",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": MODEL}],
        }}}, indent=2))

    @property
    def agent_dir(self) -> Path:
        """Pi's configuration directory (`PI_CODING_AGENT_DIR`), in the sandbox's home."""
        return self.sandbox.home / ".pi" / "agent"

    @property
    def plugin_path(self) -> Path:
        return self.sandbox.work / ".pi" / "extensions" / "agent-supervisor.js"

    def agent_env(self) -> dict[str, str]:
        env = self.sandbox.env(PI_CODING_AGENT_DIR=str(self.agent_dir), PI_OFFLINE="1")
        env["PATH"] = clis.node_path(env.get("PATH", os.defpath))
        return env

    def install_hooks(self, *extra: str) -> subprocess.CompletedProcess[str]:
        """`supervisor install pi --project WORK --root STORE EXTRA...`; must succeed."""
        done = self.sandbox.supervisor("install", "pi", "--project", str(self.sandbox.work),
                                       "--root", str(self.sandbox.store), *extra)
        assert done.returncode == 0, done.stderr
        return done

    def command(self, prompt: str, args: tuple[str, ...]) -> list[str]:
        return [str(self.executable), "--provider", "fake", "--model", MODEL, "--mode", "json",
                *args, "-p", prompt]


class PiDriver(Driver):
    name = "pi"
    shell_tool = "bash"
    scenarios = frozenset({DENY, ESCALATION, HEALTHY, FAILED_EDIT})
    exit_2 = "cannot access 'missing-dir'"
    edit_failure = "Could not find the exact text in"

    def shell_input(self, command: str) -> dict[str, Any]:
        return {"command": command}

    def check_install(self, agent: Agent) -> None:
        assert agent.plugin_path.read_text().startswith("// Agent Supervisor:")

    def check_denied(self, agent: Agent, told: list[str], events: Events) -> None:
        assert all("Command exited with code 2" in t for t in told[:3]), told
        refused = [v for v in of_type(events, "verdict") if v["action"] != "allow"]
        assert [v["action"] for v in refused] == ["block"]
        assert refused[0]["call_id"] == of_type(events, "tool_call")[3]["call_id"]

    def read(self, path: str) -> ToolCall:
        return ToolCall("read", {"path": path})

    def edit(self, path: str, old: str, new: str) -> ToolCall:
        return ToolCall("edit", {"path": path, "edits": [{"oldText": old, "newText": new}]})

    def healthy_more(self, agent: Agent) -> tuple[list[Turn], list[list[tuple[str, bool]]]]:
        notes = self.path(agent, "NOTES.md")
        return [turn(ToolCall("write", {"path": notes, "content": "add fixed\n"}))], \
            [[("write", True)]]

    def check_healthy(self, agent: Agent, run: Any, pairs: Pairs, events: Events) -> None:
        foo, notes = self.path(agent, "foo.py"), self.path(agent, "NOTES.md")
        assert (agent.sandbox.work / "NOTES.md").read_text() == "add fixed\n"
        # one replacement recorded under the engine's argument names
        assert pairs[2][0]["args"] == {"path": foo, "old_string": "return a - b",
                                       "new_string": "return a + b"}
        assert pairs[4][0]["args"] == {"path": notes, "content": "add fixed\n"}
        messages = of_type(events, "message")
        assert messages[0]["role"] == "user" and messages[0]["text"] == "fix foo.py"
        said = [m["text"] for m in messages if m["role"] == "assistant"]
        assert said == ["Reading.", "Fixed add."], said

    def check_failed_edit(self, agent: Agent, path: str, told: list[str],
                          events: Events) -> None:
        (result,) = told
        assert result.startswith(f"{self.edit_failure} {path}"), result
        # the supervisor's answer is added to the result the model reads
        assert f"Agent Supervisor: {closest(path)}" in result, result
        assert LINE_3 in result, result
        (recorded,) = of_type(events, "tool_result")
        assert recorded["ok"] is False and recorded["error"].startswith(self.edit_failure)
        (hint,) = of_type(events, "hint")
        assert hint["message"] in result
