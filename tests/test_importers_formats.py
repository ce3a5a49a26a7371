"""Each format maps faithfully: tools, arguments, ok/error, thoughts, usage, start and end."""

import json
from pathlib import Path

import pytest
import xxhash

from supervisor.engine import Policy
from supervisor.engine.facts import facts_of
from supervisor.importers import FORMATS, FormatError, detect_format, load_runs
from supervisor.importers.swe_agent import parse_action
from tests.importer_helpers import DATA, check_protocol, fixture, of_type, steps

ALL_FIXTURES = sorted(p for p in DATA.rglob("*") if p.is_file() and p.suffix != ".md")
EXPECTED_FORMAT = {
    "swe-agent": "swe-agent", "mini-swe-agent": "mini-swe-agent", "openhands": "openhands",
    "claude-code": "claude-code", "codex": "codex", "gemini-cli": "gemini-cli",
    "copilot-cli": "copilot-cli", "opencode": "opencode", "pi": "pi",
}


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_is_detected_by_content_and_valid(path: Path, tmp_path: Path) -> None:
    expected = EXPECTED_FORMAT[path.parent.name]
    assert detect_format(path) == expected
    renamed = tmp_path / "run.data"  # the name says nothing: detection reads the content
    renamed.write_bytes(path.read_bytes())
    assert detect_format(renamed) == expected
    runs = load_runs(path)
    assert runs and all(r.format == expected and r.source == path for r in runs)
    for run in runs:
        check_protocol(run)
        assert run.events[0]["agent"] == expected
        assert run.events[0]["imported"]["format"] == expected
    assert set(EXPECTED_FORMAT) == set(FORMATS)


def test_swe_agent_text_commands_and_known_error_texts() -> None:
    (run,) = load_runs(fixture("swe-agent/pydicom-1458-edit-retries.traj"))
    pairs = steps(run)
    assert [c["tool"] for c, _ in pairs] == ["open", "edit", "edit", "edit", "edit", "submit"]
    open_call = pairs[0][0]
    assert open_call["args"] == {"path": "pydicom/pixel_data_handlers/numpy_handler.py",
                                 "line_number": 293}
    edit = pairs[1][0]["args"]
    assert (edit["start_line"], edit["end_line"]) == (287, 295)
    assert edit["path"] == "/pydicom__pydicom/pydicom/pixel_data_handlers/numpy_handler.py"
    assert "end_of_edit" not in edit["replacement_text"]
    assert [r["ok"] for _, r in pairs] == [True, False, False, False, True, True]
    assert {r["error"] for _, r in pairs[1:4]} == {"edit: syntax errors"}
    start = run.events[0]
    assert start["task"] == (
        "Pixel Representation attribute should be optional for pixel data handler")
    assert start["cwd"] == "/pydicom__pydicom"
    (usage,) = of_type(run, "usage")
    assert usage == {**usage, "input_tokens": 122612, "output_tokens": 1369, "cost_usd": 1.26719}
    assert run.events[-1]["type"] == "session_end"
    assert (run.events[-1]["status"], run.events[-1]["reason"]) == ("completed", "submitted")
    assert run.meta["ts"] == "synthetic" and run.meta["exit_status"] == "submitted"
    thoughts = [e["text"] for e in of_type(run, "message")]
    assert len(thoughts) == 6 and all(e["role"] == "assistant" for e in of_type(run, "message"))


def test_swe_agent_function_calling_uses_recorded_tool_calls() -> None:
    (run,) = load_runs(fixture("swe-agent/marshmallow-1867-function-calling.traj"))
    pairs = steps(run)
    assert [(c["tool"], c["args"]) for c, _ in pairs[:3]] == [
        ("create", {"filename": "reproduce.py"}),
        ("edit", pairs[1][0]["args"]),
        ("bash", {"command": "python reproduce.py"}),
    ]
    assert "replacement_text" in pairs[1][0]["args"]
    assert pairs[0][1]["duration_ms"] == pytest.approx(239.637, abs=0.01)
    assert pairs[3][1]["ok"] is False and pairs[3][1]["error"] == "edit: syntax errors"
    assert run.meta["model"] == "gpt-4o" and run.meta["function_calling"] is True
    assert run.events[0]["task"] == "TimeDelta serialization precision"
    assert of_type(run, "usage") == []  # model_stats are all zero: nothing recorded


def test_swe_agent_no_file_open_errors() -> None:
    (run,) = load_runs(fixture("swe-agent/portalocker-no-file-open.traj"))
    results = [r for _, r in steps(run)]
    assert [(r["ok"], r["error"]) for r in results] == [
        (False, "no file open"), (False, "no file open"), (True, None)]
    assert "path" not in steps(run)[0][0]["args"]  # state says no file is open ("n/a")


