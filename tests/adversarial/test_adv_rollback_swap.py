"""A rollback never removes a file outside the work tree, whatever the agent renames while it
runs (attack round 4).

A restore removes the files created since the checkpoint. It checked each path's directory
(`ShadowRepo.inside`: no symbolic link leading out) and then removed the path by name, so the
name was looked up again: a process of the agent that swaps a directory of the tree for a link
to elsewhere and back, over and over, had some of those removals land outside the tree (1 to 5
of the operator's files, in about half the runs of this test before the mend: a race, so it
does not fail every time without it; with it, no run can). Now each removal goes through
the directory opened one name at a time without following a link. Real git, a real process
racing the restore; it flips from the moment the restore removes its first file until its
`git checkout` starts (a `git` on PATH says when), so the safety checkpoint before and the check
after see a quiet tree.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from supervisor.guard.checkpoints import CheckpointStore
from tests.adversarial.test_adv_rollback import _project

FILES = 5000
FLIPPER = r"""
import os, sys
canary, sub, outside, stop, ack = sys.argv[1:6]
real = sub + ".real"
while os.path.exists(canary):  # the restore removes a.txt first, then sub/...
    pass
while not os.path.exists(stop):
    os.rename(sub, real)
    os.symlink(outside, sub)
    os.unlink(sub)
    os.rename(real, sub)
open(ack, "w").close()
"""


def test_a_directory_swapped_for_a_link_while_a_rollback_runs_leads_nowhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = _project(tmp_path / "work")
    outside = tmp_path / "outside"  # the operator's files, beside the tree
    outside.mkdir()
    names = [f"f{i:04}.txt" for i in range(FILES)]
    for name in names:
        (outside / name).write_text("the operator's file\n")
    stop, ack = tmp_path / "stop", tmp_path / "ack"
    real = shutil.which("git")
    assert real
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(
        "#!/bin/sh\n"
        "for a in \"$@\"; do\n"
        "  if [ \"$a\" = checkout ]; then\n"
        f"    touch '{stop}'; i=0\n"
        f"    while [ ! -e '{ack}' ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done\n"
        "  fi\n"
        "done\n"
        f"exec '{real}' \"$@\"\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path(real).parent}")
    store = CheckpointStore(tmp_path / "session" / "checkpoints.git", work)
    before = store.create("before")
    (work / "app.py").write_text("print('v2')\n")  # so the restore runs `git checkout`
    (work / "a.txt").write_text("created since: removed first\n")
    sub = work / "sub"
    sub.mkdir()
    for name in names:
        (sub / name).write_text("created since\n")

    flipper = subprocess.Popen([sys.executable, "-c", FLIPPER, str(work / "a.txt"), str(sub),
                                str(outside), str(stop), str(ack)])
    try:
        result = store.restore(before.checkpoint_id)
    finally:
        stop.touch()
        flipper.wait(30)
    gone = [name for name in names if not (outside / name).exists()]
    assert gone == [], f"{len(gone)} of the operator's files outside the tree were removed"
    assert "a.txt" in result.removed
    assert all(rel.startswith("sub/") for rel in result.differs)  # told, not hidden


def test_a_directory_swapped_for_a_link_as_git_writes_files_back_leads_nowhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The files a restore writes back are written by `git checkout`, given their paths after
    they were checked: the agent swaps their directory for a link to elsewhere just as git
    starts (a `git` on PATH does it, every run). Held: git writes no file through a link (it
    makes the directory again), so the operator's file outside is untouched and the agent's
    moved directory is reported as differing, not hidden."""
    work = _project(tmp_path / "work")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("the operator's file\n")
    sub = work / "sub"
    sub.mkdir()
    (sub / "keep.txt").write_text("checkpointed\n")
    (sub / "gone.txt").write_text("checkpointed, deleted since\n")
    real = shutil.which("git")
    assert real
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(
        "#!/bin/sh\n"
        "for a in \"$@\"; do\n"
        "  if [ \"$a\" = checkout ]; then\n"
        f"    mv '{sub}' '{sub}.moved'; ln -s '{outside}' '{sub}'\n"
        "  fi\n"
        "done\n"
        f"exec '{real}' \"$@\"\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path(real).parent}")
    store = CheckpointStore(tmp_path / "session" / "checkpoints.git", work)
    before = store.create("before")
    (sub / "keep.txt").write_text("changed since\n")
    (sub / "gone.txt").unlink()
    result = store.restore(before.checkpoint_id)
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "the operator's file\n"
    assert not sub.is_symlink() and (sub / "keep.txt").read_text() == "checkpointed\n"
    assert result.differs == ["sub.moved/keep.txt"]
