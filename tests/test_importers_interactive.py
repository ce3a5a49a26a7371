"""Importers meet interactive sessions as they are (issue 35): record types they do not know
are skipped and counted, Codex's `exec` wrapper is read as the shell commands it runs, and only
a person's prompt is a user message (a task boundary for the engine)."""

import json
from pathlib import Path
from typing import Any

from supervisor.engine.categories import classify
from supervisor.engine.policy import Policy
from supervisor.importers import IMPORTERS, detect_format, load_runs
from tests.importer_helpers import DATA


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _codex(item: dict[str, Any], kind: str = "response_item", t: int = 0) -> dict[str, Any]:
    return {"timestamp": f"2026-03-01T10:00:{t:02d}.000Z", "type": kind, "payload": item}


def test_a_codex_rollout_with_records_of_a_newer_codex_is_read(tmp_path: Path) -> None:
    script = ('const a = await tools.exec_command({ cmd: "git status", workdir: "/w" });\n'
              "const b = await tools.exec_command({cmd: 'pytest -q tests/test_a.py'});\n"
              "text(a.output + b.output);")
    path = _write(tmp_path / "rollout.jsonl", [
        _codex({"id": "s1", "cwd": "/w", "cli_version": "0.144.0"}, "session_meta"),
        _codex({"state": {"windows": []}}, "world_state", 1),
        _codex({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "# AGENTS.md instructions for /w\n\nBe brief."}]}, t=2),
        _codex({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "make the tests pass"}]}, t=3),
        _codex({"type": "function_call", "name": "exec_command", "call_id": "c1",
                "arguments": json.dumps({"cmd": "ls src", "yield_time_ms": 1000})}, t=4),
        _codex({"type": "function_call_output", "call_id": "c1",
                "output": "Exit code: 0\nOutput:\na.py\n"}, t=5),
        _codex({"type": "custom_tool_call", "name": "exec", "call_id": "c2", "input": script},
               t=6),
        _codex({"type": "world_state", "windows": 2}, "world_state", 7),
        _codex({"type": "custom_tool_call_output", "call_id": "c2",
                "output": "Exit code: 1\nOutput:\n1 failed\n"}, t=8),
    ])
    (run,) = load_runs(path)
    calls = [(e["tool"], e["args"]) for e in run.events if e["type"] == "tool_call"]
    assert calls == [("exec_command", {"cmd": "ls src", "yield_time_ms": 1000}),
                     ("exec_command", {"cmd": "git status"}),
                     ("exec_command", {"cmd": "pytest -q tests/test_a.py"})]
    results = [(e["ok"], e["output"]) for e in run.events if e["type"] == "tool_result"]
    assert results[-1][0] is False and "1 failed" in results[-1][1]
    messages = [(e["role"], e["text"][:9]) for e in run.events if e["type"] == "message"]
    assert messages == [("system", "# AGENTS."), ("user", "make the ")]
    assert run.meta["skipped"]["world_state/None"] == 1
    assert run.meta["skipped"]["world_state/world_state"] == 1


def test_a_codex_code_mode_cell_that_only_polls_is_a_poll(tmp_path: Path) -> None:
    """Codex's code mode polls a command still running in its PTY with an `exec` cell that
    only calls `tools.write_stdin` (batch 9, `hk-20260713T2112-0537ac15`: 19 such cells while
    a bats run printed nothing, 53 on a `gh run watch`); read as the `write_stdin` call it makes,
    a cell with empty `chars` is a poll (it waits) and one with `\\u0003` types (it acts), as
    the bare calls are. A cell that calls another tool as well stays an `exec` call."""
    poll = ('const r = await tools.write_stdin({session_id:40005,chars:"",yield_time_ms:1000,'
            "max_output_tokens:12000}); text(r.output);\n")
    stop = 'const r = await tools.write_stdin({ session_id: 40005, chars: "\\u0003" }); text(r);'
    both = ('const a = await tools.write_stdin({session_id:40005,chars:""});\n'
            'await tools.update_plan({plan: []}); text(a.output);')
    records = [
        _codex({"id": "s1", "cwd": "/w", "cli_version": "0.142.5"}, "session_meta"),
        _codex({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "run the bats tests"}]}, t=1),
        _codex({"type": "function_call", "name": "exec_command", "call_id": "c0",
                "arguments": json.dumps({"cmd": "mise run test:bats"})}, t=2),
        _codex({"type": "function_call_output", "call_id": "c0",
                "output": "Process running with session ID 40005\nOutput:\n"}, t=3),
    ]
    for i, script in enumerate([poll, poll, stop, both], start=1):
        records += [
            _codex({"type": "custom_tool_call", "name": "exec", "call_id": f"c{i}",
                    "input": script}, t=3 + 2 * i),
            _codex({"type": "custom_tool_call_output", "call_id": f"c{i}",
                    "output": "Script completed\nWall time 5.0 seconds\nOutput:\n\n"},
                   t=4 + 2 * i),
        ]
    (run,) = load_runs(_write(tmp_path / "rollout.jsonl", records))
    calls = [(e["tool"], e["args"]) for e in run.events if e["type"] == "tool_call"]
    assert [tool for tool, _ in calls] == ["exec_command", "write_stdin", "write_stdin",
                                           "write_stdin", "exec"]
    assert calls[1][1] == calls[2][1] == {"session_id": 40005, "chars": ""}
    assert calls[3][1] == {"session_id": 40005, "chars": "\u0003"}
    vocabulary = IMPORTERS["codex"].tools
    assert [vocabulary.role(tool) for tool, _ in calls[1:4]] == ["poll"] * 3
    assert [vocabulary.types_input(args) for _, args in calls[1:4]] == [False, False, True]
    assert calls[4][1] == {"input": both}


