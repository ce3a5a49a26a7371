"""`supervisor dashboard`: the live Textual dashboard over a store (a local root, recordings,
or Redis)."""

import argparse
import os
import sys

from supervisor.cli.common import CliError, add_store_arguments, store_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("--theme", metavar="NAME",
                        help="theme name (default: supervisor-dark; see themes/ and "
                             "$SUPERVISOR_CONFIG/themes)")
    parser.add_argument("--session", metavar="ID",
                        help="open this session's screen as soon as it is found")
    parser.add_argument("--read-only", action="store_true",
                        help="never write decisions (automatic for the shipped recordings)")


def run(args: argparse.Namespace) -> int:
    from supervisor.store.local import LocalStore

    store = store_from(args)
    read_only = args.read_only
    if isinstance(store, LocalStore):
        root = store.root
        if root.exists() and not root.is_dir():
            raise CliError(f"--root {root} is not a directory")
        read_only = read_only or _is_recordings(root)
    if args.session:
        store.check_session_id(args.session)
    from supervisor.tui.app import SupervisorApp  # heavy: only for this command

    app = SupervisorApp(store, theme=args.theme, read_only=read_only,
                        open_session=args.session)
    try:
        app.run()
    finally:
        store.close()
    for message in app.startup_messages:
        print(f"supervisor: {message}", file=sys.stderr)
    return 0


def _is_recordings(root: "os.PathLike[str]") -> bool:
    """The shipped sample sessions are shown as recorded, never written to."""
    from pathlib import Path

    from supervisor.resources import data_dir

    try:
        samples = data_dir("sample_sessions").resolve()
    except FileNotFoundError:
        return False
    resolved = Path(root).resolve()
    return resolved == samples or samples in resolved.parents
