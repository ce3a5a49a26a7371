"""Taking a checkpoint: the work tree staged into a tree (`snapshot.stage`), committed after
the previous checkpoint with its facts in the message (`records.commit_message`), and named by
two refs (`refs/checkpoints/cp-N` and the chain's head).

A checkpoint that fails leaves nothing behind: its objects are written in a quarantine
directory and moved into the repository only once the commit is made, before any ref names
it; on any failure they are removed and the index is put back.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager

from supervisor.guard.checkpoints import snapshot
from supervisor.guard.checkpoints.records import (
    CheckpointCommit,
    commit_message,
    meta_of,
    number,
    one_line,
)
from supervisor.guard.checkpoints.repo import EMPTY_TREE, HEAD_REF, REF_PREFIX, ShadowRepo


def create(repo: ShadowRepo, label: str, at_seq: int | None) -> CheckpointCommit:
    """Take a checkpoint of the work tree now (under the caller's lock): staged, committed
    after the previous one, its objects quarantined until it is complete."""
    repo.ensure()
    with quarantine(repo):
        return _commit(repo, label, at_seq)


def _commit(repo: ShadowRepo, label: str, at_seq: int | None) -> CheckpointCommit:
    """Stage, commit after the chain's head, adopt the objects, then point the refs at it."""
    staged = snapshot.stage(repo)
    tree = staged.tree
    parent, previous, n, since = _chain(repo)
    # lines are counted against the previous checkpoint only: against an empty tree
    # (the first checkpoint) it would read every file of the work tree once more
    changes = snapshot.diff_trees(repo, parent or EMPTY_TREE, tree, lines=parent is not None)
    cp_id = f"cp-{n}"
    now = time.time()
    files = previous + len(changes.added) - len(changes.deleted)
    added, modified, deleted = len(changes.added), len(changes.modified), len(changes.deleted)
    meta = {
        "id": cp_id, "ts": now, "files": files,
        "added": added, "modified": modified,
        "deleted": deleted, "at_seq": at_seq, "since": since,
        "insertions": changes.insertions, "deletions": changes.deletions,
        "work_tree": str(repo.work_tree), "nested": staged.nested,
        "untracked": staged.untracked, "untracked_complete": not staged.truncated,
    }
    message = commit_message(label, meta)
    args = ["commit-tree", tree, "-F", "-"]
    if parent:
        args[2:2] = ["-p", parent]
    commit = repo.git(*args, input=message).strip()
    _adopt(repo)
    repo.git("update-ref", "--stdin",
             input=f"update {HEAD_REF} {commit}\nupdate {REF_PREFIX + cp_id} {commit}\n")
    return CheckpointCommit(
        cp_id, one_line(label), commit, now, files, added,
        modified, deleted, at_seq, str(repo.work_tree),
        tuple(staged.nested), since, changes.insertions, changes.deletions,
        tuple(changes.paths()),
    )


def _chain(repo: ShadowRepo) -> tuple[str | None, int, int, str | None]:
    """The latest checkpoint commit (None at first), its file count, the next number and
    the latest checkpoint's id, in one git call (none while the repository has no ref at
    all, as at a session's first checkpoint)."""
    if not _has_refs(repo):
        return None, 0, 1, None
    out = repo.git(
        "for-each-ref", "--format=%(refname)%00%(objectname)%00%(contents)%1e",
        HEAD_REF, REF_PREFIX,
    )
    head, files, highest, head_id = None, 0, 0, None
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        ref, commit, body = record.split("\0", 2)
        if ref == HEAD_REF:
            meta = meta_of(body)
            head, files, head_id = commit, int(meta.get("files", 0)), meta.get("id")
        else:
            highest = max(highest, number(ref.rsplit("/", 1)[-1]))
    return head, files, highest + 1, head_id


def _has_refs(repo: ShadowRepo) -> bool:
    """Whether any checkpoint ref may exist: a loose ref file, or refs packed by hand."""
    if (repo.git_dir / "packed-refs").exists() or (repo.git_dir / HEAD_REF).exists():
        return True
    try:
        with os.scandir(repo.git_dir / REF_PREFIX) as refs:
            return any(True for _ in refs)
    except FileNotFoundError:
        return False


@contextmanager
def quarantine(repo: ShadowRepo) -> Iterator[None]:
    """New objects go to a directory of their own (the repository's objects still read
    as alternates) and the index is copied first: on success the objects are moved in, on
    any failure they are removed and the index put back, so nothing partial stays."""
    objects = repo.git_dir / "objects"
    incoming = repo.git_dir / f"incoming-{os.getpid()}-{time.monotonic_ns()}"
    index = repo.git_dir / "index"
    saved = repo.git_dir / f"index.saved.{os.getpid()}"
    incoming.mkdir(mode=0o700)
    if index.exists():
        shutil.copy2(index, saved)
    repo.extra_env = {"GIT_OBJECT_DIRECTORY": str(incoming),
                      "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(objects)}
    done = False
    try:
        yield
        done = True
    finally:
        repo.extra_env = {}
        if not done:
            if saved.exists():
                os.replace(saved, index)
            else:
                index.unlink(missing_ok=True)
        saved.unlink(missing_ok=True)
        shutil.rmtree(incoming, ignore_errors=True)


def _adopt(repo: ShadowRepo) -> None:
    """Move the quarantined objects into the repository (before any ref names them). A
    fan-out folder the repository does not have yet (or has empty) moves whole, in one
    rename: a first checkpoint's 1,500 objects were 1,500 renames, a sixth of its time. Into
    a folder that has objects, object by object, keeping an object already there."""
    incoming = repo.extra_env["GIT_OBJECT_DIRECTORY"]
    objects = str(repo.git_dir / "objects")
    with os.scandir(incoming) as folders:
        for folder in folders:
            if not folder.is_dir(follow_symlinks=False):
                continue
            target = os.path.join(objects, folder.name)
            try:
                os.rename(folder.path, target)  # fails when the target holds objects
                continue
            except OSError:
                os.makedirs(target, 0o700, exist_ok=True)
            with os.scandir(folder.path) as items:
                for item in items:
                    there = os.path.join(target, item.name)
                    if not os.path.exists(there):
                        os.replace(item.path, there)
    repo.extra_env = {}