@pytest.mark.parametrize(("action", "expected"), [
    ("ls -la\n", ("bash", {"command": "ls -la"})),
    ("python reproduce.py", ("bash", {"command": "python reproduce.py"})),
    ('find_file "numpy_handler.py"\n', ("find_file", {"file_name": "numpy_handler.py"})),
    ("search_dir TimeDelta src", ("search_dir", {"search_term": "TimeDelta", "dir": "src"})),
    ("create printenv.pl\n", ("create", {"filename": "printenv.pl"})),
    ("goto 120", ("goto", {"line_number": 120})),
    ("scroll_down", ("scroll_down", {})),
    ("submit\n", ("submit", {})),
    ("str_replace_editor view /testbed/a.py --view_range 1 20",
     ("str_replace_editor", {"command": "view", "path": "/testbed/a.py", "view_range": "1 20"})),
    ("cat <<'EOF' > x.py\nprint(1)\nEOF\n",
     ("bash", {"command": "cat <<'EOF' > x.py\nprint(1)\nEOF"})),
    ("edit 3:4\n    pass\nend_of_edit\n",
     ("edit", {"start_line": 3, "end_line": 4, "replacement_text": "    pass", "path": "/r/a.py"})),
])
def test_swe_agent_action_parsing(action: str, expected: tuple) -> None:
    assert parse_action(action, {"open_file": "/r/a.py"}) == expected


def test_mini_bare_list_and_v1_object_share_the_chat() -> None:
    (bare,) = load_runs(fixture("mini-swe-agent/bare-list.traj.json"))
    (obj,) = load_runs(fixture("mini-swe-agent/v1-object.traj.json"))
    assert [c["args"] for c, _ in steps(bare)] == [c["args"] for c, _ in steps(obj)]
    first, result = steps(bare)[0]
    assert first["tool"] == "bash" and first["args"]["command"].startswith("cat ")
    assert (result["ok"], result["error"], result["returncode"]) == (False, "exit code 1", 1)
    assert "No such file or directory" in result["output"]
    assert "<returncode>" not in result["output"]
    submit, out = steps(bare)[-1]
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in submit["args"]["command"]
    assert out["ok"] is True and out["output"].startswith("diff --git")
    assert bare.events[0]["task"] == "GitHub Issue: SyntaxError: invalid syntax"
    assert not of_type(bare, "session_end")  # the bare list records no exit status
    assert bare.meta["variant"] == "bare-list"
    end = obj.events[-1]
    assert (end["type"], end["status"], end["reason"]) == ("session_end", "terminated",
                                                            "LimitsExceeded")
    (usage,) = of_type(obj, "usage")
    assert (usage["cost_usd"], usage["input_tokens"]) == (0.0421, 0)
    assert obj.name == "swe-agent__test-repo-i1"
    thought = of_type(bare, "message")[2]
    assert thought["role"] == "assistant" and "```" not in thought["text"]


def test_mini_v11_tool_calls_timeouts_usage_and_exit() -> None:
    (run,) = load_runs(fixture("mini-swe-agent/v1.1-toolcall-timeouts.traj.json"))
    pairs = steps(run)
    assert all(c["tool"] == "bash" and set(c["args"]) == {"command"} for c, _ in pairs)
    assert pairs[0][0]["call_id"] == "call_00_y9C6ME0T2HnDJcwbBHT5PTzk"
    assert [r["ok"] for _, r in pairs] == [True, False, False]
    assert all(r["returncode"] == -1 and "timed out" in r["error"] for _, r in pairs[1:])
    usages = of_type(run, "usage")
    assert len(usages) == 3 and usages[0]["input_tokens"] == 1528
    assert usages[0]["output_tokens"] == 86 and usages[0]["cost_usd"] == pytest.approx(9.3016e-05)
    assert run.meta["ts"] == "recorded"
    assert pairs[0][1]["ts"] == pytest.approx(1776075333.0, abs=5)
    end = run.events[-1]
    assert end["status"] == "failed" and end["reason"].startswith("litellm.InternalServerError")
    assert run.events[0]["task"].startswith("regression: iam.physical returns nan")
    assert run.meta["model"] == "deepseek-reasoner"
    assert of_type(run, "message")[2]["text"].startswith("I'll start by exploring")


def test_mini_run_without_steps() -> None:
    (run,) = load_runs(fixture("mini-swe-agent/v1.1-model-timeout-no-steps.traj.json"))
    assert run.steps == 0
    assert [e["type"] for e in run.events] == ["session_start", "message", "message",
                                               "session_end"]
    assert run.events[-1]["status"] == "failed"


