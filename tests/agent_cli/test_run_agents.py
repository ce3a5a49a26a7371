"""`supervisor run claude|codex|gemini`: the real agent CLIs in the supervisor's own tmux, with
the hooks wired for that run only (Claude Code `--settings FILE`, Codex `-c hooks.*`, Gemini CLI
`GEMINI_CLI_HOME`), recording into the session named before they started, from
their first tool call, with no settings file of the user's touched and nothing left behind."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from supervisor.host.tmux import Server, socket_name
from tests.agent_cli.anthropic_api import AnthropicServer
from tests.agent_cli.claude_runner import ALLOWED_TOOLS, ClaudeCode
from tests.agent_cli.codex_runner import MODEL, Codex
from tests.agent_cli.gemini_api import GeminiServer
from tests.agent_cli.gemini_runner import Gemini
from tests.agent_cli.openai_api import OpenAIServer
from tests.agent_cli.sandbox import Sandbox
from tests.agent_cli.script import Script, Text, ToolCall, say, turn

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]
FOO = "def add(a, b):\n    return a - b\n"


def snapshot(directory: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in directory.rglob("*") if p.is_file()}


def supervised_run(sandbox: Sandbox, command: str, executable: Path, env: dict[str, str],
                   *args: str) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    """`supervisor run --name r1 AGENT -- ARGS` in the work dir, the CLI on PATH as `command`;
    waits for the session's end and the pane's exit. (the run record, the events, the screen)"""
    bin_dir = sandbox.base / "bin"
    bin_dir.mkdir()
    (bin_dir / command).symlink_to(executable)
    env = {**env, "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"}
    server = Server(socket_name(sandbox.store))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "supervisor", "run", "--name", "r1", "--root",
             str(sandbox.store), command, "--", *args],
            cwd=sandbox.work, env=env, capture_output=True, text=True, timeout=60,
        )
        assert done.returncode == 0, done.stderr
        record = json.loads((sandbox.store / "host" / "r1.json").read_text())
        deadline = time.monotonic() + 120
        while not (any(e["type"] == "session_end" for e in sandbox.events("r1"))
                   and server.pane_dead("r1")):
            assert time.monotonic() < deadline, server.capture("r1")
            time.sleep(0.2)
        screen = server.capture("r1")
    finally:
        server.kill_server()
    return record, sandbox.events("r1"), screen


def check_supervised(sandbox: Sandbox, record: dict[str, Any], events: list[dict[str, Any]],
                     screen: str, agent: str, tools: list[str]) -> None:
    # one session, the one named before the agent started (not the agent's own id)
    assert sandbox.sessions() == ["r1"]
    start = events[0]
    assert start["type"] == "session_start" and start["agent"] == agent
    assert start["pid"] == record["pid"] and start["host"]  # a dead agent shows dead
    calls = [e for e in events if e["type"] == "tool_call"]
    assert [c["tool"] for c in calls] == tools
    verdicts = [(v["call_id"], v["action"]) for v in events if v["type"] == "verdict"]
    assert verdicts == [(c["call_id"], "allow") for c in calls]  # judged from the first call
    assert "the agent exited with status 0" in screen, screen
    assert not (sandbox.store / "host" / "r1.d").exists()  # the run's settings are gone


def test_supervisor_run_claude(claude_executable: Path, sandbox: Sandbox,
                               anthropic: AnthropicServer) -> None:
    claude = ClaudeCode(claude_executable, sandbox, anthropic)  # no hooks installed anywhere
    foo = sandbox.write("foo.py", FOO)
    sandbox.commit("add foo")
    user = sandbox.home / ".claude" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"theme": "dark"}))
    anthropic.script = Script(main=[
        turn(Text("Let me look."), ToolCall("Read", {"file_path": str(foo)})),
        turn(ToolCall("Bash", {"command": "python3 -c 'import foo'", "description": "import"})),
        say("Looked at it."),
    ])
    record, events, screen = supervised_run(
        sandbox, "claude", claude_executable, claude.agent_env(), "-p", "look at foo.py",
        "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits",
        "--allowedTools", ALLOWED_TOOLS)
    check_supervised(sandbox, record, events, screen, "claude-code", ["Read", "Bash"])
    assert events[0]["cwd"] == str(sandbox.work)
    assert [e["status"] for e in events if e["type"] == "session_end"] == ["completed"]
    assert user.read_text() == json.dumps({"theme": "dark"})
    assert sorted(p.name for p in user.parent.glob("settings*")) == ["settings.json"]
    assert not (sandbox.work / ".claude").exists()


def test_supervisor_run_codex(codex_executable: Path, sandbox: Sandbox,
                              openai: OpenAIServer) -> None:
    codex = Codex(codex_executable, sandbox, openai)
    home = sandbox.home / ".codex"
    home.mkdir(parents=True)
    (home / "config.toml").write_text('# the user\'s own\nmodel = "other"\n')
    before = snapshot(home)
    openai.script = Script(main=[
        turn(ToolCall("exec_command", {"cmd": "cat README.md"})), say("Read it."),
    ])
    provider = (f'model_providers.fake={{name="fake",base_url="{openai.url}/v1",'
                'env_key="OPENAI_API_KEY",wire_api="responses"}')
    record, events, screen = supervised_run(
        sandbox, "codex", codex_executable, codex.agent_env(), "exec", "-c", provider,
        "-c", "model_provider=fake", "-m", MODEL, "--dangerously-bypass-approvals-and-sandbox",
        "--skip-git-repo-check", "--json", "read the readme")
    check_supervised(sandbox, record, events, screen, "codex", ["Bash"])
    assert {p: b for p, b in snapshot(home).items() if p in before} == before
    assert not (home / "hooks.json").exists() and not (sandbox.work / ".codex").exists()


def test_supervisor_run_gemini(gemini_executable: Path, sandbox: Sandbox,
                               gemini_api: GeminiServer) -> None:
    gemini = Gemini(gemini_executable, sandbox, gemini_api)
    before = gemini.user_settings_path.read_bytes()
    gemini_api.script = Script(main=[
        turn(ToolCall("run_shell_command", {"command": "cat README.md",
                                            "description": "read"})),
        say("Read it."),
    ])
    record, events, screen = supervised_run(
        sandbox, "gemini", gemini_executable, gemini.agent_env(), "-p", "read the readme",
        "--skip-trust", "-y", "-o", "json")
    check_supervised(sandbox, record, events, screen, "gemini", ["run_shell_command"])
    assert gemini.user_settings_path.read_bytes() == before
    assert not (sandbox.work / ".gemini").exists()
