"""`supervisor checkpoints SESSION [--diff CP | --patch CP]`: a session's checkpoints with what
each one changed since the previous checkpoint, or what a rollback to one of them would throw
away (the files, or the unified diff, from it to the work tree now).

"Changed" means one thing here and in the dashboard: relative to the previous checkpoint (the
guard records it in the `checkpoint` event). What differs between a checkpoint and the work
tree now is always said as such ("since CP, in the work tree now")."""

import argparse
import sys
from typing import TYPE_CHECKING

from supervisor.cli.common import CliError, add_root_argument, root_from, store_label
from supervisor.store.units import files

if TYPE_CHECKING:
    from supervisor.guard.checkpoints import CheckpointCommit, CheckpointStore
    from supervisor.store.base import Store


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root_argument(parser)
    parser.add_argument("session", help="session id")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--diff", metavar="CP",
                       help="the files added, modified and deleted in the work tree since CP "
                            "(what a rollback to CP throws away)")
    shown.add_argument("--patch", metavar="CP",
                       help="the unified diff from CP to the work tree now (what a rollback to "
                            "CP throws away); escaped on a terminal, exact through a pipe")
    parser.add_argument("--json", action="store_true", help="one JSON object per checkpoint")


def run(args: argparse.Namespace) -> int:
    import json
    import time

    from supervisor.guard.checkpoints import CheckpointError
    from supervisor.safetext import clean
    from supervisor.store.local import LocalStore

    store = checkpoint_store(LocalStore(root_from(args)), args.session)
    try:
        if args.patch:
            _print_patch(store.patch(args.patch))
            return 0
        if args.diff:
            changes = store.diff(args.diff)
            if args.json:
                print(json.dumps({"added": changes.added, "modified": changes.modified,
                                  "deleted": changes.deleted}))
                return 0
            if not changes:
                print(f"no changes in the work tree since {args.diff}")
            elif sys.stdout.isatty():  # a person reads it: what the letters are; a pipe: lines
                print(f"the work tree since {clean(args.diff, limit=40)} (what a rollback to it "
                      "throws away; A added, M modified, D deleted):")
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
                              "at_seq": cp.at_seq, **cp.diffstat(),
                              "work_tree": cp.work_tree, "nested": list(cp.nested)}))
        return 0
    if not checkpoints:
        print(f"no checkpoints in session '{args.session}'")
        return 0
    rows = [["ID", "TIME", "FILES", "CHANGED SINCE PREVIOUS", "LINES", "AT SEQ", "LABEL"]]
    for cp in checkpoints:
        rows.append([
            cp.checkpoint_id, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(cp.ts)),
            str(cp.files), changed_text(cp),
            "-" if cp.insertions is None else f"+{cp.insertions} -{cp.deletions}",
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
    print("(what a rollback to CP throws away: --diff CP lists the files, --patch CP the diff)")
    return 0


def changed_text(cp: "CheckpointCommit") -> str:
    """`+1 ~2 -0 since cp-2`, or `first: 12 files` for the first checkpoint."""
    if cp.since is None and cp.modified == cp.deleted == 0:
        return f"first: {files(cp.added)}"
    since = f" since {cp.since}" if cp.since else ""
    return f"+{cp.added} ~{cp.modified} -{cp.deleted}{since}"


def _print_patch(text: str) -> None:
    """The diff exactly as git wrote it through a pipe (`| git apply -R` works), cleaned of
    control sequences on a terminal (a file's content is the agent's, so untrusted)."""
    if not text:
        print("no changes in the work tree since this checkpoint")
        return
    raw = text.encode("utf-8", "surrogateescape")  # git's bytes, undecodable ones too
    if sys.stdout.isatty():
        from supervisor.safetext import clean

        sys.stdout.write(clean(raw.decode("utf-8", "replace")).rstrip("\n") + "\n")
        return
    sys.stdout.flush()
    sys.stdout.buffer.write(raw)
    sys.stdout.buffer.flush()


def checkpoint_store(store: "Store", session: str) -> "CheckpointStore":
    """The checkpoint store of a session whose files are on this machine (its work tree is the
    session's `cwd`)."""
    from pathlib import Path

    from supervisor.guard.checkpoints import CheckpointStore

    store.require(session)
    files = store.local_files(session)
    if files is None:
        raise CliError(f"session '{session}' is not on this machine ({store_label(store)}): its "
                       "checkpoints are on the agent's host")
    if not (files.checkpoints / "HEAD").exists():
        raise CliError(f"session '{session}' has no checkpoints")
    cwd = store.summary(session).cwd
    if not cwd:
        raise CliError(f"session '{session}' recorded no working directory")
    return CheckpointStore(files.checkpoints, Path(cwd), exclude_paths=[files.root])
