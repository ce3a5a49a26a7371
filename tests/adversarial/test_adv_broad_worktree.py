"""A broad working directory never starves the hold (issue 24, item 6, and the SDK `Session`
with cwd=$HOME from the "not yet tried" list).

An agent started in `/usr`, `/home`, `/tmp` or `$HOME/..`: the checkpoint before an escalation
used the whole hook budget, the call that should have been held got no answer (so it ran
unsupervised), and ~55 MB of partial objects stayed in the store per attempt. Now checkpoints
are bounded in files, bytes and time, a work tree too big or too broad is refused with a reason
the operator sees (and checkpoints are off for the session), a failed checkpoint leaves nothing
behind, and the hold is answered. Real git, the real hook runtime, the real SDK."""

import json
import os
import time
from pathlib import Path

import pytest

from supervisor.guard.checkpoints import CheckpointError, CheckpointStore, WorkTreeTooBig
from supervisor.guard.sdk import Session
from supervisor.hooks.budget import Budget
from supervisor.hooks.runtime import run_safely
from supervisor.operator.send import send_decision
from supervisor.store import waits
from tests.hook_helpers import events, payload


def _messages(root: Path, session: str) -> list[str]:
    return [e["text"] for e in events(root, session) if e["type"] == "message"]


def _garbage(git_dir: Path) -> list[Path]:
    """Objects no checkpoint names, and leftovers of a quarantine."""
    if not git_dir.exists():
        return []
    loose = [p for p in (git_dir / "objects").glob("??/*")]
    return loose + list(git_dir.glob("incoming-*")) + list(git_dir.glob("index.saved.*"))


@pytest.mark.slow
def test_a_hold_in_usr_is_answered_and_the_operator_told_why(tmp_path: Path) -> None:
    if sum(1 for _ in zip(range(60_000), Path("/usr").rglob("*"), strict=False)) < 55_000:
        pytest.skip("/usr holds too few files here to be a broad work tree")
    root = tmp_path / "store"
    started = time.monotonic()
    start = json.dumps(payload("SessionStart", cwd="/usr", source="startup")).encode()
    run_safely("claude-code", start, root, Budget(20, started), print)
    send_decision(root, "loop-1", "pause", operator="ana")  # the next call is held
    call = json.dumps(payload("PreToolUse", cwd="/usr", tool_name="Bash",
                              tool_input={"command": "make"}, tool_use_id="toolu_1")).encode()
    started = time.monotonic()
    out = run_safely("claude-code", call, root, Budget(20, started), print)
    took = time.monotonic() - started
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "on hold" in answer[
        "permissionDecisionReason"]
    assert took < 20
    assert [e for e in events(root, "loop-1") if e["type"] == "escalation"]
    told = [m for m in _messages(root, "loop-1") if "checkpoints are off" in m]
    assert told and "/usr has more than 50000 files" in told[0], _messages(root, "loop-1")
    assert _garbage(root / "sessions" / "loop-1" / "checkpoints.git") == []


def test_a_tree_over_the_byte_bound_is_refused_before_any_object_is_written(
        tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(10):
        (tree / f"f{i}.bin").write_bytes(os.urandom(4096))
    store = CheckpointStore(tmp_path / "cp.git", tree, max_bytes=20_000)
    with pytest.raises(WorkTreeTooBig, match="holds more than"):
        store.create("first")
    assert _garbage(tmp_path / "cp.git") == []


@pytest.mark.slow
def test_a_checkpoint_killed_at_its_deadline_leaves_nothing(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for d in range(30):
        sub = tree / f"d{d}"
        sub.mkdir()
        for i in range(100):
            (sub / f"f{i}.txt").write_bytes(os.urandom(2048))
    store = CheckpointStore(tmp_path / "cp.git", tree)
    (tree / "first.txt").write_text("1\n")
    failed = 0
    for wait in (0.05, 0.1, 0.2, 0.4):
        try:
            with waits.within(time.monotonic() + wait):
                store.create("under a short budget")
        except (CheckpointError, waits.DeadlineExceeded):
            failed += 1
            assert _garbage(tmp_path / "cp.git") == [], wait
        else:
            break  # from here on, objects are the checkpoint's own
    assert failed, "no attempt hit its deadline: the test proves nothing"
    cp = CheckpointStore(tmp_path / "cp.git", tree).create("with time")  # still works after
    assert cp.files >= 3001


def test_an_sdk_session_in_the_home_directory_takes_no_checkpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("export X=1\n")
    monkeypatch.setenv("HOME", str(home))
    root = tmp_path / "store"
    for cwd in (home, tmp_path):  # the home directory, and the directory above it
        with Session("agent", cwd=cwd, root=root, session_id=f"s-{cwd.name}",
                     heartbeat_s=None) as session:
            session.before_call("bash", {"command": "ls"})
        told = [m for m in _messages(root, f"s-{cwd.name}") if "checkpoints are off" in m]
        assert told and "home directory" in told[0]
        assert not (root / "sessions" / f"s-{cwd.name}" / "checkpoints.git").exists()
