"""A scripted demo agent: no model, real files, real git, the real guard SDK.

    python -m supervisor.demo.agent [--root DIR] [--session ID] \\
        --scenario {healthy,loop,oscillate,poll,limit} [--workdir DIR] [--pace S] [--deadline S]

It works in a small git workspace (a fresh temporary one unless `--workdir` is given) holding
`calc.py` and its tests, and plays one scenario through `supervisor.guard.Session`:

- `healthy`: two tasks done cleanly (fix a bug, document the module);
- `loop`: the seeds' loop: after a wrong edit, it repeats an edit whose search string no longer
  exists, runs the tests, reads the file, and tries the same edit again;
- `oscillate`: it flips one line back and forth between two wrong versions, testing each time;
- `poll`: it starts a slow build and polls it until it finishes (legitimate repetition);
- `limit`: it keeps doing distinct work until a hard limit (12 tool calls) stops the session.

Under escalation it reacts to the operator's decision: guidance makes it change its approach
(the right edit), a rollback makes it continue from the restored files, skip moves it to its
next task, abort ends it, approve lets it go on as it was. `--deadline` is how long an
escalation waits for an operator before the fallback (skip the task) applies.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SCENARIOS = ("healthy", "loop", "oscillate", "poll", "limit")

CALC = '''def add(a, b):
    return a - b


def mul(a, b):
    return a * b + 1
'''
TESTS = '''from calc import add, mul


def test_add():
    assert add(1, 2) == 3


def test_mul():
    assert mul(2, 3) == 6
'''
LIMIT_POLICY = {"limits": {"iterations_per_session": {"limit": 12, "action": "stop"}}}


def calc_edit(old: str, new: str) -> dict[str, str]:
    """The arguments of an `edit_file` call that replaces `old` by `new` in calc.py."""
    return {"path": "calc.py", "old_string": old, "new_string": new}


class Stopped(Exception):
    """The guard ended the session (abort, hard limit)."""


class Skipped(Exception):
    """The operator (or the deadline) skipped the current task."""


class DemoAgent:
    """The scripted agent: a handful of real tools, each guarded by the session."""

    def __init__(self, session: Any, workdir: Path, pace: float, out: Callable[[str], None]):
        self.s = session
        self.workdir = workdir
        self.pace = pace
        self.say = out
        self.build_polls = 0

    # -- tools (real work on the workspace) --------------------------------------------------

    def read_file(self, path: str) -> tuple[bool, str, str | None]:
        try:
            return True, (self.workdir / path).read_text(), None
        except OSError as exc:
            return False, "", f"cannot read {path}: {exc.strerror}"

    def edit_file(self, path: str, old_string: str, new_string: str
                  ) -> tuple[bool, str, str | None]:
        """A search-and-replace edit under Claude Code's argument names (`old_string`,
        `new_string`), the ones the engine reads: the demo's edits are then seen as a real
        agent's are (the file they change, the search text a failed edit did not find)."""
        target = self.workdir / path
        text = target.read_text()
        if old_string not in text:
            return (False, f"Error: search string not found in {path}: {old_string!r}",
                    "no match")
        target.write_text(text.replace(old_string, new_string, 1))
        return True, f"edited {path}", None

    def write_file(self, path: str, content: str) -> tuple[bool, str, str | None]:
        (self.workdir / path).write_text(content)
        return True, f"wrote {len(content)} bytes to {path}", None

    def bash(self, command: str) -> tuple[bool, str, str | None]:
        if command.startswith("pytest"):
            return self._tests()
        if command.startswith("./build.sh"):
            self.build_polls = 0
            return True, "build started in the background (id 1)", None
        if command.startswith("ls"):
            names = sorted(p.name for p in self.workdir.iterdir() if p.name != ".git")
            return True, "\n".join(names), None
        return True, f"ran {command}", None

    def build_output(self, bash_id: str) -> tuple[bool, str, str | None]:
        self.build_polls += 1
        if self.build_polls >= 6:
            return True, "build finished: 0 errors", None
        return True, f"building... {self.build_polls * 15}%", None

    def _tests(self) -> tuple[bool, str, str | None]:
        """Run the workspace's tests for real, in-process and isolated from the guard."""
        namespace: dict[str, Any] = {}
        try:
            exec(compile((self.workdir / "calc.py").read_text(), "calc.py", "exec"), namespace)
        except Exception as exc:  # the agent may have broken the file
            return False, f"collection error: {type(exc).__name__}: {exc}", "exit 2"
        failures = []
        if namespace["add"](1, 2) != 3:
            failures.append(f"test_add: assert add(1, 2) == 3 (got {namespace['add'](1, 2)})")
        if namespace["mul"](2, 3) != 6:
            failures.append(f"test_mul: assert mul(2, 3) == 6 (got {namespace['mul'](2, 3)})")
        if failures:
            return False, "FAILED " + "\nFAILED ".join(failures) + \
                f"\n{len(failures)} failed", "exit 1"
        return True, "2 passed", None

    # -- one guarded step ------------------------------------------------------------------

    def step(self, tool: str, args: dict[str, Any]) -> tuple[str, str, Any]:
        """Ask the guard, run the tool if allowed, report it. Returns (action, output, verdict).
        Raises `Stopped` / `Skipped` when the guard says so."""
        if self.pace:
            time.sleep(self.pace)
        verdict = self.s.before_call(tool, args)
        shown = f"{tool} {_short(args)}"
        if verdict.message:
            self.say(f"  guard -> {verdict.action}: {_first_line(verdict.message)}")
        if verdict.action == "stop":
            raise Stopped(verdict.message or "stopped")
        if verdict.action == "skip" and verdict.cached_output is None:
            raise Skipped(verdict.message or "skipped")
        if verdict.action == "skip":
            self.say(f"{shown}: served from the guard's cache")
            return "cached", verdict.cached_output, verdict
        if not verdict.proceed:
            return "refused", verdict.message or "", verdict
        started = time.perf_counter()
        ok, output, error = getattr(self, tool if tool != "BashOutput" else "build_output")(
            **args)
        self.s.after_call(verdict, output, ok=ok, error=error,
                          duration=time.perf_counter() - started)
        self.say(f"{shown}: {'ok' if ok else 'FAILED'} {_first_line(output)}")
        return ("ok" if ok else "failed"), output, verdict

    def think(self, text: str) -> None:
        self.s.message("assistant", text)
        self.s.usage(input_tokens=1200, output_tokens=len(text) * 2, cost_usd=0.002)
        self.say(f"agent: {text}")

    # -- tasks -------------------------------------------------------------------------------

    def fix_add_cleanly(self) -> None:
        self.think("The add() test fails; let me read calc.py.")
        self.step("read_file", {"path": "calc.py"})
        self.step("edit_file", calc_edit("return a - b", "return a + b"))
        self.step("bash", {"command": "pytest -q test_calc.py::test_add"})

    def fix_mul_cleanly(self) -> None:
        self.think("Now mul(): it adds 1 for no reason.")
        self.step("edit_file", calc_edit("return a * b + 1", "return a * b"))
        self.step("bash", {"command": "pytest -q"})

    def document(self) -> None:
        self.think("Documenting the module.")
        self.step("bash", {"command": "ls"})
        self.step("write_file", {"path": "README.md",
                                 "content": "# calc\n\n`add(a, b)` and `mul(a, b)`.\n"})
        self.step("read_file", {"path": "README.md"})

    def fix_add_looping(self) -> None:
        """The seeds' loop, until a decision changes the course."""
        self.think("test_add fails; I will change the operator in add().")
        self.step("edit_file", calc_edit("return a - b", "return a * b"))
        self.step("bash", {"command": "pytest -q"})
        loop = [
            ("edit_file", calc_edit("return a - b", "return a + b")),
            ("bash", {"command": "pytest -q"}),
            ("read_file", {"path": "calc.py"}),
        ]
        for turn in range(40):
            tool, args = loop[turn % len(loop)]
            _, _, verdict = self.step(tool, args)
            if self.react(verdict):
                return
        raise Skipped("giving up after 40 steps")

    def fix_mul_oscillating(self) -> None:
        self.think("test_mul fails; let me try flipping the constant.")
        flips = [
            ("edit_file", calc_edit("return a * b + 1", "return a * b - 1")),
            ("bash", {"command": "pytest -q"}),
            ("edit_file", calc_edit("return a * b - 1", "return a * b + 1")),
            ("bash", {"command": "pytest -q"}),
        ]
        for turn in range(40):
            tool, args = flips[turn % len(flips)]
            _, _, verdict = self.step(tool, args)
            if self.react(verdict, fix=self._fix_mul_properly):
                return
        raise Skipped("giving up after 40 steps")

    def build_and_poll(self) -> None:
        self.think("Starting the slow build, then I will wait for it.")
        self.step("bash", {"command": "./build.sh &"})
        for _ in range(20):
            _, output, verdict = self.step("BashOutput", {"bash_id": "1"})
            if self.react(verdict):
                return
            if "finished" in output:
                break
        self.step("bash", {"command": "pytest -q"})

    def busy_work(self) -> None:
        self.think("Lots of small, different steps.")
        for i in range(40):
            self.step("write_file", {"path": f"note{i}.txt", "content": f"note {i}\n"})

    # -- reacting to decisions --------------------------------------------------------------

    def react(self, verdict: Any, fix: Callable[[], None] | None = None) -> bool:
        """Act on an operator decision in `verdict`; True when the task is now finished."""
        decision = getattr(verdict, "decision", None)
        if decision == "guidance":
            self.think("The operator's guidance: I will stop repeating myself and do it right.")
            (fix or self._fix_add_properly)()
            return True
        if decision == "rollback":
            self.think("The workspace was rolled back; continuing from the restored files.")
            self.step("read_file", {"path": "calc.py"})
            text = (self.workdir / "calc.py").read_text()
            if fix is None and "return a - b" in text:
                self.step("edit_file", calc_edit("return a - b", "return a + b"))
                self.step("bash", {"command": "pytest -q test_calc.py::test_add"})
                return True
            (fix or self._fix_add_properly)()
            return True
        return False

    def _fix_add_properly(self) -> None:
        _, text, _ = self.step("read_file", {"path": "calc.py"})
        line = next((ln.strip() for ln in text.splitlines() if ln.strip().startswith("return a")
                     and "b" in ln and "a * b +" not in ln), "return a + b")
        if line != "return a + b":
            self.step("edit_file", calc_edit(line, "return a + b"))
        self.step("bash", {"command": "pytest -q test_calc.py::test_add"})

    def _fix_mul_properly(self) -> None:
        _, text, _ = self.step("read_file", {"path": "calc.py"})
        for old in ("return a * b + 1", "return a * b - 1"):
            if old in text:
                self.step("edit_file", calc_edit(old, "return a * b"))
        self.step("bash", {"command": "pytest -q"})


