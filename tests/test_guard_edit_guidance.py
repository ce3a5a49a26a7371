"""Self-healing guidance through the real guard (SDK and the hook platform), with real files:
a failed edit is answered with where its text is and whether the file changed since the agent
read it, recorded as a `hint` event; a refused edit's reason says the same."""

import json
import os
from pathlib import Path

import pytest

from supervisor.guard import edit_guidance
from supervisor.guard.sdk import Session
from supervisor.guard.settings import GuardSettings
from supervisor.hooks.budget import Budget
from supervisor.hooks.runtime import run_safely
from tests.hook_helpers import events, payload

APP = "def load(path):\n    with open(path) as fh:\n        return fh.read()\n"
NOT_FOUND = "String to replace not found in file.\nString: {}"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text(APP)
    return workspace


@pytest.fixture
def session(tmp_path: Path, ws: Path):
    with Session("test-agent", cwd=ws, root=tmp_path / "store", heartbeat_s=None,
                 settings=GuardSettings(checkpoints=False)) as s:
        yield s


def read(session: Session, path: Path) -> None:
    verdict = session.before_call("Read", {"file_path": str(path)})
    session.after_call(verdict, path.read_text())


def edit(session: Session, path: Path, old: str, new: str) -> str | None:
    """An Edit as the agent's tool does it: replace `old` once, or fail as Claude Code does."""
    verdict = session.before_call("Edit", {"file_path": str(path), "old_string": old,
                                           "new_string": new})
    text = path.read_text()
    if text.count(old) != 1:
        return session.after_call(verdict, NOT_FOUND.format(old), ok=False,
                                  error=NOT_FOUND.format(old))
    path.write_text(text.replace(old, new))
    return session.after_call(verdict, "The file has been updated.")


def seqs(session: Session, tool: str) -> list[int]:
    return [e["seq"] for e in session_events(session) if e["type"] == "tool_call"
            and e["tool"] == tool]


def session_events(session: Session) -> list[dict]:
    return events(session.root, session.session_id)


def test_a_failed_edit_is_told_where_the_text_is(session: Session, ws: Path) -> None:
    app = ws / "app.py"
    read(session, app)
    hint = edit(session, app, "with open(path) as fh:\n    return fh.read()", "x")
    assert hint is not None
    assert hint.startswith(f"{app} has not changed since you last read it.\n"
                           f"The text is in {app} at lines 2-3, but indented differently: "
                           "line 3 is indented by 8 spaces in the file and by 4 spaces in your "
                           "text.")
    assert "  3 │         return fh.read()" in hint
    (recorded,) = [e for e in session_events(session) if e["type"] == "hint"]
    assert recorded["kind"] == "failed_edit" and recorded["message"] == hint
    assert recorded["call_id"] == [e for e in session_events(session)
                                   if e["type"] == "tool_call"][-1]["call_id"]


def test_a_line_changed_by_the_sessions_own_edit(session: Session, ws: Path) -> None:
    app = ws / "app.py"
    read(session, app)
    assert edit(session, app, "return fh.read()", "return fh.read().strip()") is None
    hint = edit(session, app, "        return fh.read()\n", "        return fh.read()[:10]\n")
    assert hint is not None
    assert hint.startswith(
        f"{app} changed since you last read it, by your own edit since then "
        "(Edit). Changed lines:\n  line 3 now `return fh.read().strip()` (was `return "
        "fh.read()`)\n")


def test_a_file_rewritten_outside_the_session(session: Session, ws: Path) -> None:
    app = ws / "app.py"
    read(session, app)
    app.write_text(APP.replace("path", "name"))  # another process
    hint = edit(session, app, "def load(path):", "def load(path, mode='r'):")
    assert hint is not None
    assert hint.startswith(f"{app} changed since you last read it, not by an edit "
                           "of this session the supervisor saw")
    assert "line 1 now `def load(name):` (was `def load(path):`)" in hint


def test_a_text_occurring_twice(session: Session, ws: Path) -> None:
    app = ws / "app.py"
    app.write_text(APP + "\n\ndef dump(path):\n    with open(path) as fh:\n        pass\n")
    verdict = session.before_call("Edit", {"file_path": "app.py", "old_string": "open(path)",
                                           "new_string": "open(path, 'rb')"})
    hint = session.after_call(verdict, "Found 2 matches of the string to replace, but "
                              "replace_all is false.", ok=False)
    assert hint is not None
    assert hint.startswith("The text you searched for occurs 2 times in app.py, at lines 2 "
                           "and 7.")


def test_a_missing_file_and_a_successful_edit(session: Session, ws: Path) -> None:
    verdict = session.before_call("Edit", {"file_path": "gone.py", "old_string": "a",
                                           "new_string": "b"})
    hint = session.after_call(verdict, NOT_FOUND.format("a"), ok=False)
    assert hint == ("gone.py does not exist. Check the path (list the directory or search for "
                    "the file name) before editing again.")
    assert edit(session, ws / "app.py", "def load", "def load_text") is None