def test_a_codex_code_mode_cell_is_read_with_its_keys_quoted() -> None:
    """Models write a cell's arguments as JSON too (`tools.exec_command({"cmd":"sed -n ..."})`,
    teslamint/entirecontext's Codex 0.147 sessions; over 300 such cells in the Entire
    checkpoints mirrored here): each is the `exec_command` it runs, as the bare-key form is,
    not an `exec` call whose repeats nothing reads."""
    (run,) = load_runs(DATA / "codex" / "rollout-entirecontext-quoted-cmd.jsonl")
    calls = [(e["tool"], e["args"]) for e in run.events if e["type"] == "tool_call"]
    assert [tool for tool, _ in calls] == ["exec_command", "exec_command"]
    assert calls[0][1]["cmd"].startswith("sed -n '1,240p' /Users/teslamint/.codex/plugins/")
    assert calls[1][1]["cmd"].startswith("rg -n \"inline shell|list continuation|")
    assert [e["ok"] for e in run.events if e["type"] == "tool_result"] == [True, True]


def test_a_codex_code_mode_cell_polls_with_quoted_keys_or_several_at_once(
        tmp_path: Path) -> None:
    """The poll cells as models write them: keys quoted (`{"session_id":24403,"chars":""}`),
    several sessions polled in one cell (`Promise.all` of two `write_stdin`), a command run
    then waited on in the same cell (`r.session_id`: its own command, no poll of its own)."""
    quoted = ('const r = await tools.write_stdin({"session_id":24403,"chars":"",'
              '"yield_time_ms":1000,"max_output_tokens":12000}); text(r.output);\n')
    two = ('const results = await Promise.all([\n'
           '  tools.write_stdin({ session_id: 99524, chars: "", yield_time_ms: 1000 }),\n'
           '  tools.write_stdin({ session_id: 55811, chars: "", yield_time_ms: 1000 })\n]);\n'
           "for (const r of results) text(r.output);\n")
    run_and_wait = ('const r = await tools.exec_command({\n  cmd: "vp check",\n'
                    '  yield_time_ms: 30000\n});\ntext(r.output);\nif (r.session_id) text(('
                    'await tools.write_stdin({session_id:r.session_id, chars:"", '
                    "yield_time_ms:30000})).output);\n")
    records = [_codex({"id": "s1", "cwd": "/w", "cli_version": "0.144.0"}, "session_meta")]
    for i, script in enumerate([quoted, two, run_and_wait]):
        records += _cell(i, script, "ok", 1 + i)
    (run,) = load_runs(_write(tmp_path / "rollout.jsonl", records))
    calls = [(e["tool"], e["args"]) for e in run.events if e["type"] == "tool_call"]
    assert calls == [("write_stdin", {"session_id": 24403, "chars": ""}),
                     ("write_stdin", {"session_id": 99524, "chars": ""}),
                     ("write_stdin", {"session_id": 55811, "chars": ""}),
                     ("exec_command", {"cmd": "vp check"})]


