#!/usr/bin/env python3
"""Write the sample sessions — the committed recordings and the long one on demand.

    python sample_sessions/generate.py                 # rewrite sample_sessions/sessions/*
    python sample_sessions/generate.py --out DIR       # into another store root
    python sample_sessions/generate.py --long 20000    # into sample_sessions/generated/

The recordings are written by the real guard and the real engine (`supervisor.guard.Guard`):
each scenario below is a scripted agent that calls `pre_call`/`post_call`, `message`, `usage`,
`task_start`, `checkpoint`, ... in a real git workspace (edits really change its files), while
an operator's decisions are appended to `control.jsonl` and applied by the guard. Time is a
scripted clock (every step 2 s, from 2026-01-01 00:00 UTC, one hour apart per recording), so
every verdict, detection, escalation, deadline and outcome is what the guard and engine really
do, and `supervisor analyze` of a recording finds what it shows (tests/test_tui_samples.py).

Three things are not the guard's, and say so: the workspace path in `session_start` is written
as `/work/<session>` and checkpoint commit ids (of a shadow repository that is not shipped)
are replaced by stable ones, so that regenerating gives the same bytes; `malformed-lines` gets
its broken lines appended by hand (no writer of ours produces them; they show how the dashboard
copes). The long session (`--long`, not committed: it is large) is written by hand, fast, for
the dashboard's tests and benchmarks.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BASE_TS = 1767225600.0  # 2026-01-01 00:00:00 UTC
STEP_S = 2.0
POLICY: dict[str, Any] = {
    "limits": {"iterations_per_session": {"limit": 200, "action": "pause"},
               "errors_per_session": {"limit": 30, "action": "pause"},
               "cost_usd": {"limit": 2.0, "action": "pause"},
               "duration_s": {"limit": 3600, "action": "stop"},
               "consecutive_tool_calls": {"limit": 150, "action": "pause"}},
}
HOSTILE = ("[bold red]pwned[/] [link=https://evil.example]click[/link] \x1b[31mred\x1b[0m "
           "\x1b]52;c;aGVsbG8=\x07 \x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ "
           "\u202eevil-reversed\u202c \x07bell")
MARKER = ("RECORDINGS", "This folder holds recorded agent sessions. Agent Supervisor shows "
          "them read-only and never writes into them.\n")
"""The marker file of a recordings root (`supervisor.store.recordings`)."""


def _importable() -> None:
    """Run from a plain checkout: the package is the folder above this one."""
    try:
        import supervisor  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(HERE.parent))


class Clock:
    """The scripted clock: the guard reads it; the script moves it on."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def tick(self, seconds: float = STEP_S) -> None:
        self.now = round(self.now + seconds, 3)


