"""`supervisor demo`: scripted demo agents in a temporary root, with the dashboard on them.

Starts one agent per scenario (healthy, a loop that escalates, legitimate polling, a hard
limit) as subprocesses of `python -m supervisor.demo.agent`, each in its own scratch workspace,
then opens the dashboard. Quitting the dashboard stops the agents and removes the temporary root.
"""

import argparse
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from supervisor.cli.common import CliError

SCENARIOS = (
    ("demo-healthy", "healthy"),
    ("demo-loop", "loop"),
    ("demo-polling", "poll"),
    ("demo-limit", "limit"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--theme", metavar="NAME", help="theme name (default: supervisor-dark)")
    parser.add_argument("--pace", type=float, default=1.0, metavar="SECONDS",
                        help="seconds between the demo agents' steps (default: 1.0)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary root after quitting (its path is printed)")


def run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("supervisor.demo.agent") is None:
        raise CliError("the scripted demo agent (supervisor.demo.agent) is not in this build")
    if args.pace <= 0:
        raise CliError("--pace must be positive")
    base = Path(tempfile.mkdtemp(prefix="supervisor-demo-"))
    root = base / "store"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs = start_agents(root, base, args.pace)
        from supervisor.tui.keys import load_app

        try:
            app = load_app()(root, theme=args.theme)  # the operator's [keys]
        except ValueError as exc:
            raise CliError(str(exc)) from None
        app.run()
        for message in app.startup_messages:
            print(f"supervisor: {message}", file=sys.stderr)
    finally:
        stop_agents(procs)
        if args.keep:
            print(f"demo root kept at {root}")
        else:
            shutil.rmtree(base, ignore_errors=True)
            print(f"demo root {root} removed (--keep keeps it)")
    return 0


def start_agents(root: Path, base: Path, pace: float) -> list[subprocess.Popen[bytes]]:
    """One subprocess per scenario; their output goes to a log file beside the root."""
    env = dict(os.environ)
    package_parent = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = package_parent + os.pathsep + env.get("PYTHONPATH", "")
    procs = []
    for session, scenario in SCENARIOS:
        workdir = base / "work" / session
        workdir.mkdir(parents=True, exist_ok=True)
        log = open(base / f"{session}.log", "wb")  # noqa: SIM115 - owned by the child
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "supervisor.demo.agent", "--root", str(root),
                 "--session", session, "--scenario", scenario, "--workdir", str(workdir),
                 "--pace", str(pace)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                start_new_session=True,
            )
        )
        log.close()
    return procs


def stop_agents(procs: list[subprocess.Popen[bytes]], grace: float = 3.0) -> None:
    """Terminate each agent we started (by pid), then kill whatever did not stop in time."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
