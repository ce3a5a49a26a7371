"""The OpenCode and Kilo targets: the steps their plugin sends mapped to the supervisor's, the
answers it reads, the plugin itself run by node (its bounded wait, its fail-open, what it does
with each answer), and `supervisor install/uninstall opencode|kilo`."""

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from supervisor.engine.failures import error_line
from supervisor.guard.core import Verdict
from supervisor.hooks.kilo import TARGET as KILO
from supervisor.hooks.opencode import TARGET as OPENCODE
from supervisor.hooks.plugin_file import MARKER, PluginFile
from supervisor.hooks.settings_file import hook_argv
from supervisor.operator.send import send_decision
from tests.conftest import cli_env, run_cli
from tests.hook_helpers import events
from tests.hookd_helpers import server_pids

SID = "ses_de9e6f82affeV1idqBZoFekeDX"


def payload(event: str, **fields: object) -> dict:
    return {"session_id": SID, "hook_event_name": event, "cwd": "/w", **fields}


def test_the_plugins_steps() -> None:
    read = OPENCODE.read
    start = read(payload("session.created"))
    assert start.kind == "start" and start.start["agent"] == "opencode"
    assert start.start["opencode_session_id"] == SID and start.start["cwd"] == "/w"
    assert "opencode_parent_session_id" not in start.start
    child = KILO.read(payload("session.created", parent_session_id="ses_parent"))
    assert child.start["agent"] == "kilo" and child.start["kilo_parent_session_id"] == "ses_parent"
    prompt = read(payload("chat.message", prompt="fix foo.py"))
    assert prompt.kind == "prompt" and prompt.message == {"role": "user", "text": "fix foo.py"}
    call = read(payload("tool.execute.before", tool_name="edit", call_id="call_1", tool_input={
        "filePath": "/w/foo.py", "oldString": "a", "newString": "b", "replaceAll": False}))
    assert call.kind == "call" and call.pair is None
    assert call.call == {"call_id": "call_1", "tool": "edit", "args": {
        "file_path": "/w/foo.py", "old_string": "a", "new_string": "b", "replace_all": False}}
    said = read(payload("message.text", text=" Reading. "))
    assert said.kind == "notification"
    assert said.message == {"role": "assistant", "text": "Reading."}
    idle = read(payload("session.idle"))  # not a stop: see test_guidance_is_kept_for_a_prompt
    assert idle.kind == "notification" and idle.end is None
    assert idle.message == {"role": "system", "text": "OpenCode: the agent's turn ended"}
    other = read(payload("session.compacted", detail=1))
    assert other.kind == "other" and other.record is not None
    assert other.record["payload"] == {"detail": 1}


@pytest.mark.parametrize(("fields", "ok", "error"), [
    ({"tool_output": "ok\n", "metadata": {"exit": 0}}, True, None),
    ({"tool_output": "ls: cannot access 'x'\n", "metadata": {"exit": 2}}, False,
     "Exit code 2\nls: cannot access 'x'"),
    ({"tool_output": "<path>/w/foo.py</path>", "metadata": {"preview": "x"}}, True, None),
])
def test_a_result_fails_on_a_non_zero_exit(fields: dict, ok: bool, error: str | None) -> None:
    step = OPENCODE.read(payload("tool.execute.after", tool_name="bash", call_id="c",
                                 tool_input={"command": "ls x"}, **fields))
    assert step.kind == "result" and step.result is not None
    assert (step.result["ok"], step.result["error"]) == (ok, error)
    assert step.result["output"] == fields["tool_output"] and step.result["call_id"] == "c"


def test_a_tool_that_threw_is_a_failed_result() -> None:
    error = "Could not find oldString in the file. It must match exactly.\nmore"
    step = OPENCODE.read(payload("tool.error", tool_name="edit", call_id="c", error=error))
    assert step.result is not None and step.result["ok"] is False
    assert step.result["error"] == "Could not find oldString in the file. It must match exactly."
    assert step.result["output"] == error


