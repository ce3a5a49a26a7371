"""What a checkpoint is, as the rest of the supervisor sees it: the checkpoint itself
(`CheckpointCommit`), the files that differ from one (`TreeChanges`), what a restore did
(`RestoreResult`), and how a checkpoint's facts are written into its commit message and read
back (one JSON line after the label), so listing them needs one git call and no other file.

Plain values: no git runs here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from supervisor.protocol.names import CHANGED_FILES_KEPT


def checkpoint_changes(cp: CheckpointCommit) -> dict[str, object]:
    """The `changed_files` and `diffstat` fields of a `checkpoint` event: what changed since
    the previous checkpoint, so a reader needs no git to list it (see docs/protocol.md)."""
    return {"changed_files": list(cp.changed_paths[:CHANGED_FILES_KEPT]),
            "diffstat": cp.diffstat()}


@dataclass(frozen=True, slots=True)
class CheckpointCommit:
    """One checkpoint: its id, label, commit, time, how many files it holds and changed."""

    checkpoint_id: str
    label: str
    commit: str
    ts: float
    files: int
    """Files in the checkpoint."""
    added: int = 0
    modified: int = 0
    deleted: int = 0
    """Changes since the previous checkpoint."""
    at_seq: int | None = None
    """The session event `seq` the checkpoint was taken at, when the guard knew it."""
    work_tree: str | None = None
    """The directory it is a checkpoint of (None for checkpoints of older versions)."""
    nested: tuple[str, ...] = ()
    """Nested git repositories left out of it (their own history keeps them)."""
    since: str | None = None
    """The previous checkpoint, which the changes are counted from (None: the first one,
    counted from an empty work tree)."""
    insertions: int | None = None
    deletions: int | None = None
    """Lines added and removed since the previous checkpoint (None: not counted, for the
    first checkpoint)."""
    changed_paths: tuple[str, ...] = ()
    """The paths changed since the previous checkpoint, sorted (on a checkpoint just taken;
    `list()` does not read them back)."""

    @property
    def changed(self) -> int:
        return self.added + self.modified + self.deleted

    def diffstat(self) -> dict[str, object]:
        """The `diffstat` of the `checkpoint` event: what changed since the previous one."""
        return {"since": self.since, "files": self.changed, "added": self.added,
                "modified": self.modified, "deleted": self.deleted,
                "insertions": self.insertions, "deletions": self.deletions}


@dataclass(slots=True)
class TreeChanges:
    """Files of the work tree relative to a checkpoint, as paths relative to the work tree."""

    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    insertions: int | None = None
    deletions: int | None = None
    """Lines added and removed (binary files count none), when asked for."""

    def __bool__(self) -> bool:
        return bool(self.added or self.modified or self.deleted)

    def paths(self) -> list[str]:
        """Every changed path, sorted."""
        return sorted(self.added + self.modified + self.deleted)

    @property
    def count(self) -> int:
        return len(self.added) + len(self.modified) + len(self.deleted)


@dataclass(slots=True)
class RestoreResult:
    """What a restore did. `restored`: files brought back (modified or deleted since);
    `removed`: files created since, deleted; `kept`: paths left alone because the checkpoint did
    not track them (ignored, oversized or unreadable then, or in a nested repository), or the
    work tree now holds an ignored or oversized file there; `failed`: (path, why) of files it
    could not write or remove (the rest of the restore went on)."""

    checkpoint: CheckpointCommit
    safety: CheckpointCommit
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    differs: list[str] = field(default_factory=list)
    """Paths that still differ from the checkpoint when the restore ended, though it did not
    fail on them: written (created, changed, deleted) by someone else while it ran."""

    @property
    def changed_files(self) -> list[str]:
        return sorted(self.restored + self.removed)

    @property
    def complete(self) -> bool:
        """True when the work tree was the checkpoint's when the restore ended (apart from
        what it was told to keep)."""
        return not self.failed and not self.differs

    def events(self, at_seq: int, **extra: object) -> list[dict[str, object]]:
        """The `checkpoint` (of the safety checkpoint) and `rollback` events that record this
        restore, with `extra` fields on both (who did it)."""
        safety = self.safety
        rollback: dict[str, object] = {
            "type": "rollback", "checkpoint_id": self.checkpoint.checkpoint_id,
            "restored_files": len(self.restored) + len(self.removed),
            "safety_checkpoint_id": safety.checkpoint_id, "files": self.changed_files[:100],
            **extra,
        }
        if self.failed:
            rollback["failed"] = [{"path": p, "reason": why} for p, why in self.failed[:100]]
        if self.differs:
            rollback["differs"] = self.differs[:100]
        checkpoint: dict[str, object] = {
            "type": "checkpoint", "checkpoint_id": safety.checkpoint_id, "label": safety.label,
            "commit": safety.commit, "at_seq": at_seq, "files": safety.files,
            "changed": safety.changed, **checkpoint_changes(safety), **extra}
        if safety.nested:
            checkpoint["nested"] = list(safety.nested)
        return [checkpoint, rollback]

    def summary(self, limit: int = 10) -> str:
        """One readable sentence naming the files (at most `limit` of them)."""
        parts = [f"restored {len(self.restored)} file(s)"]
        if self.removed:
            parts.append(f"removed {len(self.removed)} created since")
        if self.kept:
            parts.append(f"kept {len(self.kept)} not tracked by the checkpoint")
        if self.failed:
            parts.append(f"FAILED on {len(self.failed)}")
        if self.differs:
            parts.append(f"{len(self.differs)} written during it STILL DIFFER")
        names = self.changed_files
        text = ", ".join(parts) + f" (checkpoint {self.checkpoint.checkpoint_id}"
        text += f", safety checkpoint {self.safety.checkpoint_id})"
        if names:
            shown = ", ".join(names[:limit]) + (" ..." if len(names) > limit else "")
            text += f": {shown}"
        if self.failed:
            shown = "; ".join(f"{path} ({why})" for path, why in self.failed[:limit])
            more = " ..." if len(self.failed) > limit else ""
            text += f"; not restored: {shown}{more}"
        if self.differs:
            shown = ", ".join(self.differs[:limit]) + (" ..." if len(self.differs) > limit
                                                       else "")
            text += f"; differ from the checkpoint (written during the rollback): {shown}"
        return text


def parse_record(record: str) -> CheckpointCommit:
    """A checkpoint from a `for-each-ref` record: ref name, commit, commit message."""
    name, commit, body = record.split("\0", 2)
    meta = meta_of(body)
    label = body.split("\n", 1)[0]
    work_tree = meta.get("work_tree")
    nested = meta.get("nested")
    return CheckpointCommit(
        name, label, commit, float(meta.get("ts", 0.0)), int(meta.get("files", 0)),
        int(meta.get("added", 0)), int(meta.get("modified", 0)), int(meta.get("deleted", 0)),
        meta.get("at_seq"), work_tree if isinstance(work_tree, str) else None,
        tuple(str(n) for n in nested) if isinstance(nested, list) else (),
        _str_or_none(meta.get("since")), _int_or_none(meta.get("insertions")),
        _int_or_none(meta.get("deletions")),
    )


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def commit_message(label: str, meta: dict[str, Any]) -> str:
    """A checkpoint commit's message: its label on one line, then its facts as JSON."""
    return f"{one_line(label)}\n\n{json.dumps(meta, sort_keys=True)}\n"


def meta_of(body: str) -> dict[str, Any]:
    """The facts a checkpoint commit's message holds (`commit_message`), {} if none."""
    for line in reversed(body.strip().splitlines()):
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}
    return {}


def number(cp_id: str) -> int:
    """The number of `cp-N` (0 for an id of another shape)."""
    try:
        return int(cp_id.removeprefix("cp-"))
    except ValueError:
        return 0


def one_line(text: str) -> str:
    """A label as kept: one line, at most 200 characters."""
    return " ".join(str(text).split())[:200] or "checkpoint"
