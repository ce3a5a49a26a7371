"""`supervisor rollback SESSION CHECKPOINT [--force]`: restore a checkpoint by hand, for an ended
or crashed session. Refuses while the agent is alive (use `supervisor answer --rollback`, or
`--force`), and while another session that has not ended works in the same folder (a rollback
puts back its files too)."""

import argparse

from supervisor.cli.common import CliError, add_root_argument, root_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root_argument(parser)
    parser.add_argument("session", help="session id")
    parser.add_argument("checkpoint", help="checkpoint id (cp-N, or N)")
    parser.add_argument("--force", action="store_true",
                        help="roll back even though the agent seems to be alive, or another "
                        "session works in its folder")


def run(args: argparse.Namespace) -> int:
    import time

    from supervisor.cli.checkpoints_cmd import checkpoint_store
    from supervisor.guard.checkpoints import CheckpointError
    from supervisor.guard.inspect import agent_alive
    from supervisor.guard.state import SessionLock
    from supervisor.safetext import clean
    from supervisor.store.local import LocalStore
    from supervisor.store.recordings import refuse_writes
    from supervisor.store.same_folder import described, sharing
    from supervisor.store.voice import LineSealer
    from supervisor.store.writer import event_writer

    local = LocalStore(root_from(args))
    local.require(args.session)
    refuse_writes(local.root, args.session)
    summary = local.summary(args.session)
    alive, why = agent_alive(summary, time.time())
    if alive and not args.force:
        raise CliError(
            f"the agent of session '{args.session}' looks alive ({why}); answer its escalation "
            f"with `supervisor answer {args.session} --rollback {args.checkpoint}`, or use "
            "--force", status=1,
        )
    others = sharing(summary, local.summaries())
    if others and not args.force:
        who = ("another session that has not ended works" if len(others) == 1
               else f"{len(others)} other sessions that have not ended work")
        raise CliError(
            f"{who} in the folder of '{args.session}' ({summary.cwd}): "
            f"{described(others, time.time())}. A rollback "
            "puts back every file there, its work too; roll back once it is done, or use "
            "--force", status=1)
    store = checkpoint_store(local, args.session)
    try:  # before the lock: a mistyped id is said with what there is, not as a failed restore
        store.get(args.checkpoint)
    except CheckpointError as exc:
        raise CliError(f"{exc}; `supervisor checkpoints {args.session}` lists them") from exc
    files = local.local_files(args.session)
    assert files is not None  # checkpoint_store found them
    # `by` marks both events as the operator's, not the agent's: no sign of life (liveness)
    lock = SessionLock(files.dir)
    try:
        with lock.held():
            result = store.restore(args.checkpoint)
            # marked as the guard's own: its catch-up takes the rollback in (store.voice)
            with event_writer(local.root, args.session,
                              LineSealer(local.root, args.session)) as writer:
                writer.append_many(result.events(summary.events, by="supervisor rollback"))
    except CheckpointError as exc:
        raise CliError(str(exc)) from exc
    finally:
        lock.close()
    print(clean(result.summary(limit=50), keep_newlines=False))
    print(f"undo with: supervisor rollback {args.session} {result.safety.checkpoint_id}"
          + (" --force" if args.force else ""))
    return 0 if result.complete else 1