def test_openhands_event_stream() -> None:
    (run,) = load_runs(fixture("openhands/event-stream-vue-todo.json"))
    pairs = steps(run)
    assert [c["tool"] for c, _ in pairs] == ["run", "edit", "edit", "run"]
    assert pairs[0][0]["args"] == {"command": "mkdir -p /workspace/todo-app", "is_input": False}
    assert pairs[1][0]["args"]["path"] == "/workspace/todo-app/index.html"
    assert [c["call_id"] for c, _ in pairs] == ["7", "9", "11", "13"]
    assert (pairs[0][1]["ok"], pairs[0][1]["exit_code"]) == (True, 0)
    assert (pairs[3][1]["ok"], pairs[3][1]["exit_code"]) == (False, -1)
    assert pairs[3][1]["error"] == "command did not finish (exit code -1)"
    assert run.meta["ts"] == "recorded" and run.meta["agent_state"] == "awaiting_user_input"
    assert pairs[0][1]["ts"] == pytest.approx(1737404975.699033)
    assert run.events[0]["task"] == "I want to create a VueJS app that allows me to:"
    assert run.events[0]["cwd"] == "/workspace"
    assert len(of_type(run, "usage")) == 4
    assert not of_type(run, "session_end")  # waiting for the user is not an end
    user, *rest = of_type(run, "message")
    assert user["role"] == "user" and rest[-1]["role"] == "assistant"


def test_openhands_resolver_flat_history() -> None:
    (run,) = load_runs(fixture("openhands/resolver-output-history.jsonl"))
    pairs = steps(run)
    assert [c["tool"] for c, _ in pairs] == ["run_ipython"] * 3 + ["finish"]
    assert set(pairs[0][0]["args"]) == {"code"}
    assert [r and r["ok"] for _, r in pairs[:3]] == [False, False, False]
    assert pairs[3][1] is None  # finish has no observation
    assert run.name == "neubig-pr-viewer-1"
    assert run.events[0]["task"] == "Add a toggle for dark mode"
    record = json.loads(fixture("openhands/resolver-output-history.jsonl").read_text())
    costs = record["metrics"]["costs"]  # one per LLM call = one per agent action here
    usages = of_type(run, "usage")
    assert [u["cost_usd"] for u in usages] == costs
    assert [run.events.index(u) + 1 < run.events.index(c) for u, (c, _) in
            zip(usages, pairs, strict=True)] == [True] * 4  # each cost before its action
    assert run.events[-1]["status"] == "completed"


def test_openhands_total_cost_only_when_costs_do_not_match_actions(tmp_path: Path) -> None:
    record = json.loads(fixture("openhands/resolver-output-history.jsonl").read_text())
    record["metrics"]["costs"] = record["metrics"]["costs"][:2]
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(record) + "\n")
    (run,) = load_runs(path)
    (usage,) = of_type(run, "usage")
    assert usage["cost_usd"] == pytest.approx(1.152933) and usage["input_tokens"] == 0


def test_openhands_legacy_pairs_one_run_per_line() -> None:
    runs = load_runs(fixture("openhands/legacy-v1.5-output-pairs.jsonl"))
    assert [r.name for r in runs] == ["ProntoQA_1", "ProntoQA_2"]
    run = runs[0]
    assert [c["tool"] for c, _ in steps(run)] == ["run_ipython", "run_ipython", "finish"]
    assert steps(run)[0][0]["args"]["code"] == "%pip install scitools-pyke"
    assert run.meta["model"] == "gpt-4o-2024-05-13"
    assert run.meta["test_result"] == {"result": False}
    roles = [m["role"] for m in of_type(run, "message")]
    assert roles[0] == "user" and "assistant" in roles


def test_openhands_completion_log_last_action_from_response() -> None:
    (run,) = load_runs(fixture("openhands/completion-fncall-claude-1737000125.25.json"))
    pairs = steps(run)
    assert [c["tool"] for c, _ in pairs] == ["execute_bash", "str_replace_editor",
                                             "execute_bash", "str_replace_editor"]
    assert pairs[1][0]["args"] == {"command": "view", "path": "/workspace/calc/calcs.py"}
    assert [(r["ok"], r["error"]) if r else None for _, r in pairs] == [
        (True, None), (False, "tool error"), (False, "exit code 1"), None]
    assert pairs[3][0]["call_id"] == "toolu_04"  # only in fncall_response
    assert pairs[3][0]["ts"] == 1737000125.25
    (usage,) = of_type(run, "usage")
    assert (usage["input_tokens"], usage["output_tokens"], usage["cost_usd"]) == (5120, 96, 0.0168)
    assert run.events[0]["task"] == "divide() crashes on zero"
    assert run.meta["fncall"] is True and run.meta["pending_calls"] == 1


