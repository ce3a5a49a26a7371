"""The `supervisor` command line.

Each subcommand lives in its own module with `add_arguments(parser)` and `run(args) -> int`;
`COMMANDS` lists them. The operator commands that differ only by their decision kind are made
from the registry instead (`decision_cmd.py`, inserted by `commands()`). Command modules import
their heavy dependencies inside `run`, and the hook (`supervisor hook ...`) takes a fast path
that builds no parser for the other commands, because it starts once per tool call of the
agent.
"""

import sys

from supervisor import __version__

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook's path imports no typing module
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

COMMANDS: list[tuple[str, str, str]] = [
    # (name, module, one-line help)
    ("sessions", "supervisor.cli.sessions_cmd",
     "list sessions: status, level, counts, pending escalations"),
    ("tail", "supervisor.cli.tail_cmd", "print a session's events, readable and escaped"),
    ("validate", "supervisor.cli.validate_cmd", "check event files and list their bad lines"),
    ("install", "supervisor.cli.install_cmd", "add the supervisor's hooks to an agent's settings"),
    ("uninstall", "supervisor.cli.install_cmd", "remove the hooks that `install` added"),
    ("doctor", "supervisor.cli.doctor_cmd",
     "check that every installed hook still resolves and answers"),
    ("answer", "supervisor.cli.answer_cmd", "answer a session's pending escalation"),
    ("split", "supervisor.cli.split_cmd", "split a running agent's task into sub-tasks"),
    ("checkpoints", "supervisor.cli.checkpoints_cmd", "list a session's checkpoints"),
    ("rollback", "supervisor.cli.rollback_cmd", "restore a checkpoint of an ended session"),
    ("stats", "supervisor.cli.stats_cmd", "a session's usage against every limit"),
    ("quiet", "supervisor.cli.quiet_cmd", "quiet one loop detector in a session for a while"),
    ("memory", "supervisor.cli.memory_cmd",
     "list, show, forget or switch off a project's memory of failures"),
    ("analyze", "supervisor.cli.analyze_cmd", "replay recorded runs through the engine"),
    ("policy", "supervisor.cli.policy_cmd", "show the effective loop-prevention policy"),
    ("import", "supervisor.cli.import_cmd", "write runs of other agent frameworks as sessions"),
    ("dashboard", "supervisor.cli.dashboard_cmd", "the live dashboard over a root"),
    ("demo", "supervisor.cli.demo_cmd", "demo agents with the dashboard on them"),
    ("notify", "supervisor.cli.notify_cmd",
     "try the notification services; deliver an escalation's notification"),
    ("web", "supervisor.cli.web_cmd", "the needs-you queue in a browser, for your user, signed in"),
    ("relay", "supervisor.cli.relay_cmd",
     "ship this host's sessions to a Redis store and bring decisions back"),
    ("otel", "supervisor.cli.otel_cmd",
     "export sessions as OpenTelemetry traces and metrics (OTLP)"),
    ("run", "supervisor.cli.run_cmd", "start an agent in the supervisor's own tmux, supervised"),
    ("screen", "supervisor.cli.screen_cmd", "print a run agent's current screen"),
    ("send", "supervisor.cli.send_cmd", "type a line to a run agent"),
    ("attach", "supervisor.cli.attach_cmd", "attach this terminal to a run agent's pane"),
    ("stop", "supervisor.cli.stop_cmd", "end a run agent and its tmux session"),
    ("worktree", "supervisor.cli.worktree_cmd", "list, diff, merge or discard a run's worktree"),
]


def commands() -> list[tuple[str, str, str]]:
    """`COMMANDS`, and after `answer` the commands made from the decision kinds that need no
    module of their own (`pause`, `guide`, `reset`, `abort`, `resume`: `cli/decision_cmd.py`)."""
    from supervisor.cli.decision_cmd import rows

    at = next(i for i, row in enumerate(COMMANDS) if row[0] == "answer") + 1
    return [*COMMANDS[:at], *rows(), *COMMANDS[at:]]


def build_parser() -> "argparse.ArgumentParser":
    import argparse
    import importlib

    parser = argparse.ArgumentParser(
        prog="supervisor",
        description="Agent Supervisor: keeps AI coding agents out of loops.",
    )
    parser.add_argument("--version", action="version", version=f"supervisor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name, help_text in commands():
        module = importlib.import_module(module_name)
        # a module that makes several commands (decision_cmd) gives each its own
        handler = module.command(name) if hasattr(module, "command") else module
        command = sub.add_parser(name, help=help_text, description=help_text)
        handler.add_arguments(command)
        command.set_defaults(_run=handler.run, _parser=command)
    return parser


def main(argv: "Sequence[str] | None" = None) -> int:
    """Run the command line; return the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["hook"]:  # fast path: neither argparse nor any other command loaded
        if args_list[1:2] in (["-h"], ["--help"]):
            from supervisor.hooks.args import usage

            print(usage() + "\n\nOne agent CLI hook call: the payload on stdin, the answer "
                  "on stdout. `supervisor install` writes these into the agent's settings "
                  "(see docs/hooks.md).")
            return 0
        from supervisor.hooks.client import main as hook_main

        return hook_main(args_list[1:])
    from supervisor.cli.common import SafeOutput

    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeOutput(stdout), SafeOutput(stderr)
    try:
        return _run(args_list)
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def _run(args_list: list[str]) -> int:
    from supervisor.cli.common import CliError, report_error

    try:
        parser = build_parser()
        args, unknown = parser.parse_known_args(args_list)
        if unknown:  # said by the command's own parser: its usage, not the top level's
            getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
        if not getattr(args, "_run", None):
            parser.print_help()
            return 2
        return int(args._run(args) or 0)
    except CliError as exc:
        return report_error(str(exc), exc.status)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        from supervisor.store.errors import StoreError

        if isinstance(exc, StoreError):
            return report_error(str(exc), 2)
        if isinstance(exc, OSError):  # a file or directory we could not use: say which
            where = f": {exc.filename}" if exc.filename else ""
            return report_error(f"{exc.strerror or exc}{where}", 2)
        raise
