"""No operator decision is ever applied twice, and none is lost or raised into the agent
(issue 18, items 2 and 6): state resets and processes killed with SIGKILL between recording a
decision and saving the state, with the real hook and real processes; failures of a decision
recorded, never raised."""

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hook_helpers import payload, run_hook

from supervisor.guard.checkpoints import CheckpointStore
from supervisor.guard.core import Guard
from supervisor.guard.journal import SessionJournal
from supervisor.guard.settings import GuardSettings
from supervisor.store.provenance import sealed
from tests.adversarial.test_adv_rollback import _git, unremovable
from tests.conftest import cli_env

SETTINGS = GuardSettings(checkpoint_every=0)


def _decision(root: Path, session: str, decision_id: str, action: str, **fields: object
              ) -> None:
    path = root / "sessions" / session / "control.jsonl"
    seq = len(path.read_bytes().splitlines()) + 1 if path.exists() else 1
    with path.open("a") as f:
        f.write(json.dumps({"v": 1, "seq": seq, "ts": 1.0, "type": "decision", **sealed(
            root, session, {"decision_id": decision_id, "escalation_id": None,
                            "action": action, "operator": "ana", **fields})}) + "\n")


def _events(root: Path, session: str) -> list[dict]:
    path = root / "sessions" / session / "events.jsonl"
    return [json.loads(x) for x in path.read_bytes().splitlines()]


def _outcomes(root: Path, session: str, decision_id: str) -> list[str]:
    return [e["type"] for e in _events(root, session)
            if e["type"] in ("decision_applied", "decision_ignored")
            and e.get("decision_id") == decision_id]


def _work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("v1\n")
    _git(work, "init", "-q")
    return work


# -- item 2: a state reset never replays old commands -----------------------------------------

@pytest.mark.slow
def test_a_state_reset_does_not_replay_an_old_rollback_with_the_real_hook(root: Path,
                                                                          tmp_path: Path
                                                                          ) -> None:
    work = _work(tmp_path)
    call = payload("PreToolUse", "reset-1", cwd=work, tool_name="Bash",
                   tool_input={"command": "ls"}, tool_use_id="toolu_1")
    assert run_hook(call, root, "--timeout", "30").returncode == 0
    (work / "a.txt").write_text("v2\n")
    _decision(root, "reset-1", "d-rollback", "rollback", checkpoint_id="cp-1")
    assert run_hook({**call, "tool_use_id": "toolu_2"}, root).returncode == 0
    assert (work / "a.txt").read_text() == "v1\n"             # applied once
    (work / "a.txt").write_text("v3: newer work\n")
    state = root / "sessions" / "reset-1" / "state.json"
    state.write_text("{not json")                             # the state is lost
    done = run_hook({**call, "tool_use_id": "toolu_3"}, root)
    assert done.returncode == 0, done.stderr
    assert (work / "a.txt").read_text() == "v3: newer work\n"  # never applied again
    assert _outcomes(root, "reset-1", "d-rollback") == ["decision_applied"]
    assert len([e for e in _events(root, "reset-1") if e["type"] == "rollback"]) == 1


def test_a_state_of_another_version_does_not_replay_old_guidance(root: Path) -> None:
    with Guard.open(root, "s1", settings=SETTINGS) as guard:
        guard.start("agent")
    _decision(root, "s1", "d-guide", "guidance", text="read the file first")
    with Guard.open(root, "s1", settings=SETTINGS) as guard:
        assert "read the file first" in (guard.pre_call("bash", {"cmd": "ls"}).message or "")
    state = root / "sessions" / "s1" / "state.json"
    state.write_text(json.dumps({"v": 999}))
    with Guard.open(root, "s1", settings=SETTINGS) as guard:
        verdict = guard.pre_call("bash", {"cmd": "ls"})
    assert "read the file first" not in (verdict.message or "")
    assert _outcomes(root, "s1", "d-guide") == ["decision_applied"]


# -- item 2: a hook killed between decision_applied and the state save -----------------------

KILLED_STEP = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from supervisor.guard.core import Guard
    from supervisor.guard.desk import OperatorDesk
    from supervisor.guard.settings import GuardSettings

    original = OperatorDesk._applied
    def applied_then_killed(self, *args, **kwargs):
        original(self, *args, **kwargs)
        # decision_applied is in the log; the state is not saved yet: kill -9 right here
        os.kill(os.getpid(), signal.SIGKILL)
    OperatorDesk._applied = applied_then_killed
    root, session = Path(sys.argv[1]), sys.argv[2]
    with Guard.open(root, session, settings=GuardSettings(checkpoint_every=0)) as guard:
        guard.pre_call("bash", {"cmd": "ls"})