def test_openhands_native_completion_log(tmp_path: Path) -> None:
    """Native function calling logs hold the tool-calling history in `messages`/`response`."""
    log = json.loads(fixture("openhands/completion-fncall-claude-1737000125.25.json").read_text())
    log["messages"], log["response"] = log.pop("fncall_messages"), log.pop("fncall_response")
    path = tmp_path / "native.json"
    path.write_text(json.dumps(log))
    assert detect_format(path) == "openhands"
    (run,) = load_runs(path)
    assert run.steps == 4 and run.meta["fncall"] is False


def test_claude_code_transcript() -> None:
    (run,) = load_runs(fixture("claude-code/7f2abd2d-session.jsonl"))
    pairs = steps(run)
    assert [c["tool"] for c, _ in pairs] == ["Bash", "Write", "Bash", "Bash"]
    assert pairs[1][0]["args"]["file_path"] == "/Users/test_user/agent-sample/myapp/hoge.py"
    assert [r["ok"] for _, r in pairs] == [True, True, False, True]
    assert pairs[2][1]["error"] == "error: target shim binary not found"
    assert pairs[0][0]["call_id"].startswith("toolu_")
    assert run.name == "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"
    assert run.meta["skipped"] == {"file-history-snapshot": 4, "summary": 1, "queue-operation": 1}
    assert run.meta["ts"] == "recorded"
    usage_ids = of_type(run, "usage")
    assert len(usage_ids) == 6  # one per assistant message, though its lines repeat it
    assert all(u["cost_usd"] is None for u in usage_ids)
    assert any(m.get("thinking") for m in of_type(run, "message"))
    assert run.events[0]["task"].startswith("add myapp directory")
    assert run.events[0]["cwd"] == "/Users/test_user/agent-sample"
    assert not of_type(run, "session_end")


def test_codex_and_gemini_record_exit_codes() -> None:
    (codex,) = load_runs(fixture("codex/rollout-myapp-hoge.jsonl"))
    assert [c["tool"] for c, _ in steps(codex)] == ["shell_command", "apply_patch",
                                                     "shell_command", "shell_command",
                                                     "shell_command"]
    assert [r["exit_code"] for _, r in steps(codex)] == [0, 0, 1, 1, 0]
    (gemini,) = load_runs(fixture("gemini-cli/session-myapp-hoge.json"))
    assert [r["ok"] for _, r in steps(gemini)] == [True, True, True, False, True]
    assert steps(gemini)[1][0]["args"]["file_path"] == "myapp/hoge.py"


def test_output_is_truncated_but_size_and_hash_cover_the_whole(tmp_path: Path) -> None:
    big = "x" * 200_000 + "é"
    doc = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"},
           {"role": "assistant", "content": "THOUGHT\n```bash\nyes | head\n```"},
           {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{big}\n</output>"}]
    path = tmp_path / "big.traj.json"
    path.write_text(json.dumps(doc))
    (run,) = load_runs(path)
    (result,) = of_type(run, "tool_result")
    data = big.encode()
    assert result["output_bytes"] == len(data)
    assert result["output_hash"] == xxhash.xxh3_64_hexdigest(data)
    assert len(result["output"].encode()) == 64 * 1024 and result["output_truncated"] is True
    check_protocol(run)


def test_huge_arguments_are_cut_to_fit_one_protocol_line(tmp_path: Path) -> None:
    content = "y" * 3_000_000
    line = {"type": "assistant", "sessionId": "s1", "uuid": "u1",
            "timestamp": "2025-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "Write",
                 "input": {"file_path": "/a", "content": content}}]}}
    path = tmp_path / "s1.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (run,) = load_runs(path)
    (call,) = of_type(run, "tool_call")
    assert call["truncated"] is True and call["args"]["file_path"] == "/a"
    assert 0 < len(call["args"]["content"]) < len(content)
    check_protocol(run)


def test_reused_native_call_ids_stay_unique(tmp_path: Path) -> None:
    def turn(command: str) -> list[dict]:
        call = {"id": "call_1", "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": command})}}
        return [{"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_1",
                 "content": "<returncode>0</returncode>\n<output>\nok\n</output>"}]
    doc = {"trajectory_format": "mini-swe-agent-1.1", "info": {"exit_status": "Submitted"},
           "messages": [{"role": "user", "content": "t"}, *turn("ls"), *turn("pwd")]}
    path = tmp_path / "reuse.traj.json"
    path.write_text(json.dumps(doc))
    (run,) = load_runs(path)
    ids = [c["call_id"] for c, r in steps(run) if r is not None]
    assert len(ids) == 2 and len(set(ids)) == 2
    check_protocol(run)


