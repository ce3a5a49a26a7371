"""`supervisor notify test [--url URL]`: send a test message to the configured services (or to
URL) and say what became of each; `supervisor notify deliver SESSION ESCALATION`: what the guard
starts beside the agent when it escalates; `supervisor notify watch`: notify the agents that work
while their hooks no longer reach the supervisor (docs/notify.md)."""

import argparse
import contextlib
from typing import TYPE_CHECKING

from supervisor.cli.common import CliError, add_root_argument, root_from

if TYPE_CHECKING:
    from supervisor.notify.config import NotifyConfig


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="notify_command", metavar="ACTION", required=True)
    test = sub.add_parser("test", help="send a test message to every configured service")
    test.add_argument("--url", metavar="URL", help="an apprise URL to try instead of the config")
    deliver = sub.add_parser("deliver", help="notify an escalation (started by the guard)")
    add_root_argument(deliver)
    deliver.add_argument("session")
    deliver.add_argument("escalation")
    watch = sub.add_parser("watch", help="notify agents that work while their hooks no longer "
                                         "reach the supervisor")
    add_root_argument(watch)
    watch.add_argument("--interval", type=float, default=30.0, metavar="S",
                       help="seconds between passes over the root (default 30)")
    watch.add_argument("--silent-after", type=float, default=None, metavar="S",
                       help="a transcript that changed this long after the last hook event "
                            "means the hooks stopped (default 60)")
    watch.add_argument("--once", action="store_true", help="one pass, then exit")


def run(args: argparse.Namespace) -> int:
    from supervisor.notify.config import load, url_problem
    from supervisor.userconfig import config_file

    config = load()
    if args.notify_command == "deliver":
        from supervisor.notify.deliver import deliver

        try:
            deliver(root_from(args), args.session, args.escalation, config)
        except ValueError as exc:
            raise CliError(str(exc)) from exc
        return 0
    for problem in config.problems:
        print(problem)
    if args.notify_command == "watch":
        return _watch(args, config)
    if args.url is not None:
        bad = url_problem(args.url)
        if bad:
            raise CliError(f"--url: {bad}")
        urls = [args.url]
    else:
        urls = config.urls
        if not urls:
            raise CliError(f"no notify URLs: add `[notify] urls = [...]` to {config_file()} "
                           "or try one with --url")
    return _test(urls)


def _test(urls: list[str]) -> int:
    from supervisor.notify.send import send_one, service_names

    failed = 0
    for url, name in zip(urls, service_names(urls), strict=True):
        result = send_one(url, "Agent Supervisor: test",
                          "A test of `supervisor notify test`: escalations will arrive here.")
        if result.ok:
            print(f"sent: {name}")
        else:
            failed += 1
            print(f"failed: {name}: {result.reason}")
    return 1 if failed else 0


def _watch(args: argparse.Namespace, config: "NotifyConfig") -> int:
    from supervisor.hooks.installed import broken_project_hook
    from supervisor.notify.watch import watch, watch_once
    from supervisor.store.silence import SILENT_AFTER_S
    from supervisor.userconfig import config_file

    if not config.urls:
        raise CliError(f"no notify URLs: add `[notify] urls = [...]` to {config_file()}")
    after = SILENT_AFTER_S if args.silent_after is None else args.silent_after
    if not (args.interval > 0 and after >= 0):
        raise CliError("--interval must be above 0 and --silent-after at least 0")
    root = root_from(args)
    if args.once:
        for session in watch_once(root, config, after_s=after, hooks=broken_project_hook):
            print(f"notified: {session} is unsupervised")
        return 0
    with contextlib.suppress(KeyboardInterrupt):
        watch(root, config, interval_s=args.interval, after_s=after,
              hooks=broken_project_hook)
    return 0