def test_the_answers() -> None:
    answers = OPENCODE.answers
    block = answers.pre_tool(Verdict("block", message="stop repeating ls"))
    assert json.loads(block) == {"deny": "Agent Supervisor: stop repeating ls"}
    assert json.loads(answers.pre_tool(Verdict("stop")))["deny"].startswith("Agent Supervisor:")
    assert answers.pre_tool(Verdict("nudge", message="a note")) == ""  # given with the result
    assert not OPENCODE.context_before_call
    assert json.loads(answers.context("tool.error", "closest text")) == {
        "context": "Agent Supervisor: closest text"}
    assert json.loads(answers.context("chat.message", "guidance")) == {
        "context": "Agent Supervisor: guidance"}
    assert answers.context("session.created", "guidance") == ""
    assert answers.stop("session.idle", "keep going") == ""  # no way to keep OpenCode working


def _hook(target: str, root: Path, step: dict) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "supervisor", "hook", target, "--timeout", "30"],
        input=json.dumps(step), capture_output=True, text=True, timeout=60,
        env=cli_env(SUPERVISOR_HOME=str(root), SUPERVISOR_HOOK_DAEMON="0"),
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout


@pytest.mark.parametrize(("target", "prompt", "turn_ended"), [
    ("opencode", {"hook_event_name": "chat.message", "prompt": "go on"},
     {"hook_event_name": "session.idle"}),
    ("cline", {"hook_event_name": "beforeRun", "prompt": "go on"},
     {"hook_event_name": "afterRun", "text": "Done.", "status": "completed"}),
])
@pytest.mark.slow
def test_guidance_is_kept_for_a_prompt(tmp_path: Path, target: str, prompt: dict,
                                       turn_ended: dict) -> None:
    """Guidance sent while the agent finishes its turn is not taken by the end of the turn
    (where no plugin can give it to the model) but given with the next prompt."""
    root = tmp_path / "store"
    step = {"session_id": SID, "cwd": str(tmp_path)}
    assert _hook(target, root, {**step, **prompt}) == ""
    guided = run_cli("guide", SID, "Run the tests first.", "--no-wait",
                     SUPERVISOR_HOME=str(root))
    assert guided.returncode == 0, guided.stderr
    assert _hook(target, root, {**step, **turn_ended}) == ""
    answer = json.loads(_hook(target, root, {**step, **prompt}))
    assert "Run the tests first." in answer["context"]
    assert answer["context"].startswith("Agent Supervisor:")


# -- the plugin, run by node ---------------------------------------------------------------------
DRIVER = """
const { AgentSupervisor } = await import(process.argv[2]);
const hooks = await AgentSupervisor({ directory: "/w" });
const step = process.argv[3];
const started = Date.now();
const out = { args: { command: "ls x" } };
const after = { output: "out", metadata: { exit: 0 } };
let outcome;
try {
  if (step === "before") await hooks["tool.execute.before"](
    { tool: "bash", sessionID: "ses_1", callID: "c1" }, out);
  if (step === "after") await hooks["tool.execute.after"](
    { tool: "bash", sessionID: "ses_1", callID: "c1", args: out.args }, after);
  if (step === "error") {
    const messages = [{ info: { sessionID: "ses_1" }, parts: [{ type: "tool", tool: "edit",
      callID: "c2", sessionID: "ses_1",
      state: { status: "error", input: {}, error: "failed" } }] }];
    await hooks["experimental.chat.messages.transform"]({}, { messages });
    await hooks["experimental.chat.messages.transform"]({}, { messages });
    outcome = messages[0].parts[0].state.error;
  }
  outcome = outcome ?? (step === "after" ? after.output : "ran");
} catch (e) {
  outcome = "threw: " + e.message;
}
console.log(JSON.stringify({ outcome, ms: Date.now() - started }));
"""


def _plugin(tmp_path: Path, hook: list[str], hold_s: int = 1, root: Path | None = None) -> Path:
    """The real plugin template rendered with `hook` as the hook client; without `root` it
    never asks a resident server (every step runs `hook`)."""
    spec: PluginFile = OPENCODE.settings  # type: ignore[assignment]
    text = spec.render(hold_s, root)
    start = text.index("const HOOK = ")
    text = text[:start] + f"const HOOK = {json.dumps(hook)};" + text[text.index("\n", start):]
    if root is None:
        start = text.index("const SERVER = ")
        text = text[:start] + "const SERVER = null;" + text[text.index("\n", start):]
    path = tmp_path / "plugin.mjs"
    path.write_text(text)
    return path