class Agent:
    """A scripted agent guarded by the real guard, in a real git workspace."""

    def __init__(self, root: Path, session: str, start: float, *, files: dict[str, str],
                 policy: dict[str, Any] | None = None, deadline_s: float = 300.0,
                 fallback: str = "abort", checkpoints: bool = True) -> None:
        from supervisor.guard.core import Guard
        from supervisor.guard.settings import GuardSettings

        self.root, self.session = root, session
        self.workdir = Path(tempfile.mkdtemp(prefix=f"sample-{session}-"))
        self.clock = Clock(start)
        for name, text in files.items():
            (self.workdir / name).parent.mkdir(parents=True, exist_ok=True)
            (self.workdir / name).write_text(text)
            self._touch(self.workdir / name)
        settings = GuardSettings(checkpoints=checkpoints, checkpoint_at_start=checkpoints,
                                 checkpoint_every=0, escalation_deadline_s=deadline_s,
                                 fallback=fallback)
        self.guard = Guard.open(root, session, cwd=self.workdir, clock=self.clock,
                                policy=POLICY if policy is None else policy, settings=settings)
        self.decisions = 0

    # -- the agent's side ----------------------------------------------------------------

    def start(self, agent: str, task: str | None, heartbeat_s: float | None = None) -> None:
        self.clock.tick()
        self.guard.start(agent, task, heartbeat_s=heartbeat_s)

    def call(self, tool: str, args: dict[str, Any], output: str = "ok", *, ok: bool = True,
             error: str | None = None) -> Any:
        """One tool call: asked of the guard, run when allowed (edits change the workspace),
        its result recorded. Returns the guard's verdict."""
        self.clock.tick()
        verdict = self.guard.pre_call(tool, args)
        if not verdict.proceed:
            return verdict
        if tool in ("Edit", "Write"):
            ok, output, error = self._edit(tool, args)
        self.clock.tick()
        self.guard.post_call(verdict.call_id, output, ok=ok, error=error, duration_ms=120.0)
        return verdict

    def _edit(self, tool: str, args: dict[str, Any]) -> tuple[bool, str, str | None]:
        path = args["file_path"]
        target = self.workdir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if tool == "Write":
            target.write_text(args["content"])
            self._touch(target)
            return True, f"File created successfully at: {path}", None
        text = target.read_text() if target.exists() else ""
        if args["old_string"] not in text:
            return (False, f"String to replace not found in file.\nString: {args['old_string']}",
                    "no match")
        target.write_text(text.replace(args["old_string"], args["new_string"], 1))
        self._touch(target)
        return True, f"The file {path} has been updated.", None

    def _touch(self, path: Path) -> None:
        """Files change at the scripted time (the guard records what it sees of them)."""
        ns = int(self.clock.now * 1e9)
        os.utime(path, ns=(ns, ns))

    def say(self, text: str, role: str = "assistant") -> None:
        self.clock.tick()
        self.guard.message(role, text)

    def usage(self, tokens_in: int, tokens_out: int, cost: float) -> None:
        self.clock.tick()
        self.guard.usage(tokens_in, tokens_out, cost)

    def checkpoint(self, label: str) -> None:
        self.clock.tick()
        self.guard.checkpoint(label)

    def task(self, title: str) -> None:
        self.clock.tick()
        self.guard.task_start(title)

    def task_end(self, status: str = "done") -> None:
        self.clock.tick()
        self.guard.task_end(status)

    def end(self, status: str = "completed", reason: str | None = None) -> None:
        self.clock.tick()
        self.guard.end(status, reason)

    # -- the operator's side -------------------------------------------------------------

    def pending(self) -> str:
        esc = self.guard.pending
        if esc is None:
            raise RuntimeError(f"{self.session}: no escalation is pending")
        return str(esc["escalation_id"])

    def decide(self, action: str, *, escalation: bool = True, text: str | None = None,
               checkpoint_id: str | None = None, operator: str = "alice",
               apply: bool = True) -> None:
        """An operator's decision, appended to `control.jsonl` (validated as every decision
        is), then applied by the guard at its next poll (unless `apply` is False)."""
        from supervisor.protocol.decisions import decision_problem
        from supervisor.store.writer import LineWriter

        self.clock.tick(30.0)  # the operator takes a moment
        self.decisions += 1
        line = {"type": "decision", "decision_id": f"d-{action}-{self.decisions}",
                "escalation_id": self.pending() if escalation else None, "action": action,
                "text": text, "checkpoint_id": checkpoint_id, "operator": operator}
        problem = decision_problem({**line, "v": 1, "seq": 1, "ts": 0.0})
        assert problem is None, problem
        from supervisor.store.provenance import sealed

        with LineWriter(self.guard.files.control, clock=self.clock) as writer:
            writer.append(sealed(self.guard.root, self.session, line))  # as operators write
        if apply:
            self.poll()

    def poll(self) -> list[Any]:
        self.clock.tick()
        notes = self.guard.poll()
        for path in self.workdir.rglob("*"):  # a rollback restored files just now
            if path.is_file() and ".git" not in path.parts \
                    and path.stat().st_mtime > self.clock.now:
                self._touch(path)
        return notes

    def close(self) -> None:
        self.guard.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


# -- the scenarios ------------------------------------------------------------------------------

def healthy(a: Agent) -> None:
    a.start("demo-agent", "Refactor the config loader")
    a.say("I'll read the loader first.")
    a.usage(1800, 300, 0.012)
    a.call("Read", {"file_path": "src/config.py"}, "def load(path):\n    return json.load(path)\n")
    a.call("Edit", {"file_path": "src/config.py", "old_string": "json.load",
                    "new_string": "toml.load"})
    a.checkpoint("after the loader edit")
    for i, (out, ok) in enumerate((("1 failed, 3 passed", False), ("4 passed in 0.11s", True))):
        a.usage(2000 + 200 * i, 300, 0.012)
        a.call("Bash", {"command": "pytest -q tests/test_config.py"}, out, ok=ok,
               error=None if ok else "exit status 1")
        if not ok:
            a.call("Edit", {"file_path": "tests/test_config.py", "old_string": "json",
                            "new_string": "toml"})
    a.task_end("done")
    a.end("completed", "all tasks done")


