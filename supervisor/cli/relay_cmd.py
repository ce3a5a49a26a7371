"""`supervisor relay --store redis://...`: ship this host's sessions to Redis, bring decisions
back; `supervisor relay --status`: where each relay of this root stands, and its backlog.

The relay runs until SIGTERM or Ctrl-C (then it saves its state and exits 0). `--status` exits 0
when every relay of the root runs connected with nothing left to ship, 1 otherwise.
"""

import argparse
import time

from supervisor.cli.common import CliError, add_store_arguments, hide_store_password, root_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("--host", metavar="NAME",
                        help="this host's name in the store (default: the machine's host name)")
    parser.add_argument("--status", action="store_true",
                        help="show each relay of the root: running, connected, backlog")
    parser.add_argument("--json", action="store_true", help="with --status: one JSON object "
                                                             "per relay")


def run(args: argparse.Namespace) -> int:
    if args.status:
        return _status(args)
    return _relay(args)


def default_host() -> str:
    import socket

    from supervisor.store.paths import sanitize_session_id

    return sanitize_session_id(socket.gethostname().split(".")[0])


def _relay(args: argparse.Namespace) -> int:
    import asyncio
    import signal

    from supervisor.store.open import StoreOptions, open_store, store_url
    from supervisor.store.redis.backend import RedisStore
    from supervisor.store.redis.relay import Relay

    hide_store_password(args)
    url = store_url(args.store)
    if not url:
        raise CliError("the relay needs a Redis store: --store redis://... "
                       "(or $SUPERVISOR_STORE)")
    store = open_store(url, options=StoreOptions(args.insecure, args.password_file))
    if not isinstance(store, RedisStore):
        raise CliError(f"the relay ships to Redis, not to {store.describe()}")
    relay = Relay(root_from(args), store, args.host or default_host())

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await relay.run(stop)

    try:
        asyncio.run(main())
    finally:
        store.close()
    return 0


def _status(args: argparse.Namespace) -> int:
    import json

    from supervisor.safetext import clean
    from supervisor.store.open import StoreOptions, store_url
    from supervisor.store.paths import session_files
    from supervisor.store.redis.budget_sync import shares_today
    from supervisor.store.redis.relay import file_backlog, load_status, status_files
    from supervisor.store.relay_lock import relay_running
    from supervisor.store.render import ago

    root = root_from(args)
    wanted = None
    url = store_url(args.store)
    if url:  # only to name the store: nothing is sent to it
        from supervisor.store.redis.connect import parse_url

        wanted = parse_url(url, StoreOptions(insecure=True)).identity()
    now = time.time()
    healthy = True
    shown = 0
    for path in status_files(root):
        status = load_status(path)
        if status is None or (wanted and status.identity != wanted) or \
                (args.host and status.host != args.host):
            continue
        shown += 1
        running = relay_running(path.with_suffix(".lock"))
        behind = {}
        for sid, pos in status.sessions.items():
            events, size = file_backlog(session_files(root, sid).events, pos.next)
            if events or size:
                behind[sid] = (events, size)
        events = sum(e for e, _ in behind.values())
        size = sum(b for _, b in behind.values())
        healthy = healthy and running and status.connected and not behind
        if args.json:
            print(json.dumps({
                "host": status.host, "store": status.store, "running": running,
                "pid": status.pid if running else None, "connected": status.connected,
                "error": status.error, "last_ok": status.last_ok, "updated": status.updated,
                "sessions": len(status.sessions), "backlog_events": events,
                "backlog_bytes": size, "shipped": status.shipped,
                "decisions": status.decisions,
                "behind": {sid: {"events": e, "bytes": b} for sid, (e, b) in behind.items()},
            }, ensure_ascii=True))
            continue
        state = f"running (pid {status.pid})" if running else "not running"
        link = "connected" if status.connected else "not connected"
        print(clean(f"relay of host {status.host} to {status.store}: {state}, {link}, last "
                    f"shipped {ago(status.last_ok, now)} (state saved {ago(status.updated, now)})",
                    keep_newlines=False))
        print(f"  backlog: {events} events ({size} bytes) in {len(behind)} of "
              f"{len(status.sessions)} sessions")
        for sid, (e, b) in sorted(behind.items(), key=lambda kv: -kv[1][1])[:20]:
            print(f"    {sid}: {e} events ({b} bytes)")
        for line in shares_today(root, now):  # the fleet's budgets (budget names: the policy's)
            print(clean(f"  fleet budget {line}", keep_newlines=False))
        if status.error:
            print(clean(f"  last error ({ago(status.error_since, now)}): {status.error}",
                        keep_newlines=False))
    if not shown:
        print(f"no relay has run for {root}" + (" to that store" if wanted else ""))
        return 1
    return 0 if healthy else 1