def test_openhands_event_directory_equals_the_event_stream(tmp_path: Path) -> None:
    """OpenHands stores a session as `sessions/<id>/events/<n>.json`, one event per file."""
    source = fixture("openhands/event-stream-vue-todo.json")
    events_dir = tmp_path / "sessions" / "abc123" / "events"
    events_dir.mkdir(parents=True)
    for event in json.loads(source.read_text()):
        (events_dir / f"{event['id']}.json").write_text(json.dumps(event))
    assert detect_format(events_dir) == "openhands"
    assert detect_format(tmp_path) is None
    (stream,) = load_runs(source)
    (stored,) = load_runs(events_dir)
    assert stored.name == "abc123" and stored.meta["event_files"] == 18
    strip = [{k: v for k, v in e.items() if k != "imported"} for e in stored.events]
    assert strip == [{k: v for k, v in e.items() if k != "imported"} for e in stream.events]
    (events_dir / "18.json").write_text("{broken")
    with pytest.raises(FormatError, match=r"18\.json: not a JSON event"):
        load_runs(events_dir)


def test_mini_framework_feedback_is_a_system_message(tmp_path: Path) -> None:
    """mini-swe-agent writes format errors as `user` turns; they are not a person speaking (the
    engine would start a new conversation cycle and forget the loop)."""
    chat = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Fix the bug in calc.py"},
        {"role": "assistant", "content": "THOUGHT: no command here"},
        {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks"},
        {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\ncalc.py\n</output>"},
    ]
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps(chat))
    (run,) = load_runs(path, "mini-swe-agent")
    messages = [(m["role"], m["text"][:20]) for m in of_type(run, "message")]
    assert ("user", "Fix the bug in calc.") in messages
    assert ("system", "Please always provid") in messages
    assert not any(r == "user" and t.startswith("Please") for r, t in messages)
    assert of_type(run, "tool_result")[0]["ok"] is True


def test_copilot_cli_session_events() -> None:
    """Made by the real Copilot CLI against the scripted model (tests/agent_cli)."""
    (run,) = load_runs(fixture("copilot-cli/events.jsonl"))
    pairs = steps(run)
    assert [c["tool"] for c, _ in pairs] == ["bash", "bash", "view", "edit", "bash"]
    assert [r["ok"] for _, r in pairs] == [False, False, True, True, True]
    assert [r["exit_code"] for _, r in pairs] == [2, 2, None, None, 0]
    assert pairs[0][1]["error"] == "exit code 2"
    # Copilot numbers its shells: the counter is dropped, so a repeat's outcome is identical
    assert pairs[0][1]["output"] == pairs[1][1]["output"]
    assert pairs[0][1]["output"].endswith("<shellId: completed with exit code 2>")
    assert pairs[3][0]["args"]["old_str"] == "return a - b"
    assert pairs[0][0]["call_id"].startswith("call_")
    assert run.events[0]["task"] == "fix foo.py"
    assert run.events[0]["cwd"] == "/home/dev/sandbox/work"
    assert [m["role"] for m in of_type(run, "message")] == ["user", "assistant", "assistant"]
    assert len(of_type(run, "usage")) == 6
    assert of_type(run, "session_end")[0]["status"] == "completed"
    assert run.meta["ts"] == "recorded"


def test_opencode_session_export() -> None:
    """Made by the real OpenCode (`opencode export`) against the scripted model."""
    (run,) = load_runs(fixture("opencode/session-export.json"))
    pairs = steps(run)
    assert [c["tool"] for c, _ in pairs] == ["bash", "bash", "read", "edit", "bash"]
    assert [r["ok"] for _, r in pairs] == [False, False, True, True, True]
    assert [r["exit_code"] for _, r in pairs] == [2, 2, None, None, 0]
    # OpenCode's camelCase arguments under the engine's names, as the live hook records them
    assert pairs[3][0]["args"] == {"file_path": "/home/dev/sandbox/work/foo.py",
                                   "old_string": "return a - b",
                                   "new_string": "return a + b"}
    assert all(r["duration_ms"] and r["duration_ms"] > 0 for _, r in pairs)
    assert run.events[0]["cwd"] == "/home/dev/sandbox/work"
    assert run.name == "ses_ddff680b6ffeKlETS4Ih7GTq2p"
    assert len(of_type(run, "usage")) == 6
    assert not of_type(run, "session_end")