def test_entires_compact_transcript_is_not_read_for_it_lacks_the_outputs() -> None:
    """Entire keeps a compact `transcript.jsonl` beside the agent's own log (`full.jsonl`),
    and only the compact one when the log is too large for a snapshot. It is not imported
    (docs/importers.md, "Not supported"): it lacks results the log holds. Its two lines here
    are cut from the same checkpoint as `rollout-entirecontext-quoted-cmd.jsonl`
    (teslamint/entirecontext, MIT): the same two code-mode cells, each `success` with an
    empty output in the compact form, while the rollout holds what each printed."""
    compact = DATA.parent / "entire" / "codex-compact-entirecontext.jsonl"
    assert detect_format(compact) is None
    blocks = [b for line in compact.read_text().splitlines()
              for b in json.loads(line)["content"] if b.get("type") == "tool_use"]
    assert [(b["name"], b["result"]) for b in blocks] == [
        ("exec", {"output": "", "status": "success"})] * 2
    (run,) = load_runs(DATA / "codex" / "rollout-entirecontext-quoted-cmd.jsonl")
    outputs = {e["call_id"]: e["output"] for e in run.events if e["type"] == "tool_result"}
    assert all(outputs[b["id"]].startswith("Script completed\nWall time") for b in blocks)


def test_a_codex_mcp_call_is_named_as_codex_hooks_name_it() -> None:
    """Codex's hooks call an MCP tool `mcp__<namespace>__<tool>` (the namespace's trailing and
    the name's leading `_` trimmed); the importer names the rollout's calls the same, so an
    imported run meets the policy's `mcp__*` categories as a live session does (a real
    rollout's GitHub connector calls, recorded as a bare `name` in an MCP `namespace`)."""
    (run,) = load_runs(DATA / "codex" / "rollout-arsui-mcp-github.jsonl")
    calls = [(e["tool"], e["args"].get("pr_number")) for e in run.events
             if e["type"] == "tool_call"]
    assert calls == [("mcp__codex_apps__github__add_comment_to_issue", 676),
                     ("mcp__codex_apps__github__get_pr_reactions", 676)]
    policy = Policy.profile()
    assert [classify(tool, {}, policy) for tool, _ in calls] == ["run", "read"]
    assert [e["ok"] for e in run.events if e["type"] == "tool_result"] == [True, True]
    assert Policy.from_dict({"tools": {"mcp__codex_apps__github__*": {"category": "other"}}}) \
        .tool_category(calls[0][0]) == "other"
    assert run.meta["skipped"] == {}  # the calls' `mcp_tool_call_end` events are read


def test_a_failed_codex_mcp_call_is_a_failure() -> None:
    """An MCP call's output records no exit code; its `mcp_tool_call_end` event says whether
    the tool failed (`isError`), and with what (a real connector's refusal)."""
    (run,) = load_runs(DATA / "codex" / "rollout-arsui-mcp-error.jsonl")
    (call,) = [e for e in run.events if e["type"] == "tool_call"]
    (result,) = [e for e in run.events if e["type"] == "tool_result"]
    assert call["tool"] == "mcp__codex_apps__github__search_issues"
    assert result["ok"] is False and result["exit_code"] is None
    assert result["error"].startswith("Error code: INVALID_ARGUMENT; Error: Parameters failed "
                                      "connector schema validation: state [enum]")
    assert "Wall time" in result["output"]


def _claude(kind: str, content: Any, t: int, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "sessionId": "s1", "uuid": f"u{t}",
            "timestamp": f"2026-03-01T10:00:{t:02d}.000Z",
            "message": {"role": kind, "content": content}, **extra}


def test_only_a_persons_prompt_is_a_user_message_in_a_claude_code_transcript(
        tmp_path: Path) -> None:
    path = _write(tmp_path / "s1.jsonl", [
        _claude("user", "fix the parser", 0),
        _claude("assistant", [{"type": "tool_use", "id": "t1", "name": "Task", "input": {
            "prompt": "read the parser", "run_in_background": True}}], 1),
        _claude("user", [{"type": "tool_result", "tool_use_id": "t1",
                          "content": "Async agent launched successfully."},
                         {"type": "text", "text": "hook feedback: formatted"}], 2),
        _claude("user", "<task-notification>\n<task-id>a1</task-id> completed", 3),
        _claude("user", [{"type": "text", "text": "now the docs, please"}], 4),
    ])
    (run,) = load_runs(path)
    messages = [(e["role"], e["text"][:10]) for e in run.events if e["type"] == "message"]
    assert messages == [("user", "fix the pa"), ("system", "hook feedb"),
                        ("system", "<task-noti"), ("user", "now the do")]


