"""The captured payloads in tests/data/{codex,gemini}/ are what the pinned CLIs send today.

Each test runs the capture session (`tests.agent_cli.capture`) against the real binary and its
fake model server, and compares with the fixture: the same events, each with the same fields,
and the facts the targets are built on (what says a call failed, what pairs a call with its
result). It also proves the harness: the model received every tool output.
"""

import json
from collections import Counter
from pathlib import Path

from tests.agent_cli import capture
from tests.agent_cli.sandbox import Sandbox


def shape(payloads: list[capture.Captured]) -> dict[str, set[str]]:
    """Per event, the union of the payloads' field names (and tool_response's, when a dict)."""
    found: dict[str, set[str]] = {}
    for c in payloads:
        keys = found.setdefault(c.event, set())
        keys.update(c.payload)
        response = c.payload.get("tool_response")
        if isinstance(response, dict):
            keys.update(f"tool_response.{k}" for k in response)
        elif "tool_response" in c.payload:
            keys.add(f"tool_response:{type(response).__name__}")
    return found


def assert_matches_fixture(agent: str, captured: list[capture.Captured]) -> None:
    fixture = capture.load_fixture(agent)
    assert fixture, f"no fixture for {agent}: python -m tests.agent_cli.capture {agent} --write"
    assert Counter(c.event for c in captured) == Counter(c.event for c in fixture)
    assert shape(captured) == shape(fixture), (
        f"{agent}'s payloads changed shape: refresh the fixture with "
        f"python -m tests.agent_cli.capture {agent} --write and check the target"
    )


def test_codex_payloads_match_the_fixture(codex_executable: Path, sandbox: Sandbox) -> None:
    result = capture.capture_codex(codex_executable, sandbox)
    assert_matches_fixture("codex", result.payloads)

    # the model got every output, with the exit codes...
    assert len(result.outputs) == 5
    assert "Process exited with code 1" in result.outputs[1]
    assert "Process exited with code 3" in result.outputs[2]
    # ...which the hooks do not get: PostToolUse has the bare output, no code, no flag
    posts = {c.payload["tool_input"]["command"]: c.payload
             for c in result.payloads if c.event == "PostToolUse"}
    assert posts["exit 3"]["tool_response"] == ""
    assert "AssertionError" in posts[capture.CHECK]["tool_response"]
    # the transcript has them when PostToolUse runs (the rollout's CommandExecution items)
    codes = {}
    for line in result.transcript.splitlines():
        item = json.loads(line).get("payload", {}).get("item", {})
        if item.get("type") == "CommandExecution":
            codes[item["id"]] = item.get("exit_code")
    assert codes[posts["exit 3"]["tool_use_id"]] == 3
    assert codes[posts[capture.CHECK]["tool_use_id"]] == 1
    assert codes[posts["cat foo.py"]["tool_use_id"]] == 0
    # the shell tool is Bash with `command`, whatever the model called it (exec_command, `cmd`)
    assert {c.payload["tool_name"] for c in result.payloads if "tool_name" in c.payload} == {"Bash"}


def test_gemini_payloads_match_the_fixture(gemini_executable: Path, sandbox: Sandbox) -> None:
    result = capture.capture_gemini(gemini_executable, sandbox)
    assert_matches_fixture("gemini", result.payloads)

    assert len(result.outputs) == 8  # 7 turns, the last with two parallel calls
    assert "Exit Code: 3" in result.outputs[4]
    tools = [c.payload for c in result.payloads if c.event in ("BeforeTool", "AfterTool")]
    # no call id: Before and After pair only by order (and tool and input)
    assert not any("tool_use_id" in p for p in tools)
    after = [p for p in tools if p["hook_event_name"] == "AfterTool"]
    by_input = {(p["tool_name"], json.dumps(p["tool_input"], sort_keys=True)): p["tool_response"]
                for p in after}

    def response(tool: str, **tool_input: str) -> dict:
        return by_input[(tool, json.dumps(tool_input, sort_keys=True))]

    # what says a call failed: `error` for a tool's own failure, the exit code in the text
    missed = response("replace", file_path="foo.py", old_string="return a * b",
                      new_string="return a + b", instruction="fix add")
    assert missed["error"]["type"] == "edit_no_occurrence_found"
    assert response("read_file", file_path="missing.py")["error"]["type"] == "file_not_found"
    failed = response("run_shell_command", command="exit 3", description="fail")
    assert "error" not in failed and "Exit Code: 3" in failed["llmContent"]
    assert failed["returnDisplay"] == "Command exited with code: 3"
    passed = response("run_shell_command", command=capture.CHECK, description="check add")
    assert "error" not in passed and "Exit Code" not in passed["llmContent"]
