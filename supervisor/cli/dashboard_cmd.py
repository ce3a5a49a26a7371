"""`supervisor dashboard`: the live Textual dashboard over a store root or recordings."""

import argparse
import os
import sys

from supervisor.cli.common import CliError, add_root_argument, root_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root_argument(parser)
    parser.add_argument("--theme", metavar="NAME",
                        help="theme name (default: supervisor-dark; see themes/ and "
                             "$SUPERVISOR_CONFIG/themes)")
    parser.add_argument("--session", metavar="ID",
                        help="open this session's screen as soon as it is found")
    parser.add_argument("--read-only", action="store_true",
                        help="never write decisions (automatic for the shipped recordings)")


def run(args: argparse.Namespace) -> int:
    root = root_from(args)
    if root.exists() and not root.is_dir():
        raise CliError(f"--root {root} is not a directory")
    read_only = args.read_only or _is_recordings(root)
    from supervisor.tui.app import SupervisorApp  # heavy: only for this command

    if args.session:
        from supervisor.store.paths import validate_session_id

        validate_session_id(args.session)
    app = SupervisorApp(root, theme=args.theme, read_only=read_only, open_session=args.session)
    app.run()
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
