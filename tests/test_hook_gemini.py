"""The Gemini CLI target on the payloads the real Gemini CLI 0.61.0 sent (tests/data/gemini/,
captured by `python -m tests.agent_cli.capture gemini`), its pairing of calls without ids, its
answers, its installer, and its tool names in the engine's categories."""

import json
from pathlib import Path

import pytest

from supervisor.engine import Policy
from supervisor.engine.categories import classify
from supervisor.hooks import memory as hook_memory
from supervisor.hooks.gemini import TARGET
from supervisor.hooks.gemini.payload import map_payload
from supervisor.hooks.gemini.respond import before_tool_output, context_output
from supervisor.hooks.gemini.transcript import read_transcript
from supervisor.store.paths import SessionFiles
from tests.conftest import run_cli

DATA = Path(__file__).parent / "data" / "gemini"


def captured(event: str) -> list[dict]:
    payloads = [json.loads(line)["payload"]
                for line in (DATA / "session.payloads.jsonl").read_text().splitlines()]
    return [p for p in payloads if p["hook_event_name"] == event]


def test_prompt_call_and_stop() -> None:
    start = map_payload(captured("SessionStart")[0])
    assert start.kind == "start" and start.start["agent"] == "gemini"
    assert start.start["gemini_session_id"]
    prompt = map_payload(captured("BeforeAgent")[0])
    assert prompt.kind == "prompt" and prompt.message == {"role": "user", "text": "fix foo.py"}
    call = map_payload(captured("BeforeTool")[0])
    assert call.kind == "call" and call.call is not None
    assert call.call["tool"] == "read_file" and call.call["args"] == {"file_path": "foo.py"}
    assert call.pair == call.call["call_id"]  # the runtime numbers it
    stop = map_payload(captured("AfterAgent")[0])
    assert stop.kind == "stop" and stop.message is not None
    assert stop.message["text"].endswith("Fixed add; stopping here.")
    end = map_payload(captured("SessionEnd")[0])
    assert end.kind == "end" and end.end is not None and "exit" in end.end["reason"]


def _result(tool: str, **tool_input: str):
    for payload in captured("AfterTool"):
        if payload["tool_name"] == tool and payload["tool_input"] == tool_input:
            step = map_payload(payload)
            assert step.kind == "result" and step.result is not None
            return step
    raise AssertionError(f"no AfterTool {tool} {tool_input}")


CHECK = 'python3 -c "from foo import add; assert add(2, 3) == 5, add(2, 3)"'


@pytest.mark.parametrize(("tool", "tool_input", "ok", "error"), [
    ("read_file", {"file_path": "foo.py"}, True, None),
    ("read_file", {"file_path": "missing.py"}, False, "File not found: /home/dev/myapp/missing.py"),
    ("replace", {"file_path": "foo.py", "old_string": "return a * b",
                 "new_string": "return a + b", "instruction": "fix add"},
     False, "Could not find an exact match for 'old_string' in 'foo.py'. If previous edits "
            "modified the file or you are modifying lines outside your recent read window, "
            "please use ReadFile to inspect the target lines before retrying with an exact "
            "'old_string'."),
    ("run_shell_command", {"command": "exit 3", "description": "fail"}, False, "Exit code 3"),
    ("run_shell_command", {"command": CHECK, "description": "check add"}, True, None),
    ("glob", {"pattern": "*.py"}, True, None),
])
def test_the_outcome_of_each_tool(tool: str, tool_input: dict, ok: bool, error: str | None):
    step = _result(tool, **tool_input)
    assert step.result is not None
    assert (step.result["ok"], step.result["error"]) == (ok, error)
    assert "PGID" not in step.result["output"]


def test_a_failing_shell_command_names_its_output() -> None:
    payload = {"session_id": "s", "hook_event_name": "AfterTool", "tool_name": "run_shell_command",
               "tool_input": {"command": "ls nope"}, "tool_response": {
                   "llmContent": "<untrusted_context>\nOutput: ls: cannot access 'nope'\n"
                                 "Exit Code: 2\nProcess Group PGID: 1\n</untrusted_context>",
                   "returnDisplay": "Command exited with code: 2"}}
    step = map_payload(payload)
    assert step.result is not None
    assert step.result["error"] == "Exit code 2\nls: cannot access 'nope'"


