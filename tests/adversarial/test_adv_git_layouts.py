"""Checkpoints and rollbacks in the work trees git makes besides the plain one (issue 24, "not
yet tried"): a linked worktree (`.git` is a file), a submodule, a sparse checkout and LFS
pointer files. A checkpoint is taken, a rollback restores the agent's files, the agent's own
repository (and the submodule's) is never written. Real git."""

import subprocess
from pathlib import Path

from supervisor.guard.checkpoints import CheckpointStore

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always",
       "-c", "init.defaultBranch=main"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    (path / "app.py").write_text("x = 1\n")
    (path / "model.bin").write_text("version https://git-lfs.github.com/spec/v1\n"
                                    "oid sha256:" + "a" * 64 + "\nsize 12345\n")
    (path / "docs").mkdir()
    (path / "docs" / "a.md").write_text("doc\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "first")
    return path


def _roundtrip(tmp_path: Path, tree: Path) -> None:
    before = git(tree, "status", "--porcelain")
    store = CheckpointStore(tmp_path / "cp.git", tree)
    first = store.create("start")
    (tree / "app.py").write_text("x = 2  # the agent's bad edit\n")
    (tree / "new.py").write_text("junk\n")
    result = store.restore(first.checkpoint_id)
    assert not result.failed, result.failed
    assert (tree / "app.py").read_text() == "x = 1\n" and not (tree / "new.py").exists()
    assert git(tree, "status", "--porcelain") == before  # the agent's repository sees no change


def test_a_linked_worktree(tmp_path: Path) -> None:
    main = _repo(tmp_path / "main")
    git(main, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "feature")
    assert (tmp_path / "wt" / ".git").is_file()
    _roundtrip(tmp_path, tmp_path / "wt")


def test_a_submodule_is_left_out_and_untouched(tmp_path: Path) -> None:
    lib = _repo(tmp_path / "lib")
    main = _repo(tmp_path / "main")
    git(main, "submodule", "add", "-q", str(lib), "vendor/lib")
    git(main, "commit", "-qm", "add lib")
    (main / "vendor" / "lib" / "app.py").write_text("changed inside the submodule\n")
    store = CheckpointStore(tmp_path / "cp.git", main)
    cp = store.create("start")
    assert "vendor/lib" in cp.nested
    (main / "app.py").write_text("x = 3\n")
    assert not store.restore(cp.checkpoint_id).failed
    assert (main / "app.py").read_text() == "x = 1\n"
    # the submodule's own change is the agent's: a rollback never touches a nested repository
    assert (main / "vendor" / "lib" / "app.py").read_text() == "changed inside the submodule\n"


def test_a_sparse_checkout_with_lfs_pointers(tmp_path: Path) -> None:
    main = _repo(tmp_path / "main")
    git(main, "sparse-checkout", "set", "--no-cone", "/app.py", "/model.bin")
    assert not (main / "docs").exists()
    _roundtrip(tmp_path, main)
    assert not (main / "docs").exists()  # a rollback brings back no file sparse-checkout hid
