"""The Codex CLI target on the payloads the real Codex 0.169.0 sent (tests/data/codex/, captured
by `python -m tests.agent_cli.capture codex`), its answers, and its installer."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from supervisor.hooks.codex import TARGET
from supervisor.hooks.codex.payload import map_payload
from supervisor.hooks.codex.respond import context_output, pre_tool_output, stop_output
from supervisor.hooks.codex.rollout import exit_code
from supervisor.hooks.codex.transcript import read_rollout
from tests.conftest import cli_env, run_cli
from tests.guard_helpers import events, of_type

DATA = Path(__file__).parent / "data" / "codex"
ROLLOUT = DATA / "session.rollout.jsonl"


def captured() -> list[dict]:
    """The captured payloads, their transcript pointing at the captured rollout."""
    payloads = [json.loads(line)["payload"]
                for line in (DATA / "session.payloads.jsonl").read_text().splitlines()]
    for payload in payloads:
        payload["transcript_path"] = str(ROLLOUT)
    return payloads


def by_command(event: str) -> dict[str, dict]:
    return {p["tool_input"]["command"]: p for p in captured() if p["hook_event_name"] == event}


def test_the_targets_vocabulary_names_what_codex_hooks_send() -> None:
    """The live hook knows the names Codex's hooks send: the pinned Codex's calls reach them
    as `Bash` (its payloads here); `write_stdin` never does (Codex sends no PreToolUse for it:
    docs/codex.md, "Waiting"), so it is no poll of the target's but of the importer's, which
    reads a rollout's polls. In a fresh interpreter that imports only the target, as the
    hook does."""
    sent = {p["tool_name"] for p in captured() if "tool_name" in p}
    assert sent == {"Bash"}
    assert {TARGET.tools.role(tool) for tool in sent} == {"shell"}
    assert TARGET.tools.poll == () and TARGET.tools.input_keys == ()
    probe = ("from supervisor.engine.tools import vocabulary\n"
             "import supervisor.hooks.codex\n"
             "print(vocabulary().role('Bash'), vocabulary().role('write_stdin'))\n"
             "import supervisor.importers\n"
             "print(vocabulary().role('write_stdin'), vocabulary().input_keys)\n")
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert shown == ["shell None", "poll ('chars',)"]


def test_session_start_and_prompt_keep_model_and_turn_id() -> None:
    start, prompt = captured()[:2]
    step = map_payload(start)
    assert step.kind == "start" and step.start["agent"] == "codex"
    assert step.start["model"] == "fake-model" and step.start["codex_session_id"]
    assert step.start["permission_mode"] == "bypassPermissions"
    step = map_payload(prompt)
    assert step.kind == "prompt" and step.message is not None
    assert step.message["text"] == "fix foo.py"
    assert step.message["extra"] == {"turn_id": prompt["turn_id"], "model": "fake-model"}


def test_a_call_keeps_its_tool_use_id() -> None:
    pre = by_command("PreToolUse")["exit 3"]
    step = map_payload(pre)
    assert step.kind == "call" and step.pair is None
    assert step.call == {"call_id": pre["tool_use_id"], "tool": "Bash",
                         "args": {"command": "exit 3"}}


@pytest.mark.parametrize(("command", "ok", "error"), [
    ("cat foo.py", True, None),
    ("exit 3", False, "Exit code 3"),
    ('python3 -c "from foo import add; assert add(2, 3) == 5, add(2, 3)"', False,
     "Exit code 1\nTraceback (most recent call last):"),
    ("echo one", True, None),
])
def test_the_outcome_comes_from_the_rollout(command: str, ok: bool, error: str | None) -> None:
    post = by_command("PostToolUse")[command]
    step = map_payload(post)
    assert step.kind == "result" and step.result is not None
    assert step.result["call_id"] == post["tool_use_id"]
    assert step.result["output"] == post["tool_response"]
    assert (step.result["ok"], step.result["error"]) == (ok, error)


def test_without_the_rollout_the_outcome_is_unknown_and_recorded_as_a_success(
    tmp_path: Path,
) -> None:
    post = by_command("PostToolUse")["exit 3"]
    post["transcript_path"] = str(tmp_path / "gone.jsonl")
    step = map_payload(post)
    assert step.result is not None and step.result["ok"] is True


def test_exit_code_reads_only_the_end_of_a_long_rollout(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout.jsonl"
    item = {"type": "event_msg", "payload": {"type": "item_completed", "item": {
        "type": "CommandExecution", "id": "call_X", "exit_code": 7}}}
    filler = json.dumps({"type": "response_item", "payload": {"text": "x" * 1000}}) + "\n"
    rollout.write_text(json.dumps(item) + "\n" + filler * 400)
    assert exit_code(str(rollout), "call_X") is None  # beyond the tail: not searched
    with rollout.open("a") as handle:
        handle.write(json.dumps(item) + "\n" + filler)
    assert exit_code(str(rollout), "call_X") == 7
    assert exit_code(str(rollout), "call_Y") is None


def test_stop_and_end() -> None:
    stop = next(p for p in captured() if p["hook_event_name"] == "Stop")
    step = map_payload(stop)
    assert step.kind == "stop" and step.message is not None
    assert step.message == {"role": "assistant",
                            "text": "The check keeps failing; stopping here."}
    end = map_payload(captured()[-1])
    assert end.kind == "end" and end.end == {"status": "completed",
                                            "reason": "Codex session ended (other)"}


def test_the_transcript_reader_finds_the_assistant_texts_and_the_usage() -> None:
    entries, offset = read_rollout(str(ROLLOUT), 0)
    texts = [e for e in entries if isinstance(e, str)]
    assert texts == ["Looking at foo.py.", "The check keeps failing; stopping here."]
    assert {"used_model": "fake-model"} in entries
    spent = [e for e in entries if isinstance(e, dict) and "key" in e]
    assert spent[0]["counts"] == {"input_tokens": 100, "cache_read_tokens": 0,
                                  "output_tokens": 10}
    assert spent[0]["key"].startswith("resp_")
    assert len({s["key"] for s in spent}) == len(spent)  # one per response
    assert offset == ROLLOUT.stat().st_size
    assert read_rollout(str(ROLLOUT), offset) == ([], offset)


def test_answers_in_codex_shape() -> None:
    deny = pre_tool_output("block", "Blocked: stop repeating")
    assert deny == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "Agent Supervisor: Blocked: stop repeating"}}
    stop = pre_tool_output("stop", None)
    assert stop is not None and "continue" not in stop  # Codex would ignore the whole answer
    reason = stop["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("Agent Supervisor: it stopped this session")
    skip = pre_tool_output("skip", "Unchanged since step 3.", cached_output="old content")
    assert skip is not None
    assert skip["hookSpecificOutput"]["permissionDecisionReason"].endswith("\n\nold content")
    assert pre_tool_output("allow", None) is None
    assert pre_tool_output("nudge", "careful") == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "additionalContext": "Agent Supervisor: careful"}}
    assert context_output("PostToolUse", "hint")["hookSpecificOutput"]["additionalContext"] == (
        "hint")
    assert context_output("SessionEnd", "hint") is None
    assert stop_output("do X") == {"decision": "block", "reason": "do X"}
    assert stop_output(None) is None


def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "CODEX_HOME": ""}


@pytest.mark.slow
def test_install_and_uninstall_restore_hooks_json_exactly(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    hooks = project / ".codex" / "hooks.json"
    hooks.parent.mkdir(parents=True)
    mine = '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}\n'
    hooks.write_text(mine)

    dry = run_cli("install", "codex", "--project", str(project), "--dry-run", **_env(tmp_path))
    assert dry.returncode == 0 and "+" in dry.stdout and hooks.read_text() == mine
    done = run_cli("install", "codex", "--project", str(project), "--timeout", "120",
                   **_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "--dangerously-bypass-hook-trust" in done.stdout  # hook trust explained
    data = json.loads(hooks.read_text())
    assert data["hooks"]["Stop"][0]["hooks"][0]["command"] == "notify"
    ours = {event: groups[-1]["hooks"][0] for event, groups in data["hooks"].items()}
    assert set(ours) == {e for e, _ in TARGET.settings.events}
    assert ours["PreToolUse"]["timeout"] == 120
    assert ours["SessionEnd"]["timeout"] == 3 and ours["Interrupt"]["timeout"] == 3
    assert ours["PostToolUse"]["timeout"] == 60
    assert all(TARGET.settings.is_ours(h["command"]) for h in ours.values() if h is not
               data["hooks"]["Stop"][0]["hooks"][0])
    assert " codex --timeout 120" in ours["PreToolUse"]["command"]

    undone = run_cli("uninstall", "codex", "--project", str(project), **_env(tmp_path))
    assert undone.returncode == 0, undone.stderr
    assert hooks.read_text() == mine


@pytest.mark.slow
def test_user_install_goes_to_codex_home(tmp_path: Path) -> None:
    env = _env(tmp_path)
    env["CODEX_HOME"] = str(tmp_path / "codex-home")
    done = run_cli("install", "codex", **env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "codex-home" / "hooks.json").is_file()


MULTI_FILE_PATCH = ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/a.py\n@@\n"
                    "-A = 1\n+A = 2\n*** Update File: src/b.py\n@@\n-B = 1\n+B = 2\n"
                    "*** Add File: src/c.py\n+C = 3\n*** End Patch\nEOF")


def test_a_patch_over_several_files_records_and_shows_every_file(tmp_path: Path) -> None:
    """Codex runs a patch as a shell line (`Bash` with `apply_patch <<'EOF'`, its files only
    in the headers): the call's `files_before` records every file it touches (the one
    `docs/protocol.md` field of the files a call may write; the one it adds as null), and
    `supervisor tail` and the dashboard's history say them before the arguments, where a line
    cut at the terminal's width keeps them."""
    from supervisor.store.render import summary

    work, root = tmp_path / "work", tmp_path / "store"
    (work / "src").mkdir(parents=True)
    (work / "src" / "a.py").write_text("A = 1\n")
    (work / "src" / "b.py").write_text("B = 1\n")
    (root).mkdir()
    (root / "policy.toml").write_text("[guard]\ncheckpoints = false\n")
    start, prompt = captured()[:2]
    pre = {**by_command("PreToolUse")["cat foo.py"],
           "tool_input": {"command": MULTI_FILE_PATCH}}
    for payload in (start, prompt, pre):
        payload["cwd"] = str(work)
        done = subprocess.run(
            [sys.executable, "-m", "supervisor", "hook", "codex", "--timeout", "30"],
            input=json.dumps(payload), capture_output=True, text=True, timeout=60,
            env=cli_env(SUPERVISOR_HOME=str(root), SUPERVISOR_HOOK_DAEMON="0"))
        assert done.returncode == 0 and not done.stderr, done.stderr
    (session,) = (root / "sessions").iterdir()
    (call,) = of_type(events(root, session.name), "tool_call")
    assert call["tool"] == "Bash" and call["args"] == {"command": MULTI_FILE_PATCH}
    assert list(call["files_before"]) == ["src/a.py", "src/b.py", "src/c.py"]
    assert call["files_before"]["src/a.py"] and call["files_before"]["src/c.py"] is None
    said = "Bash on src/a.py, src/b.py, src/c.py: {\"command\":\"apply_patch"
    assert summary(call).startswith(said)
    tail = run_cli("tail", session.name, "--root", str(root), COLUMNS="80")
    assert tail.returncode == 0, tail.stderr
    (line,) = [line for line in tail.stdout.splitlines() if "tool_call" in line]
    assert said in line