def test_calls_without_ids_pair_by_order_and_refused_calls_stop_waiting() -> None:
    memory = hook_memory.Memory()
    first, second = memory.pair_call("k"), memory.pair_call("k")
    other = memory.pair_call("j")
    assert len({first, second, other}) == 3
    memory.unpair("k", first)  # refused: no result will come
    assert memory.pair_result("k") == second
    assert memory.pair_result("k") is None
    assert memory.pair_result("j") == other and memory.waiting == {}


def test_the_pairing_survives_a_save(tmp_path: Path) -> None:
    with hook_memory.remembered(SessionFiles(tmp_path, tmp_path)) as memory:
        waiting = memory.pair_call("k")
        memory.hold_note(waiting, "a note")
    with hook_memory.remembered(SessionFiles(tmp_path, tmp_path)) as memory:
        assert memory.pair_result("k") == waiting
        assert memory.take_note(waiting) == "a note"
        assert memory.numbered == 1


def test_the_memory_is_saved_when_changed_in_place_and_only_then(tmp_path: Path) -> None:
    """Whether a block changed the memory is told from its values (`_values`), not its JSON:
    a list changed in place (a result taking the oldest waiting id) is saved, a block that
    only reads writes nothing."""
    files = SessionFiles(tmp_path, tmp_path)
    path = files.file(hook_memory.MEMORY_FILE)
    with hook_memory.remembered(files) as memory:
        first, second = memory.pair_call("k"), memory.pair_call("k")
        memory.see("toolu_1")
    with hook_memory.remembered(files) as memory:
        assert memory.pair_result("k") == first
    size = path.stat().st_size
    with hook_memory.remembered(files) as memory:
        assert memory.saw("toolu_1") and not memory.saw("toolu_2")
    assert path.stat().st_size == size
    hook_memory._kept.clear()  # another process: the file alone
    with hook_memory.remembered(files) as memory:
        assert memory.waiting == {"k": [second]} and memory.seen == ["toolu_1"]
    assert (peeked := hook_memory.peek(files)) is not None and peeked.saw("toolu_1")
    assert hook_memory.peek(SessionFiles(tmp_path, tmp_path / "none")) is None


def test_the_transcript_reader(tmp_path: Path) -> None:
    chat = tmp_path / "session.jsonl"
    lines = [{"type": "user", "content": [{"text": "fix"}]},
             {"type": "gemini", "content": "Looking."},
             {"type": "gemini", "content": ""},
             {"$set": {"lastUpdated": "x"}},
             {"type": "gemini", "id": "a1", "content": "", "model": "gemini-2.5-pro",
              "tokens": {"input": 1500, "output": 100, "cached": 500, "thoughts": 20,
                         "tool": 5, "total": 1625}}]
    chat.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert read_transcript(str(chat), 0) == (["Looking.", {
        "key": "a1", "model": "gemini-2.5-pro", "unknown": [],
        "counts": {"input_tokens": 1005, "cache_read_tokens": 500, "output_tokens": 120}}],
        chat.stat().st_size)


