"""`supervisor dashboard`: the live Textual dashboard over a store (a local root, recordings,
or Redis)."""

import argparse
import sys

from supervisor.cli.common import (
    CliError,
    add_store_arguments,
    hide_store_password,
    store_from,
    store_label,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("--theme", metavar="NAME",
                        help="theme name (default: supervisor-dark; see themes/ and "
                             "$SUPERVISOR_CONFIG/themes)")
    parser.add_argument("--session", metavar="ID",
                        help="open this session's screen as soon as it is found (waits for it)")
    parser.add_argument("--notify", action="store_true",
                        help="a desktop notification when escalations arrive (notify-send)")
    parser.add_argument("--on-escalation", metavar="CMD",
                        help="run CMD (with /bin/sh) for each escalation that arrives; the "
                             "session, escalation, level, reason, kind and deadline are in its "
                             "environment as SUPERVISOR_SESSION, SUPERVISOR_ESCALATION, "
                             "SUPERVISOR_LEVEL, SUPERVISOR_REASON, SUPERVISOR_KIND, "
                             "SUPERVISOR_DEADLINE (never in the command line)")
    parser.add_argument("--read-only", action="store_true",
                        help="never write decisions (automatic for recordings: a root holding "
                             "the marker file RECORDINGS, such as sample_sessions/)")


def run(args: argparse.Namespace) -> int:
    from supervisor.store.local import LocalStore

    hide_store_password(args)  # it runs for hours: no password in the process list
    store = store_from(args)
    created = False
    if isinstance(store, LocalStore):
        root = store.root
        if root.exists() and not root.is_dir():
            raise CliError(f"--root {root} is not a directory")
        created = not root.exists()
        if created:  # made now so it can be watched; said on screen: a mistyped --root?
            from supervisor.store.paths import ensure_private_dir

            ensure_private_dir(root)
        store.session_ids()  # unreadable (another user's root)? one line and status 2, now
    if args.session:
        store.check_session_id(args.session)
    from supervisor.tui.alerts import Alerts
    from supervisor.tui.keys import load_app

    try:
        SupervisorApp = load_app()  # heavy: only for this command; the operator's [keys]
    except ValueError as exc:
        raise CliError(str(exc)) from None

    if args.on_escalation is not None and not args.on_escalation.strip():
        raise CliError("--on-escalation needs a command")
    alerts = Alerts(desktop=args.notify, command=args.on_escalation, store=store_label(store))
    app = SupervisorApp(store, theme=args.theme, read_only=args.read_only,
                        open_session=args.session, root_created=created, alerts=alerts)
    try:
        app.run()
    finally:
        store.close()
    for message in app.startup_messages:
        print(f"supervisor: {message}", file=sys.stderr)
    return app.return_code or 0  # non-zero when the app failed
