"""`supervisor worktree list|diff|merge|discard [SESSION]`: the git worktrees of `supervisor run
--worktree` runs (docs/run.md)."""

import argparse

from supervisor.cli.common import CliError
from supervisor.cli.run_cmd import add_where, host_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("list", "diff", "merge", "discard"))
    parser.add_argument("session", nargs="?", metavar="SESSION")
    parser.add_argument("--operator", help="your name in the session, if its end is recorded "
                        "here (default: login name)")
    add_where(parser)


def run(args: argparse.Namespace) -> int:
    from supervisor.host import HostError, records, worktree
    from supervisor.host.control import finish
    from supervisor.operator.send import default_operator
    from supervisor.safetext import clean

    root = host_root(args)
    try:
        if args.action == "list":
            trees = [r for r in records.every(root) if r.worktree is not None]
            if not trees:
                print("no run has a worktree")
            for record in trees:
                tree = record.worktree
                assert tree is not None
                state = "running" if record.alive() else "stopped"
                print(f"{record.session}  {state}  {clean(tree.branch)}  {clean(tree.path)}  "
                      f"{clean(worktree.diffstat(tree))}")
            return 0
        if not args.session:
            raise CliError(f"worktree {args.action} needs a SESSION")
        record = records.load(root, args.session)
        tree = record.worktree
        if tree is None:
            raise CliError(f"{args.session} runs in no worktree of its own")
        if args.action == "diff":
            patch = worktree.diff(tree)
            if not patch.strip():
                print(f"no changes: the worktree of {args.session} ({clean(tree.branch)}) is as "
                      "it was made")
                return 0
            print(clean(patch), end="")
            return 0
        print(finish(root, args.session, args.action, args.operator or default_operator()))
    except (HostError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    return 0