def test_claude_codes_own_notices_are_not_the_assistants_messages(tmp_path: Path) -> None:
    """Assistant lines of model `<synthetic>` are Claude Code's (a usage limit, an API error):
    the same notice twice with nothing between was a level-1 `repeated_text` nudge in batch 8
    (raven-20260410T1232-2a25c488, step 183)."""
    notice = {"id": "n", "model": "<synthetic>", "role": "assistant",
              "content": [{"type": "text", "text":
                           "You're out of extra usage · resets 6:30pm (Asia/Calcutta)"}]}
    path = _write(tmp_path / "s1.jsonl", [
        _claude("user", "fix the parser", 0),
        {**_claude("assistant", None, 1), "message": notice, "isApiErrorMessage": True},
        {**_claude("assistant", None, 2), "message": notice, "isApiErrorMessage": True},
        _claude("assistant", [{"type": "text", "text": "Back: reading the parser."}], 3),
    ])
    (run,) = load_runs(path)
    messages = [(e["role"], e["text"][:8]) for e in run.events if e["type"] == "message"]
    assert messages == [("user", "fix the "), ("system", "You're o"), ("system", "You're o"),
                        ("assistant", "Back: re")]
    assert run.meta["model"] is None


def _cell(i: int, script: str, text: str, t: int) -> list[dict[str, Any]]:
    """A Codex code-mode `exec` cell and its answer, in the real rollout's shape."""
    return [_codex({"type": "custom_tool_call", "name": "exec", "call_id": f"x{i}",
                    "input": script}, t=t),
            _codex({"type": "custom_tool_call_output", "call_id": f"x{i}", "output": [
                {"type": "input_text",
                 "text": "Script completed\nWall time 5.0 seconds\nOutput:\n"},
                {"type": "input_text", "text": text}]}, t=t)]


_START = ('const r = await tools.exec_command({cmd:"mise run test:bats",'
          '"workdir":"/w","yield_time_ms":1000,"max_output_tokens":12000}); text(r.output); '
          "if(r.session_id) text(`SESSION_ID=${r.session_id}`);\n")
_POLL = ('const r = await tools.write_stdin({session_id:40005,chars:"",yield_time_ms:1000,'
         "max_output_tokens:12000}); text(r.output);\n")


def _code_mode_rollout(path: Path, polls: int, quiet: bool) -> Path:
    """A prompt, a test run started in a PTY, then `polls` code-mode polls of it: while it
    runs (`quiet`: mostly empty answers, a test's line every fifth poll, a `ps` of its
    processes every eighth, as a bats run polled every five seconds), or stuck on one line for
    good."""
    records = [_codex({"id": "s1", "cwd": "/w", "cli_version": "0.144.0"}, "session_meta"),
               _codex({"type": "message", "role": "user", "content": [
                   {"type": "input_text", "text": "run the bats tests"}]}, t=1),
               *_cell(0, _START, "[build] $ mise-tasks/build\nSESSION_ID=40005", 2)]
    for i in range(1, polls + 1):
        if quiet and i % 8 == 0:
            ps = ('const r = await tools.exec_command({cmd:"ps -Ao pid,etime,command | '
                  "rg 'bats' | head -40\"}); text(r.output);\n")
            records += _cell(1000 + i, ps, f"{7000 + i} 00:{i:02d} bats test/a.bats", 3)
        text = ("" if i % 5 else f"ok {i} builtins test {i}") if quiet else "waiting for lock"
        records += _cell(i, _POLL, text, 3)
    return _write(path, records)


def test_codex_code_mode_polls_of_a_quiet_test_run_are_no_loop(tmp_path: Path) -> None:
    """Batch 9's `hk` session: a test run polled by code-mode cells alike (empty answers
    between its lines, a `ps` now and then) was refused and paused as a repeat, a cycle and
    no progress. Waiting on started work is no iteration; a poll stuck on one output is
    still caught, by `polling` alone."""
    from supervisor.analysis.replay import analyze_events

    (quiet,) = load_runs(_code_mode_rollout(tmp_path / "quiet.jsonl", 35, quiet=True))
    report = analyze_events(quiet.events, Policy.profile("default"), session="q", source="q")
    assert report.findings == []
    (stuck,) = load_runs(_code_mode_rollout(tmp_path / "stuck.jsonl", 40, quiet=False))
    report = analyze_events(stuck.events, Policy.profile("default"), session="s", source="s")
    assert {f.detector for f in report.findings} == {"polling"}