PLANS: dict[str, list[tuple[str, str]]] = {
    "healthy": [("fix add() in calc.py", "fix_add_cleanly"), ("fix mul()", "fix_mul_cleanly"),
                ("document calc", "document")],
    "loop": [("fix add() in calc.py", "fix_add_looping"), ("document calc", "document")],
    "oscillate": [("fix mul() in calc.py", "fix_mul_oscillating"), ("document calc", "document")],
    "poll": [("build and test", "build_and_poll"), ("document calc", "document")],
    "limit": [("tidy the notes", "busy_work"), ("document calc", "document")],
}


class WorkspaceError(ValueError):
    """`--workdir` names a folder the demo cannot play in (its own calc.py is not there)."""


def _is_demo_calc(path: Path) -> bool:
    """Whether `path` holds the demo's calc.py (as written, or as an earlier run left it): the
    agent edits and runs it, so it must be ours, never a project's file of the same name."""
    try:
        text = (path / "calc.py").read_text()
    except (OSError, UnicodeDecodeError):
        return False
    return ("def add(a, b):" in text and "def mul(a, b):" in text
            and (path / "test_calc.py").is_file())


def make_workspace(workdir: Path | None) -> Path:
    """A git workspace with calc.py and its tests, committed (created if needed).
    `WorkspaceError` when `workdir` holds a calc.py that is not the demo's: the agent would
    edit a project's file and run it as its tests."""
    path = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="supervisor-demo-"))
    if path.is_dir() and (path / "calc.py").exists() and not _is_demo_calc(path):
        raise WorkspaceError(
            f"{path.absolute()} has a calc.py that is not the demo's (the demo edits and runs "
            "its own calc.py and test_calc.py): name an empty folder with --workdir, or leave "
            "it out for a new temporary one")
    path.mkdir(parents=True, exist_ok=True)
    if not (path / "calc.py").exists():
        (path / "calc.py").write_text(CALC)
        (path / "test_calc.py").write_text(TESTS)
        (path / ".gitignore").write_text("__pycache__/\n")
    if not (path / ".git").exists():
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_AUTHOR_NAME="demo", GIT_AUTHOR_EMAIL="demo@example.invalid",
                   GIT_COMMITTER_NAME="demo", GIT_COMMITTER_EMAIL="demo@example.invalid")
        for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
            subprocess.run(["git", *cmd], cwd=path, env=env, check=True, capture_output=True)
    return path


