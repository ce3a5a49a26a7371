"""`supervisor checkpoints SESSION [--diff CHECKPOINT]`: a session's checkpoints with the files
each one changed, or the files changed in the work tree since one of them."""

import argparse
from typing import TYPE_CHECKING

from supervisor.cli.common import CliError, add_root_argument, root_from

if TYPE_CHECKING:
    from supervisor.guard.checkpoints import CheckpointStore
    from supervisor.store.base import Store


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root_argument(parser)
    parser.add_argument("session", help="session id")
    parser.add_argument("--diff", metavar="CHECKPOINT",
                        help="list the files added, modified and deleted since this checkpoint")
    parser.add_argument("--json", action="store_true", help="one JSON object per checkpoint")


def run(args: argparse.Namespace) -> int:
    import json
    import time

    from supervisor.guard.checkpoints import CheckpointError
    from supervisor.safetext import clean
    from supervisor.store.local import LocalStore

    store = checkpoint_store(LocalStore(root_from(args)), args.session)
    try:
        if args.diff:
            changes = store.diff(args.diff)
            if args.json:
                print(json.dumps({"added": changes.added, "modified": changes.modified,
                                  "deleted": changes.deleted}))
                return 0
            if not changes:
                print(f"no changes since {args.diff}")
            for mark, paths in (("A", changes.added), ("M", changes.modified),
                                ("D", changes.deleted)):
                for path in paths:
                    print(f"{mark} {clean(path, keep_newlines=False)}")
            return 0
        checkpoints = store.list()
    except CheckpointError as exc:
        raise CliError(str(exc)) from exc
    if args.json:
        for cp in checkpoints:
            print(json.dumps({"checkpoint_id": cp.checkpoint_id, "label": cp.label,
                              "commit": cp.commit, "ts": cp.ts, "files": cp.files,
                              "added": cp.added, "modified": cp.modified,
                              "deleted": cp.deleted, "at_seq": cp.at_seq,
                              "work_tree": cp.work_tree, "nested": list(cp.nested)}))
        return 0
    if not checkpoints:
        print(f"no checkpoints in session '{args.session}'")
        return 0
    rows = [["ID", "TIME", "FILES", "CHANGED", "AT SEQ", "LABEL"]]
    for cp in checkpoints:
        rows.append([
            cp.checkpoint_id, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(cp.ts)),
            str(cp.files), f"+{cp.added} ~{cp.modified} -{cp.deleted}",
            "-" if cp.at_seq is None else str(cp.at_seq),
            clean(cp.label, keep_newlines=False, limit=60),
        ])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    nested = checkpoints[-1].nested
    if nested:  # what a rollback will not touch
        shown = ", ".join(clean(n, keep_newlines=False, limit=80) for n in nested)
        print(f"not checkpointed (nested git repositories, their own history keeps them): "
              f"{shown}")
    return 0


def checkpoint_store(store: "Store", session: str) -> "CheckpointStore":
    """The checkpoint store of a session whose files are on this machine (its work tree is the
    session's `cwd`)."""
    from supervisor.guard.checkpoints import CheckpointStore

    store.require(session)
    files = store.local_files(session)
    if files is None:
        raise CliError(f"session '{session}' is not on this machine ({store.describe()}): its "
                       "checkpoints are on the agent's host")
    if not (files.checkpoints / "HEAD").exists():
        raise CliError(f"session '{session}' has no checkpoints")
    cwd = store.summary(session).cwd
    if not cwd:
        raise CliError(f"session '{session}' recorded no working directory")
    return CheckpointStore(files.checkpoints, cwd, exclude_paths=[files.root])