def _runtime(name: str) -> tuple[list[str], dict[str, str]]:
    """(the command running a script, its environment) of a JavaScript runtime the plugins
    run in: node (Cline), or Bun, as OpenCode's own binary runs it (`BUN_BE_BUN=1`: OpenCode
    and Kilo load their plugins in Bun)."""
    if name == "node":
        node = shutil.which("node")
        if node is None:
            pytest.skip("node is not installed")
        return [node], {}
    from tests.agent_cli.clis import OPENCODE as OPENCODE_CLI
    from tests.agent_cli.clis import installed

    binary = installed(OPENCODE_CLI)
    if binary is None:
        pytest.skip("the pinned OpenCode binary (its Bun) is not installed")
    return [str(binary)], {"BUN_BE_BUN": "1"}


def _drive(tmp_path: Path, plugin: Path, step: str, runtime: str = "node", **env: str) -> dict:
    command, extra = _runtime(runtime)
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    done = subprocess.run([*command, str(driver), str(plugin), step], capture_output=True,
                          text=True, timeout=60, env=cli_env(**extra, **env))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _fake_hook(tmp_path: Path, answer: str, record: Path | None = None) -> list[str]:
    script = tmp_path / "fake-hook.sh"
    save = f'cat >> "{record}"; echo >> "{record}"' if record else "cat > /dev/null"
    script.write_text(f"#!/bin/sh\n{save}\nprintf '%s' '{answer}'\n")
    script.chmod(0o755)
    return [str(script)]


def test_the_plugin_throws_the_reason_of_a_deny(tmp_path: Path) -> None:
    record = tmp_path / "sent.jsonl"
    hook = _fake_hook(tmp_path, '{"deny":"Agent Supervisor: no"}', record)
    assert _drive(tmp_path, _plugin(tmp_path, hook), "before")["outcome"] == (
        "threw: Agent Supervisor: no")
    sent = json.loads(record.read_text().splitlines()[0])
    assert sent == {"session_id": "ses_1", "hook_event_name": "tool.execute.before", "cwd": "/w",
                    "tool_name": "bash", "tool_input": {"command": "ls x"}, "call_id": "c1"}


def test_the_plugin_adds_the_context_to_a_result_and_to_a_failure_once(tmp_path: Path) -> None:
    record = tmp_path / "sent.jsonl"
    hook = _fake_hook(tmp_path, '{"context":"Agent Supervisor: look"}', record)
    plugin = _plugin(tmp_path, hook)
    assert _drive(tmp_path, plugin, "after")["outcome"] == "out\n\nAgent Supervisor: look"
    assert _drive(tmp_path, plugin, "error")["outcome"] == "failed\n\nAgent Supervisor: look"
    events = [json.loads(line)["hook_event_name"] for line in record.read_text().splitlines()]
    assert events == ["tool.execute.after", "tool.error"]  # the failure reported once


@pytest.mark.parametrize("hook", [["/no/such/hook-client"], ["sh", "-c", "exit 3"],
                                  ["sh", "-c", "cat >/dev/null; echo not json"]])
def test_the_plugin_fails_open(tmp_path: Path, hook: list[str]) -> None:
    assert _drive(tmp_path, _plugin(tmp_path, hook), "before")["outcome"] == "ran"


@pytest.mark.slow
def test_the_plugin_bounds_its_wait_for_a_hook_that_hangs(tmp_path: Path) -> None:
    """A hook client that never answers: the call goes on after its timeout plus the grace."""
    started = time.monotonic()
    hangs = _plugin(tmp_path, ["sh", "-c", "exec sleep 60", "hook"], hold_s=1)
    result = _drive(tmp_path, hangs, "before")
    assert result["outcome"] == "ran"
    assert 2500 <= result["ms"] < 10_000
    assert time.monotonic() - started < 20