HEALTHY_FILES = {"src/config.py": "import json\n\n\ndef load(path):\n    return json.load(path)\n",
                 "tests/test_config.py": "from src.config import load  # json\n"}


def exact_repeat_approve(a: Agent) -> None:
    a.start("demo-agent", "Find why the build fails")
    for _ in range(12):
        v = a.call("Bash", {"command": "make build"}, "cc -c main.c\nmain.c:1:10: fatal error: "
                   "foo.h: No such file or directory\nmake: *** [build] Error 2", ok=False,
                   error="exit status 2")
        if v.action == "pause":
            break
    a.decide("approve")
    a.call("Read", {"file_path": "Makefile"}, "CFLAGS += -Iinclude\nbuild:\n\tcc -c main.c\n")
    a.end("completed")


def similar_guidance(a: Agent) -> None:
    a.start("demo-agent", "Search the code base for the retry logic")
    a.say("Let me search for the retry logic.")
    # near-identical searches only nudge (similarity is moderate evidence); the same search
    # again and again is what escalates
    for word in ("retry", "retries", "retrying", "Retry", "retry_count", "retry_after",
                 "retry", "retry", "retry", "retry", "retry", "retry", "retry"):
        v = a.call("Grep", {"pattern": word, "path": "src"},
                   "src/http.py:3: TIMEOUT = 30  # seconds")
        if v.action == "pause":
            break
    a.decide("guidance", text="The retry logic is in vendor/http/backoff.py; search vendor/ "
             "too.")
    a.call("Read", {"file_path": "vendor/http/backoff.py"}, "def backoff(attempt):\n    ...\n")
    a.end("completed")


def cycle_rollback(a: Agent) -> None:
    a.start("demo-agent", "Fix the flaky date test")
    for zone in ("GMT", "UTC", "GMT", "UTC", "GMT"):  # a new file, written back and forth
        a.call("Write", {"file_path": "src/tz.py", "content": f"ZONE = '{zone}'\n"})
    a.call("Edit", {"file_path": "src/dates.py", "old_string": "'utc'", "new_string": "'local'"})
    rounds = (("Read", {"file_path": "src/dates.py"}, "TZ = 'local'\n", True),
              ("Bash", {"command": "pytest -q tests/test_dates.py"},
               "FAILED tests/test_dates.py::test_parse - AssertionError: 01:00 != 00:00\n"
               "1 failed", False),
              ("Read", {"file_path": "tests/test_dates.py"}, "def test_parse(): ...\n", True))
    for turn in range(30):
        tool, args, output, ok = rounds[turn % len(rounds)]
        v = a.call(tool, args, output, ok=ok, error=None if ok else "exit 1")
        if v.action == "pause":
            break
    a.decide("rollback", checkpoint_id="cp-1")
    a.call("Read", {"file_path": "src/dates.py"}, "TZ = 'utc'\n")
    a.end("completed")


def same_error_skip(a: Agent) -> None:
    a.start("demo-agent", "Upgrade the database driver")
    for i in range(8):
        v = a.call("Bash", {"command": f"pip install dbdriver=={i + 2}.0"},
                   f"ERROR: Could not find a version that satisfies the requirement "
                   f"dbdriver=={i + 2}.0\nERROR: No matching distribution found for dbdriver",
                   ok=False, error="exit status 1")
        if v.action == "pause":
            break
    a.decide("skip")
    a.end("completed", "task skipped by operator")


NO_PROGRESS_CALLS = (
    ("Read", {"file_path": "docs/guide.md"}), ("Bash", {"command": "git status --short"}),
    ("LS", {"path": "docs"}), ("Bash", {"command": "wc -l docs/guide.md"}),
    ("Read", {"file_path": "CHANGELOG.md"}), ("Bash", {"command": "git log -1 --oneline"}),
    ("Grep", {"pattern": "migrat", "path": "docs"}), ("Bash", {"command": "python --version"}),
    ("Read", {"file_path": "pyproject.toml"}), ("Bash", {"command": "ls -la"}),
    ("WebSearch", {"query": "how to structure a migration guide"}),
    ("Bash", {"command": "head -5 README.md"}),
)
"""Twelve different looks around, each giving what the agent saw before: no progress."""


