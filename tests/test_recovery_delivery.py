"""The recovery turn reaches each agent through the hook platform's shared answer path, in the
agent's own shape: Claude Code added context, Gemini CLI the reason that replaces a failed
tool's error (or added context after a shell command), Codex added context after a command. A
failed edit's file region comes after it, and the two together stay within the budget."""

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from supervisor.engine.recovery import HEADLINE, RECOVERY_CHARS
from supervisor.hooks.budget import Budget
from supervisor.hooks.runtime import run_safely
from tests.hook_helpers import events
from tests.hook_helpers import payload as claude_payload

NOTE = ("adds {n} to x, as the callers in the billing module expect it to do; see the invoices "
        "and the refunds, both round after the addition")
APP = "".join(f"def f{n}(x):\n    # {NOTE.format(n=n)}\n    return x + {n}\n"
              f"# end of f{n}: {NOTE.format(n=n)}\n" for n in range(40))
NOT_FOUND = "String to replace not found in file.\nString: {}"
GEMINI_NOT_FOUND = ("Could not find an exact match for 'old_string' in 'app.py'. If previous "
                    "edits modified the file or you are modifying lines outside your recent "
                    "read window, please use ReadFile to inspect the target lines before "
                    "retrying with an exact 'old_string'.")
# "{SOURCE}: " before the turn, and the newline between it and the region
_PREFIX = len("Agent Supervisor: ") + 1


@pytest.fixture
def ws() -> Iterator[Path]:
    """A workspace with a short path of a stable length: the message's budget must not depend
    on where pytest puts its temporary folders (a worker of pytest-xdist nests them deeper)."""
    workspace = Path(tempfile.mkdtemp(prefix="ws-", dir="/tmp"))
    (workspace / "app.py").write_text(APP)
    yield workspace
    shutil.rmtree(workspace, ignore_errors=True)


def hook(target: str, root: Path, data: dict[str, Any]) -> dict | None:
    complaints: list[str] = []
    text = run_safely(target, json.dumps(data).encode(), root, Budget(60), complaints.append)
    assert complaints == []
    return json.loads(text) if text else None


def _store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    root.mkdir(exist_ok=True)
    (root / "policy.toml").write_text("[guard]\ncheckpoints = false\n")
    return root


def _wrong(n: int) -> str:
    """A search text one character off the file's (three different ones: not one call)."""
    return f"def f{n}(x):\n    # {NOTE.format(n=n)}\n    return x - {n}"


def test_claude_code_a_third_failed_edit_is_told_to_step_back_with_the_region(
        tmp_path: Path, ws: Path) -> None:
    root, app = _store(tmp_path), str(ws / "app.py")
    told = []
    for n in (5, 6, 7):
        edit = {"file_path": app, "old_string": _wrong(n), "new_string": "x"}
        base = {"session": "c1", "cwd": ws, "tool_name": "Edit", "tool_input": edit,
                "tool_use_id": f"t{n}"}
        assert hook("claude-code", root, claude_payload("PreToolUse", **base)) is None
        answer = hook("claude-code", root, claude_payload(
            "PostToolUseFailure", **base, error=NOT_FOUND.format(_wrong(n))))
        assert answer is not None
        told.append(answer["hookSpecificOutput"]["additionalContext"])
    assert HEADLINE not in told[0] and HEADLINE not in told[1]
    text = told[2]
    assert text.startswith(f"Agent Supervisor: {HEADLINE} Your last 3 edits")
    assert f"Tried: Edit {app} (3 times, 3 different calls)." in text
    assert "each failed with “String to replace not found in file.”" in text
    # then the region of the file the third edit needed, within the same budget
    assert "line 31 is `return x + 7` in the file, `return x - 7` in your text" in text
    assert "31 │     return x + 7" in text
    assert len(text) <= RECOVERY_CHARS + _PREFIX
    detection = [e for e in events(root, "c1") if e["type"] == "detection"]
    assert [d["detector"] for d in detection] == ["recurring_error"]
    assert detection[0]["message"] in text


def _gemini(event: str, ws: Path, tool: str, tool_input: dict, **fields: Any) -> dict:
    return {"session_id": "g1", "transcript_path": str(ws / "none.jsonl"), "cwd": str(ws),
            "hook_event_name": event, "timestamp": "2026-11-23T05:49:53.723Z",
            "tool_name": tool, "tool_input": tool_input, **fields}


def test_gemini_the_turn_is_the_reason_that_replaces_the_tools_error(
        tmp_path: Path, ws: Path) -> None:
    root = _store(tmp_path)
    told = []
    for n in (5, 6, 7):
        edit = {"file_path": "app.py", "old_string": _wrong(n), "new_string": "x",
                "instruction": "fix"}
        assert hook("gemini", root, _gemini("BeforeTool", ws, "replace", edit)) is None
        answer = hook("gemini", root, _gemini("AfterTool", ws, "replace", edit, tool_response={
            "llmContent": GEMINI_NOT_FOUND, "returnDisplay": "Error",
            "error": {"message": GEMINI_NOT_FOUND, "type": "edit_no_occurrence_found"}}))
        assert answer is not None and answer["decision"] == "deny"
        told.append(answer["reason"])
    reason = told[2]
    assert reason.startswith(GEMINI_NOT_FOUND)  # the tool's own error first, then ours
    ours = reason[len(GEMINI_NOT_FOUND):].strip()
    assert ours.startswith(f"Agent Supervisor: {HEADLINE} Your last 3 edits")
    assert "31 │     return x + 7" in ours
    assert len(ours) <= RECOVERY_CHARS + _PREFIX
    # Gemini's wording is an edit's search text not found, not a missing path
    assert "re-read the exact lines" in ours and "does not exist" not in ours


def test_codex_a_third_identical_command_is_told_to_step_back(tmp_path: Path,
                                                              ws: Path) -> None:
    """Codex's PostToolUse carries the command's output (its outcome comes from the rollout,
    absent here: recorded as a success); three identical runs with identical output."""
    root = _store(tmp_path)
    told = []
    for n in range(3):
        base = {"session_id": "x1", "turn_id": "t", "transcript_path": str(ws / "none.jsonl"),
                "cwd": str(ws), "model": "fake-model", "permission_mode": "bypassPermissions",
                "tool_name": "Bash", "tool_input": {"command": "python3 check.py"},
                "tool_use_id": f"call_{n}"}
        hook("codex", root, {**base, "hook_event_name": "PreToolUse"})
        answer = hook("codex", root, {**base, "hook_event_name": "PostToolUse",
                                      "tool_response": "checking\nadd(2, 3) gave 6, not 5\n"})
        told.append(answer["hookSpecificOutput"]["additionalContext"] if answer else "")
    assert told[:2] == ["", ""]
    text = told[2]
    assert text.startswith(f"Agent Supervisor: {HEADLINE} Your last 3 runs")
    assert 'Bash {"command":"python3 check.py"} (3 times, the same call each time)' in text
    assert "each gave the same output, ending “add(2, 3) gave 6, not 5”" in text
    assert "no file changed between them" in text
