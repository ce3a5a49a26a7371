"""Claude Code 2.1.332's events, on payloads the real binary sent (tests/data/claude_code/
2.1.332.payloads.jsonl): a skill's shell command (PreSkillShellCommand) judged like a call and
its outcome recorded as unknown, the assistant's text from MessageDisplay, and a call that
Claude Code's own permission check refused after PreToolUse let it through given a result."""

import json
from pathlib import Path

import pytest

from supervisor.hooks.claude_code import EVENTS
from supervisor.hooks.claude_code.payload import map_payload
from tests.hook_helpers import events, run_hook

DATA = Path(__file__).parent / "data" / "claude_code" / "2.1.332.payloads.jsonl"


def recorded(event: str) -> list[dict]:
    found = [json.loads(line) for line in DATA.read_text().splitlines()]
    return [f["payload"] for f in found if f["event"] == event]


def at(payload: dict, sid: str) -> dict:
    return {**payload, "session_id": sid}


def test_the_new_events_are_registered() -> None:
    assert ("PreSkillShellCommand", True) in EVENTS and ("MessageDisplay", False) in EVENTS


def test_a_skills_shell_command_is_a_call_with_an_unknown_outcome(tmp_path: Path) -> None:
    (payload,) = recorded("PreSkillShellCommand")
    step = map_payload(payload)
    assert step.kind == "call" and step.no_result and step.call is not None
    assert step.call["tool"] == "Bash"
    assert step.call["args"] == {"command": "echo skill-preamble-ran"}

    done = run_hook(at(payload, "skill-1"), tmp_path)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    written = events(tmp_path, "skill-1")
    (call,) = [e for e in written if e["type"] == "tool_call"]
    (result,) = [e for e in written if e["type"] == "tool_result"]
    assert call["call_id"] == result["call_id"] == payload["tool_use_id"]
    assert result["outcome"] == "unknown" and result["ok"] is True and result["output"] == ""


@pytest.mark.slow
def test_a_refused_skill_command_is_answered_under_its_own_event(tmp_path: Path) -> None:
    """The answer names PreSkillShellCommand (Claude Code checks `hookEventName`); a refused
    command gets no result."""
    (payload,) = recorded("PreSkillShellCommand")
    (tmp_path / "policy.toml").write_text("[detectors.exact_repeat]\nblock = 2\nnudge = 1\n")
    for _ in range(3):
        done = run_hook(at(payload, "skill-2"), tmp_path)
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "PreSkillShellCommand"
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    written = events(tmp_path, "skill-2")
    verdicts = [e["action"] for e in written if e["type"] == "verdict"]
    results = [e for e in written if e["type"] == "tool_result"]
    assert verdicts[-1] == "block" and len(results) == verdicts.count("allow") + verdicts.count(
        "nudge")


def test_the_assistants_text_comes_from_message_display(tmp_path: Path) -> None:
    first = recorded("MessageDisplay")[0]
    assert first["final"] is True and first["delta"] == "First I look."
    step = map_payload(first)
    assert step.kind == "display" and step.display == {
        "message_id": first["message_id"], "delta": "First I look.", "final": True}
    pieces = [{**first, "session_id": "disp-1", "index": i, "final": i == 2, "delta": d}
              for i, d in enumerate(["Line one.\n", "Line two.\n", ""])]
    for piece in pieces:
        done = run_hook(piece, tmp_path)
        assert done.returncode == 0 and done.stdout == "", done.stderr
    messages = [e for e in events(tmp_path, "disp-1") if e["type"] == "message"]
    said = [m["text"] for m in messages if m["role"] == "assistant"]
    assert said == ["Line one.\nLine two."]  # once, whole, at the final flush
    assert not (tmp_path / "sessions" / "disp-1" / "hook.json").read_text().count("Line one")


def test_a_call_refused_by_claude_codes_permission_check_gets_a_result(tmp_path: Path) -> None:
    pre = next(p for p in recorded("PreToolUse") if p["tool_name"] == "WebFetch")
    batch = next(p for p in recorded("PostToolBatch")
             if p["tool_calls"][0]["tool_name"] == "WebFetch")
    step = map_payload(batch)
    assert step.batch[0].get("refused") is True
    assert step.batch[0]["result"]["error"] == ("Claude requested permissions to use WebFetch, "
                                                "but you haven't granted it yet.")
    assert run_hook(at(pre, "perm-1"), tmp_path).returncode == 0
    assert run_hook(at(batch, "perm-1"), tmp_path).returncode == 0
    written = events(tmp_path, "perm-1")
    (call,) = [e for e in written if e["type"] == "tool_call"]
    (result,) = [e for e in written if e["type"] == "tool_result"]
    assert result["call_id"] == call["call_id"] == pre["tool_use_id"]
    assert result["ok"] is False and result["error"].startswith("Claude requested permissions")
    assert run_hook(at(batch, "perm-1"), tmp_path).returncode == 0  # the same batch again
    assert len([e for e in events(tmp_path, "perm-1") if e["type"] == "tool_result"]) == 1
