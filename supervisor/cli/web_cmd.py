"""`supervisor web [--root R | --store URL] [--host H] [--port P] [--allow-user U] [--login]`:
serve the "needs you" queue to a browser and print a one-time login URL (docs/web.md)."""

import argparse
import errno

from supervisor.cli.common import CliError, add_store_arguments, store_from, store_label

DEFAULT_PORT = 8765


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only; "
                             "`::1` or `::` for IPv6)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--allow-user", action="append", default=[], metavar="USER",
                        help="another local user who may connect (a reverse proxy's, such as "
                             "caddy); repeatable. Every other user is refused")
    parser.add_argument("--login", action="store_true",
                        help="print a new one-time login URL for the server already running, "
                             "and exit")
    parser.add_argument("--new-token", action="store_true",
                        help="replace the token scripts use and sign every browser out")


def run(args: argparse.Namespace) -> int:
    import os
    import signal
    import sys
    import threading

    from supervisor.store.paths import UnsafeStore
    from supervisor.web.logins import Logins
    from supervisor.web.token import load_or_create

    if not 0 <= args.port <= 65535:
        raise CliError(f"--port {args.port}: not a port (0 to 65535)")
    logins = Logins()
    if args.login:
        base = logins.base()
        if base is None:
            raise CliError("no web server has run yet: start one with `supervisor web`")
        print(f"{base}/login?code={logins.mint_code()}  (one browser, once, within 15 "
              "minutes)", flush=True)
        return 0
    allowed = {os.geteuid(), *(_uid_of(name) for name in args.allow_user)}

    from supervisor.hooks.peer import can_tell
    from supervisor.web.queue import LiveQueue
    from supervisor.web.server import WebServer, is_loopback

    store = store_from(args)

    def warn(line: str) -> None:
        print(f"warning: {line}", file=sys.stderr, flush=True)

    try:
        token = load_or_create(new=args.new_token, say=warn)
        if args.new_token:
            logins.end_all()
    except (OSError, UnsafeStore) as exc:
        store.close()
        raise CliError(f"cannot keep the web token: {exc}") from exc
    queue = LiveQueue(store)
    try:
        server = WebServer((args.host, args.port), queue, token, logins=logins,
                           allowed_uids=frozenset(allowed))
    except OSError as exc:
        store.close()
        if exc.errno == errno.EADDRINUSE:
            raise CliError(f"port {args.port} on {args.host} is already in use: stop what "
                           "uses it or choose another with --port") from exc
        raise CliError(f"cannot listen on {args.host}:{args.port}: "
                       f"{exc.strerror or exc}") from exc
    queue.start()
    from supervisor.notify.config import load as load_notify

    for problem in load_notify().problems:  # the notifications' links lead here: say it once
        print(f"notify: {problem}", file=sys.stderr, flush=True)
    host, port = str(server.server_address[0]), int(server.server_address[1])
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    code = logins.mint_code(base)
    print(f"serving {store_label(store)} at {base}/login?code={code}", flush=True)
    if not is_loopback(args.host):
        warn(f"listening on {args.host} without TLS: put it behind a reverse proxy with "
             "https (docs/web.md); callers from other machines are checked by their sign-in "
             "alone")
    if not can_tell():
        warn("this system does not say which user owns a connection: other local users are "
             "kept out by the sign-in alone (docs/security.md)")

    def stop(*_: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        queue.close()
        store.close()
    return 0


def _uid_of(name: str) -> int:
    import pwd

    try:
        return pwd.getpwnam(name).pw_uid if not name.isdigit() else int(name)
    except KeyError:
        raise CliError(f"--allow-user {name}: no such user") from None