""")


def _killed_step(root: Path, session: str) -> None:
    done = subprocess.run([sys.executable, "-c", KILLED_STEP, str(root), session],
                          capture_output=True, text=True, timeout=60, env=cli_env())
    assert done.returncode == -signal.SIGKILL, done.stderr


def test_a_rollback_applied_by_a_killed_process_is_not_applied_again(root: Path,
                                                                     tmp_path: Path) -> None:
    work = _work(tmp_path)
    with Guard.open(root, "s1", cwd=work, settings=SETTINGS) as guard:
        guard.start("agent")                                   # cp-1: a.txt = v1
    (work / "a.txt").write_text("v2\n")
    _decision(root, "s1", "d-rollback", "rollback", checkpoint_id="cp-1")
    _killed_step(root, "s1")
    assert (work / "a.txt").read_text() == "v1\n"             # the rollback ran
    (work / "a.txt").write_text("v3: newer work\n")
    with Guard.open(root, "s1", cwd=work, settings=SETTINGS) as guard:
        verdict = guard.pre_call("bash", {"cmd": "ls"})
    assert verdict.action == "allow"
    assert (work / "a.txt").read_text() == "v3: newer work\n"
    assert _outcomes(root, "s1", "d-rollback") == ["decision_applied"]


def test_an_answer_applied_by_a_killed_process_takes_effect_once(root: Path) -> None:
    with Guard.open(root, "s1", settings=SETTINGS) as guard:
        guard.start("agent")
        guard.pause("operator wants a look")
        esc = guard.pending["escalation_id"]
    path = root / "sessions" / "s1" / "control.jsonl"
    path.write_text(json.dumps({"v": 1, "seq": 1, "ts": 1.0, "type": "decision", **sealed(
        root, "s1", {"decision_id": "d-approve", "escalation_id": esc, "action": "approve",
                     "operator": "ana"})}) + "\n")
    _killed_step(root, "s1")
    with Guard.open(root, "s1", settings=SETTINGS) as guard:
        assert guard.pending is None                          # the answer took effect
        verdict = guard.pre_call("bash", {"cmd": "ls"})
    assert verdict.action == "allow"
    assert _outcomes(root, "s1", "d-approve") == ["decision_applied"]


# -- item 6: a decision that fails is recorded, never raised into the agent ------------------

def test_a_rollback_that_cannot_remove_a_file_is_applied_with_a_partial_outcome(
        root: Path, tmp_path: Path) -> None:
    from supervisor.guard import Session

    work = _work(tmp_path)
    with Session("agent", root=root, session_id="s1", cwd=work, settings=SETTINGS) as session:
        (work / "stuck.py").write_text("created since\n")
        (work / "a.txt").write_text("v2\n")
        _decision(root, "s1", "d-rollback", "rollback", checkpoint_id="cp-1")
        with unremovable(work / "stuck.py"):
            verdict = session.before_call("bash", {"cmd": "ls"})  # no PermissionError
    assert not verdict.proceed and "stuck.py" in (verdict.message or "")
    applied = [e for e in _events(root, "s1") if e["type"] == "decision_applied"]
    assert len(applied) == 1 and "stuck.py" in applied[0]["outcome"]
    assert (work / "a.txt").read_text() == "v1\n"
    rollback = next(e for e in _events(root, "s1") if e["type"] == "rollback")
    assert rollback["failed"][0]["path"] == "stuck.py"


def test_any_failure_of_a_decision_is_recorded_as_ignored(root: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    work = _work(tmp_path)
    with Guard.open(root, "s1", cwd=work, settings=SETTINGS) as guard:
        guard.start("agent")
        guard.task_start("the task")

    def broken_restore(self: CheckpointStore, checkpoint_id: str) -> object:
        raise PermissionError(13, "Permission denied", "a.txt")

    def broken_task_end(self: SessionJournal, status: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(CheckpointStore, "restore", broken_restore)
    monkeypatch.setattr(SessionJournal, "task_end", broken_task_end)
    _decision(root, "s1", "d-rollback", "rollback", checkpoint_id="cp-1")
    _decision(root, "s1", "d-skip", "skip")
    _decision(root, "s1", "d-guide", "guidance", text="still delivered")
    with Guard.open(root, "s1", cwd=work, settings=SETTINGS) as guard:
        verdict = guard.pre_call("bash", {"cmd": "ls"})           # nothing raised
    assert "still delivered" in (verdict.message or "")
    events = _events(root, "s1")
    rolled = next(e for e in events if e.get("decision_id") == "d-rollback")
    assert rolled["type"] == "decision_applied" and "rollback failed" in rolled["outcome"]
    skipped = next(e for e in events if e.get("decision_id") == "d-skip")
    assert skipped["type"] == "decision_ignored" and "No space left" in skipped["reason"]
