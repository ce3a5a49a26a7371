"""Rollback while the agent is still writing (issue 24, "not yet tried").

A real process writes in the work tree while a real restore runs: it creates, changes and
deletes files after the restore's safety checkpoint and before its `git checkout` (the moment
is fixed by a `git` on PATH that lets the writer go and waits for it, so the race is hit every
run, not by luck). What is promised: the restore is reported complete only when the work tree
is the checkpoint's when it ends; otherwise the operator (and the agent) are told exactly which
files differ."""

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from supervisor.guard.checkpoints import CheckpointStore
from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings
from supervisor.store.provenance import sealed
from tests.adversarial.test_adv_rollback import _project

WRITER = r"""
import os, sys, time
work, go, ack = sys.argv[1:4]
while not os.path.exists(go):
    time.sleep(0.01)
with open(os.path.join(work, "late.py"), "w") as f:
    f.write("written during the rollback\n")
with open(os.path.join(work, "config.py"), "w") as f:
    f.write("changed during the rollback\n")
os.unlink(os.path.join(work, "keep.py"))
open(ack, "w").close()
"""


@pytest.fixture
def writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The work tree, with a writer process started on it: it writes as soon as the restore's
    `git checkout` begins, which then waits until it is done."""
    work = _project(tmp_path / "work")
    (work / "config.py").write_text("config = 1\n")
    (work / "keep.py").write_text("keep = 1\n")
    real = shutil.which("git")
    assert real
    go, ack = tmp_path / "go", tmp_path / "ack"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(
        "#!/bin/sh\n"
        "for a in \"$@\"; do\n"
        "  if [ \"$a\" = checkout ]; then\n"
        f"    touch '{go}'; i=0\n"
        f"    while [ ! -e '{ack}' ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done\n"
        "  fi\n"
        "done\n"
        f"exec '{real}' \"$@\"\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(work), str(go), str(ack)])
    try:
        yield work
    finally:
        proc.kill()
        proc.wait()


def _agent_edits(work: Path) -> None:
    (work / "app.py").write_text("print('v2')\n")
    (work / "new.py").write_text("created by the agent\n")


def test_a_restore_is_never_reported_complete_over_files_written_while_it_ran(
        writer: Path, tmp_path: Path) -> None:
    work = writer
    store = CheckpointStore(tmp_path / "session" / "checkpoints.git", work)
    cp = store.create("start")
    _agent_edits(work)
    result = store.restore(cp.checkpoint_id)
    assert (work / "late.py").exists()                      # the writer did write meanwhile
    assert (work / "app.py").read_text() == "print('v1')\n"  # what was restored, is
    assert not (work / "new.py").exists()
    assert not result.complete
    assert result.differs == ["config.py", "keep.py", "late.py"]
    summary = result.summary()
    assert "STILL DIFFER" in summary
    assert all(name in summary for name in ("config.py", "keep.py", "late.py"))
    rollback = result.events(0)[1]
    assert rollback["differs"] == ["config.py", "keep.py", "late.py"]


def test_the_operator_and_the_agent_are_told_what_the_writer_changed(
        writer: Path, root: Path) -> None:
    work = writer
    with Guard.open(root, "s1", cwd=work, settings=GuardSettings(checkpoint_every=0)) as guard:
        guard.start("agent")
        cp = guard.checkpoint("start")
        _agent_edits(work)
        (root / "sessions" / "s1" / "control.jsonl").write_text(json.dumps(
            {"v": 1, "seq": 1, "ts": 1.0, "type": "decision", **sealed(
                root, "s1", {"decision_id": "d-rb", "escalation_id": None,
                             "action": "rollback", "checkpoint_id": cp.checkpoint_id,
                             "operator": "ana"})}) + "\n")
        verdict = guard.pre_call("bash", {"cmd": "ls"})
    assert verdict.action == "block"
    assert "written while the rollback ran" in (verdict.message or "")
    assert "late.py" in (verdict.message or "")
    events = [json.loads(x) for x in (root / "sessions" / "s1" / "events.jsonl").read_bytes()
              .splitlines()]
    applied = [e for e in events if e.get("decision_id") == "d-rb"]
    assert applied and "STILL DIFFER" in applied[-1]["outcome"], applied
    assert [e["differs"] for e in events if e["type"] == "rollback"] == [
        ["config.py", "keep.py", "late.py"]]