def test_pi_session_file_calls_failures_prompts_and_usage() -> None:
    """Cut from a real Oh My Pi session (preloopdev/preloop): a header after a `title` line,
    a prompt, calls batched per response, calls skipped for a queued prompt (`isError`,
    synthetic: not run), a second prompt, an `edit` failing; `custom` and `model_change`
    entries carry no step."""
    (run,) = load_runs(fixture("pi/ohmypi-preloop-5e3cc5e9.jsonl"))
    pairs = steps(run)
    assert [c["tool"] for c, _ in pairs] == ["bash", "web_search", "bash", "grep", "edit"]
    # the three calls skipped because the person typed never ran: refused, no result
    assert [r and r["ok"] for _, r in pairs] == [True, None, None, None, False]
    assert [c.get("refused_by") for c, _ in pairs] == [None, "user", "user", "user", None]
    assert pairs[4][1]["error"] == "File not found: /Users/bnjoroge/preloop/utils/github.ts"
    assert len({c["batch"] for c, _ in pairs[1:4]}) == 1 != len({c["batch"] for c, _ in pairs})
    assert [m["text"] for m in of_type(run, "message") if m["role"] == "user"] == [
        of_type(run, "message")[0]["text"], "github app"]
    assert run.events[0]["task"].startswith("now that we’ve set up")
    assert run.events[0]["cwd"] == "/Users/bnjoroge/preloop"
    assert run.name == "01a025c5-21b8-7000-b3f3-437e2c17a372"
    usage = of_type(run, "usage")
    assert len(usage) == 3
    # Pi's `input` leaves out what was read from the cache: taken as the protocol's input
    assert (usage[0]["input_tokens"], usage[0]["cache_read_tokens"]) == (20294, 497)
    assert run.meta["skipped"] == {"title": 1, "model_change": 1, "thinking_level_change": 1,
                                   "custom": 1}
    assert run.meta["pending_calls"] == 0
    assert not of_type(run, "session_end")


