"""`supervisor doctor [--project DIR]`: is every installed hook still working?

`supervisor install` writes an absolute path into each hook entry (the `supervisor-hook` script
of the environment it ran in, or that interpreter with `-m supervisor.hooks.client`). Remove or
move that environment and every tool call of the agent runs a hook that is not there: the agent
goes on unsupervised, or stops on a hook error, without a word from us. So for each agent CLI
(Claude Code, Codex, Gemini CLI), in the user's settings and in the project's (the current
folder, or `--project DIR`), each of our entries is checked: its program resolves, and the
interpreter behind it runs and imports the hook client (it answers with its version; once per
program, not once per entry). A plugin file (OpenCode, Kilo, Cline, Pi) has one entry: the hook
client it runs when it cannot reach the resident server. An HTTP entry is checked by connecting
to its server. One line per settings file says which events work and what answered; a broken
entry has a line of its own; the last line says how many entries were checked and how long it
took. Exit status 1 when any entry is broken, with what to do; 0 otherwise (also when nothing
is installed, which is said).
"""

import argparse
import os
import socket
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ANSWER_TIMEOUT_S = 20.0
"""How long the interpreter behind a hook may take to import the client and answer."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", metavar="DIR",
                        help="the project whose settings are checked too (default: the "
                             "current folder)")


def run(args: argparse.Namespace) -> int:
    import time

    from supervisor.hooks.targets import load, names

    started = time.monotonic()
    project = Path(args.project or ".").expanduser().resolve()
    broken = found = 0
    answers: dict[str, tuple[str | None, str]] = {}
    for name in names():
        target = load(name)
        spec = target.settings
        paths = dict.fromkeys([spec.user_path(), spec.project_path(project)])
        for path in paths:
            entries = _our_entries(spec, path)
            if entries is None:
                continue
            if not entries:
                print(f"{name}: {path}: no supervisor hooks")
                continue
            good: dict[str, None] = {}
            checked: dict[str, None] = {}
            for event, hook in entries:
                found += 1
                problem, detail = check(hook, answers)
                if problem:
                    broken += 1
                    print(f"{name}: {path}: {event}: BROKEN: {problem}")
                else:
                    good[event] = None
                    checked[detail] = None
            if good:  # one line per settings file: the events that work and what answered
                print(f"{name}: {path}: ok, {len(good)} hook(s) ({', '.join(good)}): "
                      + "; ".join(checked))
    if not found:
        print("no supervisor hooks installed (supervisor install TARGET adds them)")
    print(f"checked {found} hook(s) in {time.monotonic() - started:.1f} s")
    if broken:
        print(f"{broken} broken hook(s): run `supervisor install TARGET` again from the "
              "environment the supervisor is installed in now (it rewrites the paths), or "
              "`supervisor uninstall TARGET`")
        return 1
    return 0


def _our_entries(spec: Any, path: Path) -> list[tuple[str, dict[str, Any]]] | None:
    """(event, hook entry) of each of our entries in a settings file (a plugin file: its one
    hook client command line); None: no such file."""
    from supervisor.hooks.installed import our_entries
    from supervisor.hooks.plugin_file import PluginFile, installed_hook

    try:
        if isinstance(spec, PluginFile):
            return installed_hook(path)
        return our_entries(spec, path)
    except (OSError, ValueError) as exc:
        print(f"{spec.target}: {path}: cannot read it: {exc}")
        return None


def check(hook: dict[str, Any],
          answers: dict[str, tuple[str | None, str]] | None = None) -> tuple[str | None, str]:
    """(what is wrong, None when nothing; what was checked). `answers`: the programs already
    run in this check, by path: every entry of an install names the same program, and each
    run starts an interpreter that imports the package (a second or more each), so one run
    per program, not one per entry."""
    if hook.get("type") == "http":
        return _check_http(str(hook.get("url")))
    from supervisor.hooks.installed import unresolved

    problem, program = unresolved(hook.get("command"))
    if problem is not None:
        return problem, ""
    if not os.path.isabs(program):
        return None, f"{program} from PATH"  # not one of ours: written by hand
    if answers is None:
        return _answers(program)
    if program not in answers:
        answers[program] = _answers(program)
    return answers[program]


def _answers(program: str) -> tuple[str | None, str]:
    """Whether the hook program at this absolute path runs and loads the hook client."""
    from supervisor.hooks.installed import interpreter
    from supervisor.hooks.native import fallback_of

    via, fallback = program, fallback_of(program)
    if fallback is not None:  # the native client: it answers, and so does its Python client
        try:
            native = subprocess.run([program, "--check"], capture_output=True, text=True,
                                    timeout=ANSWER_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{program} does not answer ({exc})", ""
        if native.returncode != 0 or native.stdout.splitlines()[1:2] != [fallback]:
            return f"{program} is not a working native hook client; run `supervisor install` " \
                   "again", ""
        program, via = fallback, f"{program} (native, falling back to {fallback})"
    interpreter_ = interpreter(program) or program  # `unresolved` found it
    try:
        done = subprocess.run(
            [interpreter_, "-c", "import supervisor, supervisor.hooks.client; "
                                "print(supervisor.__version__)"],
            capture_output=True, text=True, timeout=ANSWER_TIMEOUT_S,
            stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{interpreter_} does not answer ({exc})", ""
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"{interpreter_} cannot load the hook client: {last}", ""
    return None, f"supervisor {done.stdout.strip()} via {via}"


def _check_http(url: str) -> tuple[str | None, str]:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80),
                                      timeout=2):
            return None, f"its server answers at {parts.hostname}:{parts.port}"
    except OSError:
        return None, (f"its server at {parts.hostname}:{parts.port} is not running now: the "
                      "command hooks start it; calls made meanwhile go unsupervised")
