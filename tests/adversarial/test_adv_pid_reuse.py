"""`supervisor stop` never kills a process that reused the agent's pid (issue 41, medium).

A worktree run's record outlives its agent. When the pid was reused by an unrelated process,
`worktree list` said `running` and `stop` SIGTERMed, then SIGKILLed, that process's group. Now
a run's process is identified by its pid *and* its start time (Linux `/proc/<pid>/stat`),
recorded at launch; a record without one (an older record, a system without `/proc`) believes
tmux (the run's pane must still run that pid). Real processes, real tmux."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from supervisor.host import control, records
from supervisor.store.liveness import pid_alive, process_start
from tests.conftest import run_cli

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def bystander():
    """An unrelated process, in a process group of its own, that took the agent's pid."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                            start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


def _record(root: Path, pid: int, started: int | None, worktree: bool = True) -> None:
    data = {"session": "w1", "agent": "cmd", "command": ["sh"], "cwd": str(root),
            "socket": "sv-test-pid-reuse-none", "tmux_session": "sv-w1", "pid": pid,
            "created": 1.0, "worktree": {"repo": str(root), "path": str(root / "wt"),
                                         "branch": "run/w1", "base": "0" * 40}
            if worktree else None}
    if started is not None:
        data["started"] = started
    (root / "host").mkdir(parents=True, mode=0o700)
    (root / "host" / "w1.json").write_text(json.dumps(data))
    (root / "host" / "w1.json").chmod(0o600)


@pytest.mark.slow
@pytest.mark.parametrize("recorded", ["other start time", "older record"])
def test_stop_spares_a_process_that_reused_the_pid(tmp_path: Path, bystander: subprocess.Popen,
                                                   recorded: str) -> None:
    root = tmp_path / "store"
    root.mkdir(mode=0o700)
    start = process_start(bystander.pid)
    if recorded == "other start time":
        assert start is not None
        _record(root, bystander.pid, start - 100)
    else:
        _record(root, bystander.pid, None)
    record = records.load(root, "w1")
    assert not record.alive()
    listed = run_cli("worktree", "list", "--root", str(root))
    assert listed.stdout.split()[:2] == ["w1", "stopped"], listed.stdout + listed.stderr
    assert control.stop(root, "w1", "ana").startswith("cleaned up w1")
    assert pid_alive(bystander.pid) and bystander.poll() is None


def test_a_live_run_is_still_alive(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir(mode=0o700)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                            start_new_session=True)
    try:
        _record(root, proc.pid, process_start(proc.pid), worktree=False)
        assert records.load(root, "w1").alive()
        assert control.stop(root, "w1", "ana") == "stopped w1"
        assert proc.wait(timeout=10) is not None
    finally:
        proc.kill()
        proc.wait()
