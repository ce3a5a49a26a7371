"""Restoring a checkpoint: the work tree brought back from what it is now to what the
checkpoint holds, touching only what the checkpoint tracked (see the package docstring, and
docs/security.md): files changed or deleted since are written back in one git call (one per
path only when it fails, to tell which), files created since are removed, and what still
differs once it is done (written by someone else meanwhile) is reported, never hidden.
"""

from __future__ import annotations

import os
import stat

from supervisor.guard.checkpoints import snapshot
from supervisor.guard.checkpoints.errors import CheckpointError, GitTimeout
from supervisor.guard.checkpoints.records import CheckpointCommit, RestoreResult, meta_of
from supervisor.guard.checkpoints.repo import ShadowRepo


def restore(repo: ShadowRepo, target: CheckpointCommit, safety: CheckpointCommit,
            now: str) -> RestoreResult:
    """Bring the work tree from `now` (a tree or commit of it) back to `target`."""
    untracked = _untracked_of(repo, target.commit)
    changes = snapshot.diff_trees(repo, target.commit, now)
    result = RestoreResult(checkpoint=target, safety=safety)
    for rel in changes.added:
        if _covered(rel, untracked):  # there, untracked, when the checkpoint was taken
            if _removable(repo, rel):
                result.kept.append(rel)
            continue
        with repo.opened_parent(rel) as parent:  # never through a link: see `opened_parent`
            if parent is None or not _removable(repo, rel, parent):
                continue
            fd, name = parent
            try:
                os.unlink(name, dir_fd=fd)
            except OSError as exc:
                result.failed.append((rel, exc.strerror or str(exc)))
                continue
        result.removed.append(rel)
        _prune_empty_dirs(repo, rel)
    bring_back = []
    for rel in changes.deleted:
        # Deleted since: absent from the safety checkpoint. If something is there now,
        # it is an ignored or oversized file: leave it alone.
        path = repo.inside(rel)
        if path is None:
            continue
        if os.path.lexists(path):
            result.kept.append(rel)
        else:
            bring_back.append(rel)
    bring_back += [rel for rel in changes.modified if repo.inside(rel) is not None]
    restored, failed = _checkout(repo, target.commit, bring_back)
    result.restored.extend(sorted(restored))
    result.failed.extend(failed)
    result.removed.sort()
    result.kept.sort()
    result.differs = _still_different(repo, target, untracked, result)
    return result


def _still_different(repo: ShadowRepo, target: CheckpointCommit, untracked: set[str] | None,
                     result: RestoreResult) -> list[str]:
    """What differs from `target` once the restore is done, apart from what it reported
    (failed, kept): files the agent wrote while it ran. Checked on the work tree itself,
    so a restore is never reported complete over a tree that is not the checkpoint's."""
    known = {p for p, _ in result.failed} | set(result.kept)
    after = snapshot.diff_trees(repo, target.commit, snapshot.snapshot_tree(repo))
    found = [rel for rel in after.added if not _covered(rel, untracked)]
    found += after.modified
    found += [rel for rel in after.deleted
              if (path := repo.inside(rel)) is not None and not os.path.lexists(path)]
    return sorted(rel for rel in found if rel not in known)


def _untracked_of(repo: ShadowRepo, commit: str) -> set[str] | None:
    """What the checkpoint did not track (None: not all of it is known, so nothing created
    since may be deleted). Checkpoints of older versions recorded nothing: for them the set
    is empty (the former behaviour)."""
    body = repo.git("cat-file", "commit", commit).split("\n\n", 1)[-1]
    meta = meta_of(body)
    if "untracked" not in meta:
        return set()
    if not meta.get("untracked_complete", True):
        return None
    return {str(p) for p in meta.get("untracked") or [] if isinstance(p, str)}


def _checkout(repo: ShadowRepo, commit: str, paths: list[str]
              ) -> tuple[list[str], list[tuple[str, str]]]:
    """Write `paths` back from `commit`: (restored, [(path, why)] of those that failed).
    One git call; only when it fails, one per path, to tell which."""
    if not paths:
        return [], []
    try:
        _checkout_paths(repo, commit, paths)
        return paths, []
    except GitTimeout:
        raise  # no time left to try the paths one by one: the restore is interrupted
    except CheckpointError:
        pass
    restored, failed = [], []
    for rel in paths:
        try:
            _checkout_paths(repo, commit, [rel])
            restored.append(rel)
        except CheckpointError as exc:
            failed.append((rel, str(exc).removeprefix("git checkout failed: ")))
    return restored, failed


def _checkout_paths(repo: ShadowRepo, commit: str, paths: list[str]) -> None:
    repo.git("checkout", commit, "--pathspec-from-file=-", "--pathspec-file-nul",
             input="".join(f":(literal){rel}\0" for rel in paths))


def _removable(repo: ShadowRepo, rel: str, parent: tuple[int, str] | None = None) -> bool:
    """Whether `rel` is a file or a link (what a restore removes), looked at through its
    directory opened without following links (`parent`, else opened here)."""
    if parent is None:
        with repo.opened_parent(rel) as opened:
            return opened is not None and _removable(repo, rel, opened)
    fd, name = parent
    try:
        mode = os.lstat(name, dir_fd=fd).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) or stat.S_ISLNK(mode)


def _prune_empty_dirs(repo: ShadowRepo, rel: str) -> None:
    """Remove the directories of `rel` left empty, deepest first, each through its parent
    opened without following links (`opened_parent`)."""
    parts = rel.split("/")[:-1]
    while parts:
        with repo.opened_parent("/".join(parts)) as parent:
            if parent is None:
                return
            try:
                os.rmdir(parent[1], dir_fd=parent[0])
            except OSError:
                return
        parts.pop()


def _covered(rel: str, untracked: set[str] | None) -> bool:
    """True when `rel` was not tracked by a checkpoint that left out `untracked` (an entry
    ending in `/` covers everything below it). Unknown (None) covers everything."""
    if untracked is None:
        return True
    if rel in untracked:
        return True
    parts = rel.split("/")
    return any("/".join(parts[:n]) + "/" in untracked for n in range(1, len(parts)))