@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["node", "bun"])
def test_the_plugin_asks_the_resident_server_itself_and_falls_back_to_the_client(
        tmp_path: Path, runtime: str) -> None:
    """No process per step once the server runs; a killed server: the client again, which
    starts a new one, so the step is still supervised."""
    root = tmp_path / "store"
    spawned = tmp_path / "spawned"
    client = tmp_path / "client.sh"  # the real Python client, counting its runs
    client.write_text(f'#!/bin/sh\necho run >> "{spawned}"\n'
                      f'exec {shlex.join(hook_argv("opencode", root))} "$@"\n')
    client.chmod(0o755)
    plugin = _plugin(tmp_path, [str(client)], hold_s=30, root=root)
    runs = lambda: len(spawned.read_text().splitlines()) if spawned.exists() else 0  # noqa: E731
    assert _drive(tmp_path, plugin, "before", runtime)["outcome"] == "ran"
    assert runs() == 1  # no server yet: the client ran and started one
    first = _wait_server(root)
    assert _drive(tmp_path, plugin, "after", runtime)["outcome"] == "out"
    assert runs() == 1  # relayed by the plugin itself
    send_decision(root, "ses_1", "abort", operator="ana")
    refused = _drive(tmp_path, plugin, "before", runtime)["outcome"]
    assert refused.startswith("threw: Agent Supervisor") and runs() == 1
    os.kill(first, signal.SIGKILL)
    time.sleep(0.2)
    ended = "threw: Agent Supervisor: the session has ended (aborted)"
    assert _drive(tmp_path, plugin, "before", runtime)["outcome"] == ended  # still supervised
    assert runs() == 2
    _wait_server(root, other_than=first)
    assert _drive(tmp_path, plugin, "before", runtime)["outcome"] == ended and runs() == 2
    types = [e["type"] for e in events(root, "ses_1")]
    assert types.count("tool_call") == 1 and "tool_result" in types


def _wait_server(root: Path, other_than: int | None = None) -> int:
    end = time.monotonic() + 30
    while time.monotonic() < end:
        pids = [p for p in server_pids(root) if p != other_than]
        if pids and list((root / "run").glob("hook-*.sock")):
            return pids[0]
        time.sleep(0.05)
    raise AssertionError("no server")


# -- install / uninstall -----------------------------------------------------------------------
def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "XDG_CONFIG_HOME": "", "KILO_CONFIG_DIR": ""}


@pytest.mark.slow
@pytest.mark.parametrize(("target", "folder"), [("opencode", ".opencode/plugin"),
                                                ("kilo", ".kilo/plugin")])
