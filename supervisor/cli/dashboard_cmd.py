"""`supervisor dashboard`: the live Textual dashboard over a store root or recordings."""

import argparse
import sys

from supervisor.cli.common import CliError, add_root_argument, root_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root_argument(parser)
    parser.add_argument("--theme", metavar="NAME",
                        help="theme name (default: supervisor-dark; see themes/ and "
                             "$SUPERVISOR_CONFIG/themes)")
    parser.add_argument("--session", metavar="ID",
                        help="open this session's screen as soon as it is found (waits for it)")
    parser.add_argument("--read-only", action="store_true",
                        help="never write decisions (automatic for recordings: a root holding "
                             "the marker file RECORDINGS, such as sample_sessions/)")


def run(args: argparse.Namespace) -> int:
    root = root_from(args)
    if root.exists() and not root.is_dir():
        raise CliError(f"root {root} is not a directory")
    created = not root.exists()
    if created:  # made now so it can be watched; said on screen, as a mistyped --root may be
        from supervisor.store.paths import ensure_private_dir

        ensure_private_dir(root)
    if args.session:
        from supervisor.store.paths import validate_session_id

        validate_session_id(args.session)
    from supervisor.tui.app import SupervisorApp  # heavy: only for this command

    app = SupervisorApp(root, theme=args.theme, read_only=args.read_only,
                        open_session=args.session, root_created=created)
    app.run()
    for message in app.startup_messages:
        print(f"supervisor: {message}", file=sys.stderr)
    return 0