def run(args: argparse.Namespace, workdir: Path) -> int:
    from supervisor.guard import GuardSettings, Session
    from supervisor.guard.sdk import SessionStopped
    from supervisor.guard.signals import Terminated

    def say(text: str) -> None:
        print(f"[{session.session_id if session else args.session}] {text}", flush=True)

    settings = GuardSettings(escalation_deadline_s=args.deadline)
    policy = LIMIT_POLICY if args.scenario == "limit" else None
    session: Any = None
    session = Session(
        f"demo-{args.scenario}", task=None, cwd=workdir, policy=policy, root=args.root,
        session_id=args.session, settings=settings, heartbeat_s=args.heartbeat,
    )
    say(f"scenario {args.scenario} in {workdir}")
    agent = DemoAgent(session, workdir, args.pace, say)
    status, reason = "completed", None
    try:
        for title, method in PLANS[args.scenario]:
            session.start_task(title)
            say(f"task: {title}")
            try:
                getattr(agent, method)()
            except Skipped as exc:
                say(f"moving on: {_first_line(str(exc))}")
                if session.guard.state.task is not None:
                    session.end_task("skipped")
                continue
            session.end_task("done")
    except (Stopped, SessionStopped) as exc:
        say(f"stopping: {_first_line(str(exc))}")
        status, reason = ("aborted", str(exc)) if session.ended == "aborted" else (
            "terminated", str(exc))
    except Terminated as exc:  # SIGTERM/SIGHUP (the guard's handler): end the session, exit
        status, reason = "terminated", str(exc)
        say(f"stopping: {exc}")
    except KeyboardInterrupt:
        status, reason = "terminated", "interrupted (Ctrl+C)"
        say("stopping: interrupted (Ctrl+C)")
    except Exception as exc:
        status, reason = "failed", f"{type(exc).__name__}: {exc}"
        raise
    finally:
        session.close(status, reason)
        say(f"session ended: {session.ended}")
    return 0 if session.ended == "completed" else 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m supervisor.demo.agent",
        description="A scripted demo agent guarded by Agent Supervisor (no model needed).",
    )
    parser.add_argument("--root", help="store root (default: $SUPERVISOR_HOME, else the user "
                        "state directory)")
    parser.add_argument("--session", help="session id (default: the one `supervisor run` "
                        "gives, else a new one)")
    parser.add_argument("--scenario", required=True, choices=SCENARIOS)
    parser.add_argument("--workdir", help="workspace (default: a new temporary git repository)")
    parser.add_argument("--pace", type=float, default=0.5,
                        help="seconds between steps (default 0.5)")
    parser.add_argument("--deadline", type=float, default=120.0,
                        help="seconds an escalation waits for an operator (default 120)")
    parser.add_argument("--heartbeat", type=float, default=2.0, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from supervisor.store.paths import validate_session_id

    try:
        if args.session is not None:
            validate_session_id(args.session)
        workdir = make_workspace(Path(args.workdir) if args.workdir else None)
    except ValueError as exc:  # WorkspaceError included: one line, no traceback
        print(f"demo agent: error: {exc}", file=sys.stderr)
        return 2
    return run(args, workdir)


def _short(args: dict[str, Any]) -> str:
    text = " ".join(f"{k}={v!r}" for k, v in args.items() if k != "content")
    return text[:70]


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:120]


if __name__ == "__main__":
    raise SystemExit(main())
