"""`supervisor web [--root R | --store URL] [--host H] [--port P]`: serve the "needs you" queue
to a browser behind a token and print the URL to open (docs/web.md)."""

import argparse
import errno

from supervisor.cli.common import CliError, add_store_arguments, store_from

DEFAULT_PORT = 8765
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--new-token", action="store_true",
                        help="replace the access token (every browser must log in again)")


def run(args: argparse.Namespace) -> int:
    import signal
    import sys
    import threading

    from supervisor.web.queue import LiveQueue
    from supervisor.web.server import WebServer
    from supervisor.web.token import load_or_create

    if not 0 <= args.port <= 65535:
        raise CliError(f"--port {args.port}: not a port (0 to 65535)")
    store = store_from(args)
    token = load_or_create(new=args.new_token)
    queue = LiveQueue(store)
    try:
        server = WebServer((args.host, args.port), queue, token)
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
    print(f"serving {store.describe()} at http://{shown}:{port}/?token={token}", flush=True)
    if args.host not in LOOPBACK:
        print(f"warning: listening on {args.host} without TLS: put it behind a reverse proxy "
              "with https (docs/web.md)", file=sys.stderr, flush=True)

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