def test_pi_failed_command_and_edit_are_worded_as_the_live_hook_words_them(
        tmp_path: Path) -> None:
    """The importer and the live hook (hooks/pi) share `protocol/pi_calls`: a command's exit
    status (Pi ends its output with `Command exited with code N`) is the result's error, and
    an `edit`'s `oldText`/`newText` are read under the engine's names."""
    from supervisor.hooks.pi.payload import map_payload

    (run,) = load_runs(fixture("pi/ohmypi-preloop-dbb9327f.jsonl"))
    ((call, result),) = steps(run)
    assert call["tool"] == "bash" and call["args"]["command"].startswith("git -C ")
    assert (result["ok"], result["error"]) == (False, "Exit code 1")
    live = map_payload({"session_id": "s", "hook_event_name": "tool_result",
                        "tool_name": "bash", "call_id": "c", "is_error": True,
                        "tool_output": result["output"]})
    assert live.result is not None and live.result["error"].split("\n")[0] == result["error"]

    edit = {"type": "message", "message": {"role": "assistant", "content": [
        {"type": "toolCall", "id": "e1", "name": "edit",
         "arguments": {"path": "/w/a.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]}}]}}
    header = {"type": "session", "version": 3, "id": "s1", "cwd": "/w"}
    path = tmp_path / "pi-edit.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (header, edit)) + "\n")
    ((imported, _),) = steps(load_runs(path)[0])
    hooked = map_payload({"session_id": "s", "hook_event_name": "tool_call", "tool_name": "edit",
                          "call_id": "e1", "tool_input": edit["message"]["content"][0][
                              "arguments"]})
    assert imported["args"] == hooked.call["args"] == {
        "path": "/w/a.py", "old_string": "a - b", "new_string": "a + b"}


def _pi_session(tmp_path: Path, responses: list[tuple[list[dict], list[dict]]]) -> Path:
    """A Pi session file: each response's `toolCall` blocks, then (after an extension's
    `custom` entry, as Oh My Pi writes them) its `toolResult`s."""
    lines: list[dict] = [{"type": "session", "version": 3, "id": "s1", "cwd": "/w"},
                         {"type": "message", "message": {"role": "user", "content": "fix it"}}]
    for n, (calls, results) in enumerate(responses):
        lines.append({"type": "message", "message": {
            "role": "assistant", "responseId": f"r{n}",
            "content": [{"type": "toolCall", **c} for c in calls]}})
        lines.append({"type": "custom", "customType": "state", "data": {}})
        lines += [{"type": "message", "message": {"role": "toolResult", **r}} for r in results]
    path = tmp_path / "pi.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    return path


def test_a_branched_pi_session_is_read_as_the_branch_it_ended_on(tmp_path: Path) -> None:
    """A person who goes back with `/tree` and goes on from an earlier entry leaves the
    abandoned branch in the file, and the new one after it, hanging from the point they went
    back to (the shape of a real Pi 0.7x session, mholtzscher/pi-herdr-subagents, no licence,
    so its structure only: an extension's `custom` entry opens the new branch). The model on
    the new branch never saw the other one: the run is the branch the session ended on, the
    other branch's entries counted, not read as if they came before."""
    def entry(n: int, parent: int | None, message: dict | None = None, **extra: object) -> dict:
        return {"type": "message" if message else "custom", "id": f"e{n}",
                "parentId": f"e{parent}" if parent else None,
                **({"message": message} if message else {}), **extra}

    def call(n: int, command: str) -> dict:
        return {"role": "assistant", "content": [
            {"type": "toolCall", "id": f"c{n}", "name": "bash", "arguments": {"command": command}}]}

    def result(n: int) -> dict:
        return {"role": "toolResult", "toolCallId": f"c{n}", "toolName": "bash",
                "isError": False, "content": [{"type": "text", "text": "ok"}]}

    lines = [{"type": "session", "version": 3, "id": "s1", "cwd": "/w"},
             entry(1, None, {"role": "user", "content": "add the flag"}),
             entry(2, 1, call(1, "make test")), entry(3, 2, result(1)),
             entry(4, 3, {"role": "assistant", "content": "Done."}),
             entry(5, 4, {"role": "user", "content": "now release it"}),  # abandoned
             entry(6, 5, call(2, "make release")), entry(7, 6, result(2)),
             entry(8, 4, customType="plannotator", data={}),  # back to e4, another way
             entry(9, 8, {"role": "user", "content": "QA it in a new instance first"}),
             entry(10, 9, call(3, "pi --qa")), entry(11, 10, result(3))]
    path = tmp_path / "pi.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    (run,) = load_runs(path)
    check_protocol(run)
    assert [c["args"]["command"] for c, _ in steps(run)] == ["make test", "pi --qa"]
    assert [m["text"] for m in of_type(run, "message") if m["role"] == "user"] == [
        "add the flag", "QA it in a new instance first"]
    assert run.meta["skipped"] == {"custom": 1, "on another branch": 3}
    assert run.meta["steps"] == 2
    # an unbranched session is read whole, as before
    (whole,) = load_runs(fixture("pi/ohmypi-preloop-5e3cc5e9.jsonl"))
    assert "on another branch" not in whole.meta["skipped"] and len(steps(whole)) == 5


def test_oh_my_pis_intent_is_left_out_of_the_repeat_fingerprints(tmp_path: Path) -> None:
    """Oh My Pi's `i` (the call's stated intent, on every call, reworded each time) is the
    call's `description`, as Droid's notes are: the same command run four times with the same
    output is a repeat however its intent was worded; the live hook records it alike."""
    from supervisor.hooks.pi.payload import map_payload
    from tests.engine_helpers import detectors, replay

    said = ["Run the tests", "Check the tests again", "Re-run tests", "See if tests pass now"]
    path = _pi_session(tmp_path, [
        ([{"id": f"c{n}", "name": "bash", "arguments": {"command": "make check", "i": i}}],
         [{"toolCallId": f"c{n}", "toolName": "bash", "isError": False,
           "content": [{"type": "text", "text": "3 warnings"}]}])
        for n, i in enumerate(said)])
    (run,) = load_runs(path)
    calls = [c for c, _ in steps(run)]
    assert [c["args"] for c in calls] == [
        {"command": "make check", "description": i} for i in said]
    hooked = map_payload({"session_id": "s", "hook_event_name": "tool_call", "tool_name": "bash",
                          "call_id": "c0", "tool_input": {"command": "make check", "i": said[0]}})
    assert hooked.call is not None and hooked.call["args"] == calls[0]["args"]
    assert "exact_repeat" in detectors(replay(list(run.events)))
    # a call's own description is kept, the intent joined to it
    (run,) = load_runs(_pi_session(tmp_path, [([{"id": "t", "name": "task", "arguments": {
        "description": "review", "i": "Delegate the review"}}], [])]))
    assert steps(run)[0][0]["args"] == {"description": "review (Delegate the review)"}


def test_oh_my_pis_interrupted_call_and_patch_edit_are_read_as_what_they_are() -> None:
    """Cut from real Oh My Pi sessions (preloopdev/preloop). A call the person stopped while it
    ran (`details.__interrupted`, `execution: started`: a CI wait of twenty minutes) ran: it
    failed as interrupted by the user (as Claude Code's hook words it), its output unknown,
    the text Oh My Pi wrote in its place a system message, not the tool's output. An `edit`
    given a patch of one file (`input`: `*** Update File: utils/github.ts`) is the edit of
    that file: its `path` and its text before and after, under the engine's names."""
    (run,) = load_runs(fixture("pi/ohmypi-preloop-b8e100f1.jsonl"))
    ((call, result),) = steps(run)
    assert call["tool"] == "bash" and "refused_by" not in call
    assert result is not None and (result["ok"], result["error"], result["output"]) == (
        False, "interrupted by the user", "")
    assert [m["text"][:38] for m in of_type(run, "message") if m["role"] == "system"] == [
        "Skipped due to queued user message. Do", "Interrupted by user"]
    (run,) = load_runs(fixture("pi/ohmypi-preloop-5e3cc5e9.jsonl"))
    edit, result = steps(run)[4]
    assert edit["tool"] == "edit" and "input" not in edit["args"]
    assert edit["args"]["path"] == "utils/github.ts"
    assert edit["args"]["old_string"].startswith("const githubRequest = async <T>(\n")
    assert edit["args"]["new_string"].endswith("const { method = \"GET\", headers = {}, body }"
                                                " = options;\n")
    assert edit["args"]["description"] == "patch githubRequest for GHES"
    policy = Policy.profile()
    assert facts_of(edit["tool"], edit["args"], policy).path == "utils/github.ts"


def test_calls_oh_my_pi_never_ran_are_no_failures(tmp_path: Path) -> None:
    """Oh My Pi writes a result in place of a call it did not run (`details.__synthetic`,
    `isError`): skipped because the person typed meanwhile, or aborted with its response. The
    call is recorded as refused before it ran (by the `user`, by the `agent`), with no result
    (the text the model read is a `system` message): a rule counting repeated errors does not
    read the person's typing as one error three times, and the engine judges none of them."""
    from tests.engine_helpers import alarms, replay

    skipped = "Skipped due to queued user message. Do not count this skipped result as done."
    aborted = "Tool execution was aborted: TTSR matched rule: ts-show-before-create"

    def synthetic(call_id: str, text: str, source: str) -> dict:
        return {"toolCallId": call_id, "toolName": "bash", "isError": True,
                "content": [{"type": "text", "text": text}],
                "details": {"__synthetic": True, "source": source, "executed": False}}

    calls = [{"id": f"c{n}", "name": "bash", "arguments": {"command": f"ls d{n}"}}
             for n in range(4)]
    path = _pi_session(tmp_path, [
        (calls[:3], [synthetic(f"c{n}", skipped, "interrupt_skipped") for n in range(3)]),
        (calls[3:], [synthetic("c3", aborted, "assistant_stop_aborted")])])
    (run,) = load_runs(path)
    check_protocol(run)
    pairs = steps(run)
    assert [c.get("refused_by") for c, _ in pairs] == ["user", "user", "user", "agent"]
    assert [r for _, r in pairs] == [None] * 4 and run.meta["pending_calls"] == 0
    assert [m["text"] for m in of_type(run, "message") if m["role"] == "system"] == [
        skipped] * 3 + [aborted]
    report = replay(list(run.events))
    assert report.steps == 4 and alarms(report) == []
    # a result Oh My Pi wrote for a call that did run is the call's outcome, as before
    ran = synthetic("c0", "Exit code 1", "interrupt_skipped")
    ran["details"]["executed"] = True
    (run,) = load_runs(_pi_session(tmp_path, [(calls[:1], [ran])]))
    ((call, result),) = steps(run)
    assert "refused_by" not in call and result is not None and result["ok"] is False


def test_copilot_and_opencode_calls_are_read_through_the_vocabulary() -> None:
    """The engine reads the imported calls as the live ones: the shell line, the edit."""
    from supervisor.engine.categories import classify
    from supervisor.engine.edits import edits_of
    from supervisor.engine.policy import Policy

    policy = Policy.profile()
    for name in ("copilot-cli/events.jsonl", "opencode/session-export.json"):
        pairs = steps(load_runs(fixture(name))[0])
        assert [classify(c["tool"], c["args"], policy) for c, _ in pairs] == [
            "read", "read", "read", "mutate", "run"]
        (edit,) = edits_of(pairs[3][0]["tool"], pairs[3][0]["args"])
        assert (edit.kind, edit.search, edit.text) == ("replace", "return a - b",
                                                       "return a + b")


def test_usage_counts_the_input_not_read_from_the_cache_once_per_answer() -> None:
    """The `tokens` limit counts input not read from the cache (the protocol's `input_tokens`):
    Codex and Gemini count the cached input inside theirs, Claude Code apart, and Codex writes
    each answer's usage twice. Counted as recorded, a long session's re-reads of one context
    reached the 50M limit with no loop."""
    (codex,) = load_runs(fixture("codex/rollout-myapp-hoge.jsonl"))
    usage = of_type(codex, "usage")
    assert (usage[0]["input_tokens"], usage[0]["cache_read_tokens"]) == (3505 - 3072, 3072)
    assert (usage[1]["input_tokens"], usage[1]["cache_read_tokens"]) == (3711 - 3072, 3072)
    text = fixture("codex/rollout-myapp-hoge.jsonl").read_text()
    assert (text.count('"type": "token_count", "info": {'), len(usage)) == (13, 7)  # 6 twice
    (gemini,) = load_runs(fixture("gemini-cli/session-myapp-hoge.json"))
    first = of_type(gemini, "usage")[0]
    assert first["cache_read_tokens"] > 0 and first["input_tokens"] >= 0
    (claude,) = load_runs(fixture("claude-code/7f2abd2d-session.jsonl"))
    assert any(u.get("cache_read_tokens") == 12135 for u in of_type(claude, "usage"))