def no_progress_abort(a: Agent) -> None:
    a.start("demo-agent", "Write the migration guide")
    for turn in range(60):
        if turn % 8 == 0:
            a.say("Let me look around once more before I write the guide.")
        tool, args = NO_PROGRESS_CALLS[turn % len(NO_PROGRESS_CALLS)]
        v = a.call(tool, args, "# Guide\n\nTODO" if turn % 2 else "nothing new")
        if v.action == "pause":
            break
    a.decide("abort")
    a.end("aborted", "aborted by operator alice")


def pause_reset(a: Agent) -> None:
    a.start("demo-agent", "Tidy the README")
    a.call("Read", {"file_path": "README.md"}, "# Project\n")
    a.call("Edit", {"file_path": "README.md", "old_string": "Project", "new_string": "Tool"})
    a.call("Read", {"file_path": "README.md"}, "# Tool\n")
    a.call("Read", {"file_path": "README.md"}, "# Tool\n")
    a.decide("pause", escalation=False)
    a.decide("approve")
    a.decide("reset", escalation=False)
    a.call("Bash", {"command": "markdownlint README.md"}, "ok")
    a.end("completed")


def polling(a: Agent) -> None:
    a.start("demo-agent", "Wait for the CI run, then for the deploy")
    for i in range(10):  # the output changes: waiting, not a loop
        state = "in_progress" if i < 9 else "completed"
        a.call("Bash", {"command": "gh run view 1234 --json status"},
               f'{{"status": "{state}", "elapsed": {30 * (i + 1)}}}')
        a.clock.tick(3.0)
    for _ in range(14):  # the same output poll after poll: stuck
        v = a.call("BashOutput", {"bash_id": "deploy"}, "deploying... waiting for the load "
                   "balancer")
        if not v.proceed:
            break
        a.clock.tick(3.0)
    a.end("completed")


def hard_limit(a: Agent) -> None:
    a.start("demo-agent", "Generate fixtures for every table")
    for i in range(1, 60):
        a.usage(1500, 400, 0.045)
        v = a.call("Write", {"file_path": f"fixtures/table_{i}.json", "content": f"[{i}]\n"})
        if v.action == "stop":
            break


def malformed(a: Agent) -> None:
    a.start("hostile-agent", "Task with " + HOSTILE)
    a.call("Bash", {"command": "echo " + HOSTILE}, "output: " + HOSTILE)
    a.say(HOSTILE)
    a.end("failed", HOSTILE)


BAD_LINES = (
    b'{"v":1,"seq":99,"ts":1,"type":"tool_call"',          # truncated JSON
    b"[1, 2, 3]",                                          # not an object
    b'{"v":1,"seq":100,"ts":1767226000,"type":"tool_call","call_id":"x"}',  # missing fields
    b'{"v":1,"seq":101,"ts":1767226000,"type":"message","role":"assistant","text":"\xff\xfe"}',
    b"not json at all \x1b[31m[bold]",
)
"""Appended to malformed-lines after its third event: what a crashed or foreign writer leaves."""


def two_operators(a: Agent) -> None:
    a.start("demo-agent", "Rename the public API")
    for _ in range(8):
        v = a.call("Bash", {"command": "pytest"},
                   "FAILED tests/test_api.py::test_old_name\n3 failed", ok=False, error="exit 1")
        if v.action == "pause":
            break
    a.decide("guidance", text="Update the call sites first.", operator="bob", apply=False)
    a.decide("approve", operator="alice")
    for k in range(12):  # every edit is new; the probe's output never changes
        v = a.call("Edit", {"file_path": "api.py", "old_string": f"name_{k}",
                            "new_string": f"name_{k + 1}"})
        if v.action == "pause":
            break
        v = a.call("Bash", {"command": "pytest -x"}, "FAILED tests/test_api.py::test_rename\n"
                   f"1 failed in 0.{k + 1}4s", ok=False, error="exit 1")
        if v.action == "pause":
            break
    a.clock.tick(a.guard.settings.escalation_deadline_s + 1)
    a.poll()  # nobody answered: the deadline's fallback applies


def waiting(a: Agent) -> None:
    a.start("demo-agent", "Port the CLI to click")
    for _ in range(10):
        v = a.call("Bash", {"command": "python -m cli --help"},
                   "Traceback (most recent call last):\n  File \"cli/__main__.py\", line 1\n"
                   "ModuleNotFoundError: No module named 'click'", ok=False, error="exit 1")
        if v.action == "pause":
            break


