"""The Pi target: the steps its extension sends mapped to the supervisor's (the payloads as Pi
0.73's events carry them, captured from the real binary: docs/pi.md), the answers it reads,
and `supervisor install/uninstall pi`. The extension itself runs in the real binary
(tests/agent_cli/test_pi_e2e.py, drivers/pi.py)."""

import json
from pathlib import Path

import pytest

from supervisor.guard.core import Verdict
from supervisor.hooks.pi import TARGET, user_plugin_path
from supervisor.hooks.plugin_file import MARKER
from tests.conftest import run_cli

SID = "01a2216f-813a-71c8-a39c-966a7b8cbbcd"


def payload(event: str, **fields: object) -> dict:
    return {"session_id": SID, "hook_event_name": event, "cwd": "/w", **fields}


def call(tool: str, args: dict) -> dict:
    return TARGET.read(payload("tool_call", tool_name=tool, tool_input=args,
                               call_id="call_1")).call


def test_the_extensions_steps() -> None:
    start = TARGET.read(payload("session_start", reason="startup"))
    assert start.kind == "start" and start.start["agent"] == "pi"
    assert start.start["pi_session_id"] == SID and start.start["cwd"] == "/w"
    prompt = TARGET.read(payload("before_agent_start", prompt="fix foo.py"))
    assert prompt.kind == "prompt" and prompt.message == {"role": "user", "text": "fix foo.py"}
    said = TARGET.read(payload("message.text", text=" Reading. "))
    assert said.message == {"role": "assistant", "text": "Reading."}
    end = TARGET.read(payload("session_shutdown", reason="quit"))
    assert end.kind == "end" and "quit" in end.end["reason"]
    assert call("bash", {"command": "ls", "timeout": 5}) == {
        "call_id": "call_1", "tool": "bash", "args": {"command": "ls", "timeout": 5}}


def test_an_edit_is_recorded_under_the_engines_names() -> None:
    one = call("edit", {"path": "/w/a.py", "edits": [{"oldText": "a", "newText": "b"}]})
    assert one["args"] == {"path": "/w/a.py", "old_string": "a", "new_string": "b"}
    flat = call("edit", {"path": "/w/a.py", "oldText": "a", "newText": "b"})
    assert flat["args"] == one["args"]
    two = call("edit", {"path": "/w/a.py", "edits": [{"oldText": "a", "newText": "b"},
                                                     {"oldText": "c", "newText": "d"}]})
    assert two["args"] == {"path": "/w/a.py", "edits": [
        {"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]}
    # another tool's oldText is left as it is
    assert call("my_tool", {"oldText": "a"})["args"] == {"oldText": "a"}


def result(output: str, is_error: bool) -> dict:
    return TARGET.read(payload("tool_result", tool_name="bash", tool_input={"command": "x"},
                               call_id="call_1", tool_output=output, is_error=is_error)).result


def test_outcomes() -> None:
    ok = result("hello\n", False)
    assert ok["ok"] is True and ok["error"] is None and ok["output"] == "hello\n"
    failed = result("ls: cannot access 'missing-dir': No such file or directory\n\n\n"
                    "Command exited with code 2", True)
    assert failed["ok"] is False
    assert failed["error"] == (
        "Exit code 2\nls: cannot access 'missing-dir': No such file or directory")
    edit = result("Could not find the exact text in /w/a.py. The old text must match.", True)
    assert edit["error"] == "Could not find the exact text in /w/a.py. The old text must match."
    assert result("", True)["error"] == "the tool call failed"


def test_the_answers() -> None:
    refused = json.loads(TARGET.answers.pre_tool(Verdict("block", message="repeated")))
    assert refused["deny"].startswith("Agent Supervisor:") and "repeated" in refused["deny"]
    assert TARGET.answers.pre_tool(Verdict("nudge", message="a note")) == ""
    assert '"context"' in TARGET.answers.context("tool_result", "a note")
    assert '"context"' in TARGET.answers.context("before_agent_start", "guidance")
    assert TARGET.answers.context("session_start", "x") == ""
    assert TARGET.answers.stop("session_shutdown", "guidance") == ""


@pytest.mark.slow
def test_install_and_uninstall_in_pis_agent_dir(tmp_path: Path) -> None:
    agent_dir = tmp_path / "pi-agent"
    env = {"HOME": str(tmp_path), "SUPERVISOR_HOME": str(tmp_path / "store"),
           "PI_CODING_AGENT_DIR": str(agent_dir)}
    done = run_cli("install", "pi", **env)
    assert done.returncode == 0, done.stderr
    plugin = agent_dir / "extensions" / "agent-supervisor.js"
    text = plugin.read_text()
    assert text.startswith(MARKER) and "export default function agentSupervisor(pi)" in text
    assert '"target": "pi"' in text
    done = run_cli("uninstall", "pi", **env)
    assert done.returncode == 0, done.stderr
    assert not plugin.exists()


def test_the_user_extension_follows_pi_coding_agent_dir(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "x"))
    assert user_plugin_path() == tmp_path / "x" / "extensions" / "agent-supervisor.js"
    monkeypatch.delenv("PI_CODING_AGENT_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert user_plugin_path() == tmp_path / ".pi" / "agent" / "extensions" / "agent-supervisor.js"


@pytest.mark.slow
def test_doctor_checks_the_extensions_hook_client(tmp_path: Path) -> None:
    """A plugin file (Pi's extension, as OpenCode's, Kilo's and Cline's plugins) is checked as a
    settings file's entry: the hook client it runs when it cannot reach the server."""
    env = {"HOME": str(tmp_path), "SUPERVISOR_HOME": str(tmp_path / "store"),
           "PI_CODING_AGENT_DIR": "", "XDG_CONFIG_HOME": ""}
    assert run_cli("install", "pi", **env).returncode == 0
    plugin = tmp_path / ".pi" / "agent" / "extensions" / "agent-supervisor.js"

    done = run_cli("doctor", "--project", str(tmp_path), **env)

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"pi: {plugin}: ok, 1 hook(s) (plugin): supervisor " in done.stdout, done.stdout
    text = plugin.read_text()
    start = text.index("const HOOK = ")
    end = text.index("\n", start)
    gone = tmp_path / "gone" / "supervisor-hook"
    plugin.write_text(f'{text[:start]}const HOOK = ["{gone}"];{text[end:]}')

    broken = run_cli("doctor", "--project", str(tmp_path), **env)

    assert broken.returncode == 1, broken.stdout
    assert f"pi: {plugin}: plugin: BROKEN: {gone} does not exist any more" in broken.stdout