def test_an_edit_refused_before_it_runs_says_where_the_text_is(session: Session,
                                                               ws: Path) -> None:
    app = ws / "app.py"
    old = "with open(path) as f:"
    for _ in range(3):  # identical failing edits: the engine refuses the next one
        edit(session, app, old, "with open(path, 'rb') as f:")
    refused = session.before_call("Edit", {"file_path": str(app), "old_string": old,
                                           "new_string": "with open(path, 'rb') as f:"})
    assert refused.action == "block"
    message = refused.message or ""
    assert message.startswith("Blocked: this exact call")
    assert "The closest text is at line 2" in message
    assert "line 2 is `with open(path) as fh:` in the file, `with open(path) as f:` in your " \
        "text" in message
    verdict = [e for e in session_events(session) if e["type"] == "verdict"][-1]
    assert verdict["action"] == "block" and verdict["message"] == message


def test_copies_of_read_files_are_private_and_bounded(session: Session, ws: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(edit_guidance, "COPIES_KEPT", 3)
    for i in range(6):
        path = ws / f"f{i}.py"
        path.write_text(f"x = {i}\n")
        read(session, path)
    reads = session.guard.files.reads
    copies = sorted(os.listdir(reads))
    assert len(copies) == 3
    assert all((reads / c).stat().st_mode & 0o777 == 0o600 for c in copies)
    assert reads.stat().st_mode & 0o777 == 0o700
    big = ws / "big.txt"
    big.write_text("y" * (edit_guidance.COPY_BYTES + 1))
    read(session, big)
    assert len(os.listdir(reads)) == 3  # remembered by digest only


def test_the_hook_answers_a_failed_edit_batch_with_the_region(tmp_path: Path, ws: Path) -> None:
    """Claude Code reports an Edit whose old_string is not in the file only in PostToolBatch:
    the answer carries the region as added context."""
    root = tmp_path / "store"
    root.mkdir()
    (root / "policy.toml").write_text("[guard]\ncheckpoints = false\n")
    app = str(ws / "app.py")

    def hook(event: str, **fields: object) -> dict | None:
        complaints: list[str] = []
        text = run_safely("claude-code", json.dumps(payload(event, session="s1", cwd=ws,
                                                            **fields)).encode(),
                          root, Budget(60), complaints.append)
        assert complaints == []
        return json.loads(text) if text else None

    hook("PreToolUse", tool_name="Read", tool_input={"file_path": app}, tool_use_id="t1")
    hook("PostToolUse", tool_name="Read", tool_input={"file_path": app}, tool_use_id="t1",
         tool_response={"type": "text", "file": {"filePath": app, "content": APP}})
    old = "def load(path):\n  with open(path) as fh:"
    answer = hook("PostToolBatch", tool_calls=[{
        "tool_name": "Edit", "tool_input": {"file_path": app, "old_string": old,
                                            "new_string": "x", "replace_all": False},
        "tool_use_id": "t2",
        "tool_response": f"<tool_use_error>{NOT_FOUND.format(old)}</tool_use_error>"}])
    assert answer is not None
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("Agent Supervisor: ")
    assert "has not changed since you last read it." in context
    assert "The text is in" in context and "indented differently" in context
    assert "  2 │     with open(path) as fh:" in context
    assert [e["kind"] for e in events(root, "s1") if e["type"] == "hint"] == ["failed_edit"]


def test_a_patch_that_cannot_apply_is_told_before_it_runs(session: Session, ws: Path) -> None:
    """Codex runs apply_patch as a shell command and runs no hook after it: the guard checks
    the patch's lines before it runs, as apply_patch looks for them."""
    patch = ("*** Begin Patch\n*** Update File: app.py\n@@\n-def load(name):\n"
             "+def load(name, mode):\n*** End Patch\n")
    verdict = session.before_call("Bash", {"command": f"apply_patch <<'EOF'\n{patch}EOF"})
    assert verdict.action == "nudge"
    assert (verdict.message or "").startswith(
        "The text you searched for is not in app.py. The closest text is at line 1")
    # the result, if the agent reports one, does not repeat it
    assert session.after_call(verdict, "apply_patch verification failed: Failed to find "
                              "expected lines in app.py", ok=False) is None


def test_a_patch_apply_patch_finds_despite_whitespace_is_not_told(session: Session,
                                                                   ws: Path) -> None:
    patch = ("*** Begin Patch\n*** Update File: app.py\n@@\n-  with open(path) as fh:  \n"
             "+    with open(path, 'rb') as fh:\n*** End Patch\n")
    verdict = session.before_call("Bash", {"command": f"apply_patch <<'EOF'\n{patch}EOF"})
    assert (verdict.action, verdict.message) == ("allow", None)


def test_an_edit_reported_ok_whose_output_says_it_failed(session: Session, ws: Path) -> None:
    """Codex's PostToolUse carries no failure flag: the tool's words decide."""
    patch = ("*** Begin Patch\n*** Update File: app.py\n@@\n-def load(path):\n"
             "+def load(path, mode):\n*** End Patch")
    verdict = session.before_call("apply_patch", {"input": patch})
    assert verdict.action == "allow"  # the lines are there now
    (ws / "app.py").write_text(APP.replace("path", "name"))  # not when the tool runs
    hint = session.after_call(verdict, "apply_patch verification failed: Failed to find "
                              "expected lines in app.py:\ndef load(path):", ok=True)
    assert hint is not None
    assert hint.startswith("The text you searched for is not in app.py. The closest text is "
                           "at line 1")