def blind_search(a: Agent) -> None:
    a.start("demo-agent", "Rename the billing client")
    a.call("Read", {"file_path": "src/billing_client.py"}, "class BillingClient:\n    ...\n")
    for pattern in ("BillingClient", "billing_client", "billingClient"):  # looked in tests/ only
        a.call("Grep", {"pattern": pattern, "path": "tests/unit"}, "No matches found")
    a.call("Grep", {"pattern": "BillingClient", "path": "."},
           "src/billing_client.py:1:class BillingClient:")
    a.end("completed")


Scenario = Callable[[Agent], None]
RECORDINGS: tuple[tuple[str, Scenario, dict[str, Any]], ...] = (
    ("healthy-refactor", healthy, {"files": HEALTHY_FILES}),
    ("exact-repeat-approve", exact_repeat_approve, {"files": {"Makefile": "build:\n"}}),
    ("similar-calls-guidance", similar_guidance, {"files": {"src/http.py": "\n"}}),
    ("cycle-rollback", cycle_rollback, {"files": {"src/dates.py": "TZ = 'utc'\n"}}),
    ("same-error-skip", same_error_skip, {"files": {"requirements.txt": "dbdriver\n"},
                                          "policy": {**POLICY, "detectors": {"error_rate": {
                                              "enabled": True, "min_steps": 3, "window": 6}}}}),
    ("no-progress-abort", no_progress_abort, {"files": {"docs/guide.md": "# Guide\n\nTODO"}}),
    ("stale-read-pause-reset", pause_reset, {"files": {"README.md": "# Project\n"}}),
    ("legit-polling", polling, {"files": {}}),
    ("hard-limit-stop", hard_limit, {"files": {}, "policy": {
        **POLICY, "limits": {**POLICY["limits"],
                             "iterations_per_session": {"limit": 40, "action": "stop"}}}}),
    ("malformed-lines", malformed, {"files": {}}),
    ("two-operators-fallback", two_operators, {"files": {"api.py": "name_0 = 1\n"},
                                               "deadline_s": 60.0}),
    ("waiting-for-operator", waiting, {"files": {"cli/__main__.py": "import click\n"},
                                       "deadline_s": 0.0}),
    ("blind-search-nudge", blind_search,
     {"files": {"src/billing_client.py": "class BillingClient:\n    ...\n"}}),
)
"""Each recording: its session id, its script, and how its guard is set up."""


def write_recordings(root: Path, only: list[str] | None = None) -> list[str]:
    """Rewrite every recording (or those named in `only`) under `root/sessions` and mark `root`
    as recordings (read-only for every supervisor tool); returns their ids."""
    _importable()
    root.mkdir(parents=True, exist_ok=True)
    ids = []
    with tempfile.TemporaryDirectory(prefix="sample-sessions-") as scratch:
        for i, (session, script, setup) in enumerate(RECORDINGS):
            if only and session not in only:
                continue
            agent = Agent(Path(scratch), session, BASE_TS + 3600 * i, **setup)
            try:
                script(agent)
            finally:
                agent.close()
            events = Path(scratch) / "sessions" / session / "events.jsonl"
            lines = _stable(events.read_bytes().splitlines(keepends=True), session,
                            str(agent.workdir.resolve()))
            if session == "malformed-lines":
                lines[3:3] = [line + b"\n" for line in BAD_LINES]
            folder = root / "sessions" / session
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            (folder / "events.jsonl").write_bytes(b"".join(lines))
            control = events.with_name("control.jsonl")
            if control.exists():  # without the seals: they are of the scratch root's key
                (folder / "control.jsonl").write_bytes(
                    re.sub(rb',"seal":"[0-9a-f]{64}"', b"", control.read_bytes()))
            ids.append(session)
    (root / MARKER[0]).write_text(MARKER[1])
    return ids


def _stable(lines: list[bytes], session: str, workdir: str) -> list[bytes]:
    """The guard's lines with what differs from run to run made stable: the workspace path
    (`/work/<session>`) and checkpoint commit ids (of the scratch shadow repository); and
    without the guard's seals and marks, which are of the scratch root's key (not shipped: a
    recording reads as a session that seals nothing, with its "no seal" note, as control.jsonl's
    decisions do)."""
    out = []
    for raw in lines:
        event = json.loads(raw)
        event.pop("seal", None)
        event.pop("mark", None)
        if event.get("type") == "session_start":
            event.pop("seals", None)
            event.pop("marks", None)
        if event.get("type") == "session_start":
            event["cwd"] = f"/work/{session}"
        if event.get("type") == "checkpoint" and event.get("commit"):
            seed = f"{session}/{event.get('checkpoint_id')}".encode()
            event["commit"] = hashlib.sha1(seed).hexdigest()
        text = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
        out.append(text.replace(workdir, f"/work/{session}").encode() + b"\n")
    return out