def test_install_and_uninstall_in_a_project(tmp_path: Path, target: str, folder: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    store = tmp_path / "store"
    done = run_cli("install", target, "--project", str(project), "--root", str(store),
                   "--timeout", "90", **_env(tmp_path))
    assert done.returncode == 0, done.stderr
    plugin = project / folder / "agent-supervisor.js"
    text = plugin.read_text()
    assert text.startswith(MARKER) and "__" not in text.replace("__TARGET__", "")
    hook = json.loads(text.split("const HOOK = ", 1)[1].split(";\n", 1)[0])
    assert hook[-3:] == [target, "--root", str(store)]
    assert "const HOLD_S = 90;" in text and "const OTHER_S = 60;" in text

    again = run_cli("install", target, "--project", str(project), "--root", str(store),
                    "--timeout", "90", **_env(tmp_path))
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert run_cli("uninstall", target, "--project", str(project),
                   **_env(tmp_path)).returncode == 0
    assert not plugin.exists()
    assert not list((project / folder).iterdir())  # no backup left behind


def test_user_install_follows_the_config_home(tmp_path: Path) -> None:
    env = {**_env(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "KILO_CONFIG_DIR": str(tmp_path / "kilo")}
    assert run_cli("install", "opencode", "--user", **env).returncode == 0
    assert (tmp_path / "cfg" / "opencode" / "plugin" / "agent-supervisor.js").is_file()
    assert run_cli("install", "kilo", **env).returncode == 0
    assert (tmp_path / "kilo" / "plugin" / "agent-supervisor.js").is_file()


@pytest.mark.slow
def test_a_file_that_is_not_ours_is_never_touched(tmp_path: Path) -> None:
    project = tmp_path / "project"
    theirs = project / ".opencode" / "plugin" / "agent-supervisor.js"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("export const Mine = async () => ({});\n")
    done = run_cli("install", "opencode", "--project", str(project), **_env(tmp_path))
    assert done.returncode != 0 and "not the supervisor's plugin" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    gone = run_cli("uninstall", "opencode", "--project", str(project), **_env(tmp_path))
    assert gone.returncode == 0 and "no supervisor plugin" in gone.stdout
    assert theirs.read_text() == "export const Mine = async () => ({});\n"


def test_http_transport_is_refused_for_a_plugin(tmp_path: Path) -> None:
    done = run_cli("install", "opencode", "--project", str(tmp_path), "--transport", "http",
                   **_env(tmp_path))
    assert done.returncode != 0 and "no HTTP hooks" in done.stderr
    assert not (tmp_path / ".opencode").exists()


# -- Cline: the same plugin protocol, its own steps ------------------------------------------------
def test_cline_steps() -> None:
    from supervisor.hooks.cline import TARGET as CLINE

    def cline(event: str, **fields: object):
        return CLINE.read({"session_id": "conv_1", "hook_event_name": event, "cwd": "/w",
                           **fields})

    prompt = cline("beforeRun", prompt='<user_input mode="act">fix foo.py</user_input>')
    assert prompt.kind == "prompt" and prompt.message == {"role": "user", "text": "fix foo.py"}
    assert prompt.start["agent"] == "cline" and prompt.start["cline_conversation_id"] == "conv_1"
    call = cline("beforeTool", tool_name="run_commands", call_id="c1",
                 tool_input={"commands": ["ls x"]})
    assert call.call == {"call_id": "c1", "tool": "run_commands",
                         "args": {"commands": ["ls x"]}}
    failed = cline("afterTool", tool_name="run_commands", call_id="c1", is_error=False,
                   tool_output=[{"query": "ls x", "success": False,
                                 "result": "[Command exited with code 2]\n\n[stderr]\nls: no x\n",
                                 "error": "Command exited with code 2"}])
    assert failed.result is not None and failed.result["ok"] is False
    assert failed.result["error"] == "Command exited with code 2\nls: no x"
    # what the command printed, as another agent's shell result reads (not Cline's JSON), so
    # the engine names the error by its own line
    printed = "[Command exited with code 2]\n\n[stderr]\nls: cannot access 'x': No such file\n"
    listed = cline("afterTool", tool_name="run_commands", call_id="c1", is_error=False,
                   tool_output=[{"query": "ls x", "success": False, "result": printed,
                                 "error": "Command exited with code 2"}])
    assert listed.result is not None and listed.result["output"] == printed
    assert error_line(False, listed.result["error"], printed) == (
        "ls: cannot access 'x': No such file")
    ok = cline("afterTool", tool_name="run_commands", call_id="c2",
               tool_output=[{"query": "true", "result": "", "success": True}])
    assert ok.result is not None and ok.result["ok"] is True
    threw = cline("afterTool", tool_name="editor", call_id="c3", is_error=True,
                  tool_output={"error": "boom\nmore"})
    assert threw.result is not None and threw.result["error"] == "boom"
    ended = cline("afterRun", text="All done.", status="completed")
    assert ended.kind == "notification"
    assert ended.message == {"role": "assistant", "text": "All done."}
    assert json.loads(CLINE.answers.context("afterTool", "look")) == {
        "context": "Agent Supervisor: look"}
    assert CLINE.answers.context("tool.execute.after", "look") == ""
    assert json.loads(CLINE.answers.context("beforeRun", "look"))["context"].endswith("look")


@pytest.mark.slow
def test_cline_install_and_uninstall(tmp_path: Path) -> None:
    env = _env(tmp_path)
    done = run_cli("install", "cline", "--user", **env)
    assert done.returncode == 0, done.stderr
    assert "hub daemon" in done.stdout
    plugin = tmp_path / "home" / ".cline" / "plugins" / "agent-supervisor.js"
    assert plugin.read_text().startswith(MARKER) and "export default" in plugin.read_text()
    assert run_cli("uninstall", "cline", **env).returncode == 0
    assert not plugin.exists()


@pytest.mark.parametrize("name", ["opencode", "kilo", "cline"])
def test_every_plugin_file_is_valid_javascript(tmp_path: Path, name: str) -> None:
    """The shared client part and the agent's part make one module node can load."""
    from supervisor.hooks.targets import load

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    spec: PluginFile = load(name).settings  # type: ignore[assignment]
    text = spec.render(90, tmp_path / "store")
    assert text.startswith(MARKER) and text.count(MARKER) == 1
    path = tmp_path / "plugin.mjs"
    path.write_text(text)
    done = subprocess.run([node, "--check", str(path)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