def test_answers_in_gemini_shape() -> None:
    assert before_tool_output("block", "stop repeating") == {
        "decision": "deny", "reason": "Agent Supervisor: stop repeating"}
    stop = before_tool_output("stop", "operator aborted")
    assert stop is not None and stop["decision"] == "deny" and stop["continue"] is False
    assert before_tool_output("allow", None) is None
    assert before_tool_output("nudge", "careful") is None  # given with the result instead
    assert TARGET.context_before_call is False
    assert context_output("AfterTool", "hint") == {
        "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "hint"}}
    assert context_output("BeforeTool", "hint") is None


def test_a_hint_on_a_tools_own_failure_replaces_the_error_the_model_reads() -> None:
    """Gemini drops added context from a result carrying the tool's error (measured with the
    real binary: tests/agent_cli/test_gemini_edit_guidance.py); a shell command's failure is
    an ordinary result, where added context is shown."""
    answers = TARGET.answers
    failed = json.loads(answers.context("AfterTool", "where the text is",
                                        failure="Could not find an exact match"))
    assert failed == {"decision": "deny", "reason": "Could not find an exact match\n\n"
                                                    "Agent Supervisor: where the text is"}
    shell = json.loads(answers.context("AfterTool", "a nudge", failure="Exit code 2\nls: x"))
    assert shell["hookSpecificOutput"]["additionalContext"] == "a nudge"
    assert answers.context("AfterTool", None, failure="Could not find") == ""


@pytest.mark.parametrize(("tool", "args", "category"), [
    ("read_file", {"file_path": "a.py"}, "read"),
    ("read_many_files", {"paths": ["a.py"]}, "read"),
    ("list_directory", {"dir_path": "."}, "read"),
    ("glob", {"pattern": "*.py"}, "read"),
    ("grep_search", {"pattern": "def add"}, "read"),
    ("web_fetch", {"prompt": "x"}, "read"),
    ("google_web_search", {"query": "x"}, "read"),
    ("replace", {"file_path": "a.py"}, "mutate"),
    ("write_file", {"file_path": "a.py", "content": "x"}, "mutate"),
    ("run_shell_command", {"command": "python -m pytest"}, "run"),
    ("run_shell_command", {"command": "cat a.py"}, "read"),
    ("read_background_output", {"pid": 1}, "poll"),
    ("list_background_processes", {}, "poll"),
    ("invoke_agent", {"prompt": "x"}, "run"),
    ("write_todos", {"todos": []}, "other"),
    ("save_memory", {"fact": "x"}, "other"),
    ("enter_plan_mode", {}, "other"),
])
def test_gemini_tool_category(tool: str, args: dict, category: str) -> None:
    assert classify(tool, args, Policy.profile("default")) == category


@pytest.mark.slow
def test_install_writes_milliseconds_and_uninstall_restores(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    mine = '{\n  "theme": "dark",\n  "security": {"auth": {"selectedType": "gemini-api-key"}}\n}\n'
    settings.write_text(mine)
    env = {"HOME": str(tmp_path), "GEMINI_CLI_HOME": ""}
    done = run_cli("install", "gemini", "--project", str(project), "--timeout", "120", **env)
    assert done.returncode == 0, done.stderr
    assert "trusted folder" in done.stdout
    data = json.loads(settings.read_text())
    assert data["theme"] == "dark"
    ours = {event: groups[-1]["hooks"][0] for event, groups in data["hooks"].items()}
    assert set(ours) == {e for e, _ in TARGET.settings.events}
    assert ours["BeforeTool"]["timeout"] == 120_000 and ours["AfterTool"]["timeout"] == 60_000
    assert data["hooks"]["BeforeTool"][-1]["matcher"] == "*"
    assert " gemini --timeout 120" in ours["BeforeTool"]["command"]
    undone = run_cli("uninstall", "gemini", "--project", str(project), **env)
    assert undone.returncode == 0, undone.stderr
    assert settings.read_text() == mine


def test_a_note_on_a_call_that_runs_comes_with_its_result(tmp_path: Path) -> None:
    """Gemini ignores context at BeforeTool: an operator's approval note (a verdict that runs
    with a message) is held back and given with the call's AfterTool, once."""
    import dataclasses
    from types import SimpleNamespace

    from supervisor.guard.core import Verdict
    from supervisor.hooks.budget import Budget
    from supervisor.hooks.runtime import _Call

    step = map_payload(captured("BeforeTool")[0])
    guard = SimpleNamespace(files=SessionFiles(tmp_path, tmp_path))
    call = _Call(TARGET, guard, step, tmp_path, Budget(60))
    with hook_memory.remembered(SessionFiles(tmp_path, tmp_path)) as memory:
        call.pair(memory)
    assert step.call is not None and not step.call["call_id"].endswith("-1")  # a value
    step = call.step
    assert step.call is not None and step.call["call_id"].endswith("-1")
    fields = {f.name: None for f in dataclasses.fields(Verdict)}
    verdict = Verdict(**{**fields, "action": "allow", "message": "The operator approved.",
                         "level": 0, "reason": ""})
    told = call.decided(verdict)
    assert told.message is None and TARGET.answers.pre_tool(told) == ""
    assert call.held_note(step.call["call_id"]) == "The operator approved."
    assert call.held_note(step.call["call_id"]) is None
