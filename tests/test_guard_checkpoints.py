"""Checkpoints on real git: plain directories, repositories with uncommitted work, untracked,
deleted and binary files, ignored and oversized files, a hostile environment."""

import os
import subprocess
from pathlib import Path

import pytest

from supervisor.guard.checkpoints import CheckpointError, CheckpointStore

BINARY = bytes(range(256)) * 4


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def snapshot(tree: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(tree.rglob("*")):
        if ".git" in path.relative_to(tree).parts or not path.is_file():
            continue
        out[path.relative_to(tree).as_posix()] = path.read_bytes()
    return out


@pytest.fixture
def work(tmp_path: Path) -> Path:
    w = tmp_path / "work"
    (w / "src").mkdir(parents=True)
    (w / "src" / "app.py").write_text("print('v1')\n")
    (w / "notes.txt").write_text("notes v1\n")
    (w / "logo.bin").write_bytes(BINARY)
    return w


def store_for(tmp_path: Path, work: Path, **kw) -> CheckpointStore:
    return CheckpointStore(tmp_path / "session" / "checkpoints.git", work, **kw)


def mess_up(w: Path) -> None:
    (w / "src" / "app.py").write_text("print('v2 broken')\n")   # modified
    (w / "logo.bin").unlink()                                   # deleted binary
    (w / "notes.txt").unlink()                                  # deleted text
    (w / "src" / "extra").mkdir()
    (w / "src" / "extra" / "new.py").write_text("x = 1\n")      # created (untracked)
    (w / "blob.bin").write_bytes(b"\x00\xff" * 100)             # created binary


def test_plain_directory_roundtrip(tmp_path: Path, work: Path) -> None:
    store = store_for(tmp_path, work)
    before = snapshot(work)
    cp = store.create("start", at_seq=7)
    assert (cp.checkpoint_id, cp.files, cp.added, cp.at_seq) == ("cp-1", 3, 3, 7)
    mess_up(work)
    changes = store.diff("cp-1")
    assert changes.added == ["blob.bin", "src/extra/new.py"]
    assert changes.modified == ["src/app.py"]
    assert sorted(changes.deleted) == ["logo.bin", "notes.txt"]

    result = store.restore("cp-1")
    assert snapshot(work) == before
    assert not (work / "src" / "extra").exists()  # emptied directories go too
    assert sorted(result.restored) == ["logo.bin", "notes.txt", "src/app.py"]
    assert result.removed == ["blob.bin", "src/extra/new.py"]
    assert result.safety.checkpoint_id == "cp-2"
    assert "src/app.py" in result.summary()
    # The safety checkpoint holds the state before the restore: restoring it undoes it.
    store.restore(result.safety.checkpoint_id)
    assert (work / "src" / "app.py").read_text() == "print('v2 broken')\n"
    assert (work / "blob.bin").read_bytes() == b"\x00\xff" * 100
    assert not (work / "logo.bin").exists()
    assert not store.diff(result.safety.checkpoint_id)


def test_repository_with_uncommitted_work_is_not_touched(tmp_path: Path, work: Path) -> None:
    git(work, "init", "-q")
    git(work, "add", "src/app.py", "notes.txt")
    git(work, "commit", "-qm", "base")
    (work / "src" / "app.py").write_text("print('uncommitted')\n")  # uncommitted change
    (work / "scratch.txt").write_text("untracked\n")
    git(work, "add", "scratch.txt")                                  # staged, not committed
    head = git(work, "rev-parse", "HEAD")
    index_before = (work / ".git" / "index").read_bytes()
    status_before = git(work, "status", "--porcelain")
    before = snapshot(work)

    store = store_for(tmp_path, work)
    store.create("start")
    mess_up(work)
    (work / "scratch.txt").write_text("changed\n")
    store.restore("cp-1")

    assert snapshot(work) == before
    assert git(work, "rev-parse", "HEAD") == head
    assert (work / ".git" / "index").read_bytes() == index_before
    assert git(work, "status", "--porcelain") == status_before
    assert git(work, "stash", "list") == ""
    listed = git(tmp_path, f"--git-dir={tmp_path / 'session' / 'checkpoints.git'}",
                 "ls-tree", "-r", "--name-only", "refs/checkpoints/cp-1")
    assert ".git" not in {p.split("/")[0] for p in listed.split()}


def test_ignored_cache_and_oversized_files_are_left_alone(tmp_path: Path, work: Path) -> None:
    (work / ".gitignore").write_text("secret.env\n*.log\n")
    (work / "secret.env").write_text("TOKEN=1\n")
    (work / "node_modules" / "pkg").mkdir(parents=True)
    (work / "node_modules" / "pkg" / "index.js").write_text("js\n")
    (work / "__pycache__").mkdir()
    (work / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\x00pyc")
    (work / "huge.dat").write_bytes(b"x" * 2048)
    store = store_for(tmp_path, work, max_file_bytes=1024)
    cp = store.create("start")
    assert cp.files == 4  # app.py, notes.txt, logo.bin (exactly 1 KiB) and .gitignore
    (work / "secret.env").write_text("TOKEN=2\n")
    (work / "run.log").write_text("log\n")
    (work / "huge.dat").write_bytes(b"y" * 4096)
    (work / "node_modules" / "pkg" / "index.js").write_text("js2\n")
    (work / "notes.txt").write_text("edited\n")
    changes = store.diff("cp-1")
    assert changes.modified == ["notes.txt"] and not changes.added and not changes.deleted
    store.restore("cp-1")
    assert (work / "notes.txt").read_text() == "notes v1\n"
    assert (work / "secret.env").read_text() == "TOKEN=2\n"
    assert (work / "run.log").exists()
    assert (work / "huge.dat").read_bytes() == b"y" * 4096
    assert (work / "node_modules" / "pkg" / "index.js").read_text() == "js2\n"


def test_file_growing_past_the_limit_is_not_restored_over(tmp_path: Path, work: Path) -> None:
    store = store_for(tmp_path, work, max_file_bytes=100)
    store.create("small")
    assert "notes.txt" in _tree(tmp_path, "cp-1")
    (work / "notes.txt").write_bytes(b"z" * 500)  # now oversized: leaves the checkpoints
    store.create("grown")
    assert "notes.txt" not in _tree(tmp_path, "cp-2")
    result = store.restore("cp-1")
    assert result.kept == ["notes.txt"]
    assert (work / "notes.txt").read_bytes() == b"z" * 500


def test_agent_repository_info_exclude_and_file_becoming_ignored(
    tmp_path: Path, work: Path
) -> None:
    git(work, "init", "-q")
    (work / ".git" / "info").mkdir(exist_ok=True)
    (work / ".git" / "info" / "exclude").write_text("private/\n")
    (work / "private").mkdir()
    (work / "private" / "key").write_text("k\n")
    store = store_for(tmp_path, work)
    store.create("one")
    assert not any(p.startswith("private/") for p in _tree(tmp_path, "cp-1"))
    (work / ".gitignore").write_text("notes.txt\n")
    store.create("two")
    assert "notes.txt" not in _tree(tmp_path, "cp-2")


def test_git_environment_is_ignored(tmp_path: Path, work: Path, monkeypatch) -> None:
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    git(decoy, "init", "-q")
    monkeypatch.setenv("GIT_DIR", str(decoy / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(decoy))
    monkeypatch.setenv("GIT_INDEX_FILE", str(decoy / "bogus-index"))
    store = store_for(tmp_path, work)
    store.create("start")
    (work / "notes.txt").write_text("changed\n")
    store.restore("cp-1")
    assert (work / "notes.txt").read_text() == "notes v1\n"
    assert not (decoy / "bogus-index").exists()
    assert not list((decoy / ".git" / "refs" / "heads").iterdir())


def test_store_root_inside_the_work_tree_is_excluded(tmp_path: Path, work: Path) -> None:
    store = CheckpointStore(work / ".supervisor" / "sessions" / "s" / "checkpoints.git", work,
                            exclude_paths=[work / ".supervisor"])
    store.create("start")
    (work / ".supervisor" / "sessions" / "s" / "events.jsonl").write_text("{}\n")
    assert not store.diff("cp-1")
    store.restore("cp-1")
    assert (work / ".supervisor" / "sessions" / "s" / "events.jsonl").exists()


def test_symlink_out_of_the_tree_is_never_followed(tmp_path: Path, work: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    store = store_for(tmp_path, work)
    store.create("start")
    (work / "link").symlink_to(outside)
    result = store.restore("cp-1")
    assert result.removed == ["link"]
    assert (outside / "keep.txt").read_text() == "keep\n"


def test_list_get_and_errors(tmp_path: Path, work: Path) -> None:
    store = store_for(tmp_path, work)
    assert store.list() == [] and store.latest() is None
    store.create("a")
    (work / "notes.txt").write_text("n2\n")
    (work / "new.txt").write_text("new\n")
    store.create("b\nwith newline")
    cps = store.list()
    assert [c.checkpoint_id for c in cps] == ["cp-1", "cp-2"]
    assert (cps[1].label, cps[1].added, cps[1].modified, cps[1].files) == (
        "b with newline", 1, 1, 4)
    assert store.get("2") == cps[1] == store.latest()
    with pytest.raises(CheckpointError, match="no checkpoint 'cp-9'"):
        store.get("cp-9")
    with pytest.raises(CheckpointError, match="not a directory"):
        CheckpointStore(tmp_path / "x.git", tmp_path / "missing").create("x")


def _tree(tmp_path: Path, cp: str) -> list[str]:
    out = git(tmp_path, f"--git-dir={tmp_path / 'session' / 'checkpoints.git'}",
              "ls-tree", "-r", "--name-only", f"refs/checkpoints/{cp}")
    return out.split()


def test_stale_git_locks_of_a_killed_process_are_cleared(tmp_path: Path, work: Path) -> None:
    store = store_for(tmp_path, work)
    store.create("start")
    git_dir = tmp_path / "session" / "checkpoints.git"
    (git_dir / "index.lock").write_text("")
    (git_dir / "refs" / "checkpoints" / "cp-2.lock").write_text("")
    (work / "notes.txt").write_text("changed\n")
    assert store.create("after a crash").checkpoint_id == "cp-2"
    assert not (git_dir / "index.lock").exists()


@pytest.mark.parametrize("named", ["directly", "through an include"])
def test_users_global_excludes_file_is_honoured(tmp_path: Path, work: Path, monkeypatch,
                                                named: str) -> None:
    """Git is asked for the user's excludes file only when a global config could name it:
    through an `[include]` too (the file that names it is then not the one read)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "my-ignore").write_text("*.secret\n")
    core = f"[core]\n\texcludesFile = {home / 'my-ignore'}\n"
    if named == "directly":
        (home / ".gitconfig").write_text(core)
    else:
        (home / "more.conf").write_text(core)
        (home / ".gitconfig").write_text(f"[include]\n\tpath = {home / 'more.conf'}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    (work / "token.secret").write_text("s3cr3t\n")
    store_for(tmp_path, work).create("start")
    tree = _tree(tmp_path, "cp-1")
    assert "token.secret" not in tree and "notes.txt" in tree


def test_default_global_ignore_is_honoured_without_a_global_config(
        tmp_path: Path, work: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    (home / "xdg" / "git").mkdir(parents=True)
    (home / "xdg" / "git" / "ignore").write_text("*.secret\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    (work / "token.secret").write_text("s3cr3t\n")
    store_for(tmp_path, work).create("start")
    tree = _tree(tmp_path, "cp-1")
    assert "token.secret" not in tree and "notes.txt" in tree


def test_first_checkpoint_is_one_pack_and_later_ones_loose(tmp_path: Path, work: Path) -> None:
    """The repository is laid out without `git init`; the first checkpoint writes the whole
    tree into one pack (its objects are not one file each), later ones the files they change
    loose (no pack a checkpoint: every git process would open one more); git reads it all,
    and the line counts of a later checkpoint are real (the pack setting is `git add`'s
    alone: in the configuration, `diff` would take every file for a binary one)."""
    for i in range(30):
        (work / "src" / f"m{i}.py").write_text(f"x = {i}\n")
    store = store_for(tmp_path, work)
    first = store.create("start")
    git_dir = tmp_path / "session" / "checkpoints.git"
    packs = sorted((git_dir / "objects" / "pack").glob("*.pack"))
    assert len(packs) == 1 and not (git_dir / "hooks").exists()
    blobs = git(work, f"--git-dir={git_dir}", "ls-tree", "-r", "--object-only", first.commit)
    for blob in blobs.split():  # every file's content is in the pack, none loose
        assert not (git_dir / "objects" / blob[:2] / blob[2:]).exists()
    (work / "src" / "app.py").write_text("print('v2')\nprint('more')\n")
    second = store.create("edit")
    assert (second.modified, second.insertions, second.deletions) == (1, 2, 1)
    assert sorted((git_dir / "objects" / "pack").glob("*.pack")) == packs
    assert git(work, f"--git-dir={git_dir}", "rev-parse", "--is-bare-repository") == "false\n"
    git(work, f"--git-dir={git_dir}", "fsck", "--strict", "--no-dangling")
    store.restore("cp-1")
    assert (work / "src" / "app.py").read_text() == "print('v1')\n"
