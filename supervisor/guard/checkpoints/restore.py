"""Restoring a checkpoint: the work tree brought back from what it is now to what the
checkpoint holds, touching only what the checkpoint tracked (see the package docstring, and
docs/security.md): files changed or deleted since are written back in one git call (one per
path only when it fails, to tell which), files created since are removed, and what still
differs once it is done (written by someone else meanwhile) is reported, never hidden.
"""

from __future__ import annotations

import os
from pathlib import Path

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
        path = repo.inside(rel)
        if path is None or not (path.is_symlink() or path.is_file()):
            continue
        if _covered(rel, untracked):  # there, untracked, when the checkpoint was taken
            result.kept.append(rel)
            continue
        try:
            path.unlink()
        except OSError as exc:
            result.failed.append((rel, exc.strerror or str(exc)))
            continue
        result.removed.append(rel)
        _prune_empty_dirs(repo, path.parent)
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


def _prune_empty_dirs(repo: ShadowRepo, directory: Path) -> None:
    while directory != repo.work_tree and repo.work_tree in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def _covered(rel: str, untracked: set[str] | None) -> bool:
    """True when `rel` was not tracked by a checkpoint that left out `untracked` (an entry
    ending in `/` covers everything below it). Unknown (None) covers everything."""
    if untracked is None:
        return True
    if rel in untracked:
        return True
    parts = rel.split("/")
    return any("/".join(parts[:n]) + "/" in untracked for n in range(1, len(parts)))