# -- the long session (hand-written: fast, for tests and benchmarks) -----------------------------

class LongRecording:
    """Builds one long session's events.jsonl with steadily rising time."""

    def __init__(self, session: str, start: float, step: float) -> None:
        self.session = session
        self.ts = start
        self.step = step
        self.events: list[bytes] = []
        self.seq = 0
        self.calls = 0

    def ev(self, type_: str, **fields: object) -> int:
        self.seq += 1
        self.ts += self.step
        line = {"v": 1, "seq": self.seq, "ts": round(self.ts, 3), "type": type_, **fields}
        self.events.append(json.dumps(line, ensure_ascii=False,
                                      separators=(",", ":")).encode() + b"\n")
        return self.seq

    def call(self, tool: str, args: dict[str, object], output: str, ok: bool = True,
             error: str | None = None) -> None:
        self.calls += 1
        cid = f"c{self.calls}"
        self.ev("tool_call", call_id=cid, tool=tool, args=args)
        self.ev("tool_result", call_id=cid, ok=ok, output=output,
                output_bytes=len(output.encode()),
                output_hash="sha256:" + hashlib.sha256(output.encode()).hexdigest()[:16],
                error=error, duration_ms=120.0)


def write_long(root: Path, count: int) -> Path:
    """A long, realistic session of `count` events; returns its events file."""
    r = LongRecording(f"long-{count}", BASE_TS, step=0.25)
    r.ev("session_start", agent="demo-agent", task=f"Long session of {count} events",
         cwd=f"/work/{r.session}", pid=4242, policy=POLICY, heartbeat_s=None)
    while r.seq < count - 1:
        n = r.calls
        if n % 50 == 0:
            r.ev("checkpoint", checkpoint_id=f"cp-{n // 50}", label=f"step {n}",
                 commit=f"{n:012x}", at_seq=r.seq, files=100)
        r.call("bash" if n % 3 else "read_file",
               {"cmd": f"pytest -q tests/test_{n % 17}.py"} if n % 3 else {"path": f"f{n}.py"},
               f"{n % 40} passed" if n % 7 else "1 failed", ok=bool(n % 7),
               error=None if n % 7 else "exit 1")
        if n % 11 == 0:
            r.ev("message", role="assistant", text=f"Step {n}: moving on to the next file.")
        if n % 97 == 0:
            r.ev("detection", detector="exact_repeat", level=1, signature=f"sig-{n}",
                 evidence=[r.seq - 1], message="a nudge now and then")
    r.ev("session_end", status="completed", reason=None)
    folder = root / "sessions" / r.session
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "events.jsonl").write_bytes(b"".join(r.events))
    return folder / "events.jsonl"


def write_many(root: Path, sessions: int, events: int) -> list[str]:
    """`sessions` short sessions of `events` events each (a test run, its results, an end),
    written by hand like the long one: a root with many sessions, for the dashboard's first
    screen. Returns their ids."""
    ids = []
    for i in range(sessions):
        r = LongRecording(f"many-{i:05d}", BASE_TS + 60 * i, step=0.25)
        r.ev("session_start", agent="demo-agent", task=f"Session {i} of {sessions}",
             cwd=f"/work/{r.session}", pid=4242, policy=POLICY, heartbeat_s=None)
        while r.seq < events - 1:
            n = r.calls
            r.call("bash", {"cmd": f"pytest -q tests/test_{n % 17}.py"},
                   f"{n % 40} passed" if n % 7 else "1 failed", ok=bool(n % 7),
                   error=None if n % 7 else "exit 1")
        r.ev("session_end", status="completed", reason=None)
        folder = root / "sessions" / r.session
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "events.jsonl").write_bytes(b"".join(r.events))
        ids.append(r.session)
    return ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", type=int, metavar="N",
                        help="write only the long session of N events (into --out)")
    parser.add_argument("--only", action="append", metavar="SESSION",
                        help="write only this recording (repeatable)")
    parser.add_argument("--out", type=Path, help="store root to write into (default: "
                        "sample_sessions/ for recordings, sample_sessions/generated/ for --long)")
    args = parser.parse_args()
    if args.long:
        path = write_long(args.out or HERE / "generated", args.long)
        print(path)
    else:
        os.umask(0o077)
        for sid in write_recordings(args.out or HERE, args.only):
            print(sid)


if __name__ == "__main__":
    main()
