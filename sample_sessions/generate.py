#!/usr/bin/env python3
"""Write the sample sessions (protocol v1) — the committed recordings and the long one on demand.

    python sample_sessions/generate.py                 # rewrite sample_sessions/sessions/*
    python sample_sessions/generate.py --long 20000    # into sample_sessions/generated/

Deterministic (fixed timestamps, no randomness) and stdlib only, so it runs from a plain checkout.
The recordings cover every detector, every decision kind, a hard-limit stop, legitimate polling,
malformed lines and hostile agent text; the long session (not committed: it is large) is for the
dashboard's tests and benchmarks.
"""

import argparse
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASE_TS = 1767225600.0  # 2026-01-01 00:00:00 UTC
POLICY = {
    "limits": {"iterations_per_session": {"limit": 200, "action": "pause"},
               "errors_per_session": {"limit": 30, "action": "pause"},
               "cost_usd": {"limit": 2.0, "action": "pause"},
               "duration_s": {"limit": 3600, "action": "stop"},
               "consecutive_tool_calls": {"limit": 150, "action": "pause"}},
    "detectors": {"exact_repeat": {"nudge": 3, "block": 5, "escalate": 7},
                  "similar_calls": {"threshold": 0.9}, "error_rate": {"window": 10}},
    "escalation": {"deadline_s": 300, "fallback": "abort"},
}
HOSTILE = ("[bold red]pwned[/] [link=https://evil.example]click[/link] \x1b[31mred\x1b[0m "
           "\x1b]52;c;aGVsbG8=\x07 \x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ "
           "\u202eevil-reversed\u202c \x07bell")


class Recording:
    """Builds one session's events.jsonl and control.jsonl lines with steadily rising time."""

    def __init__(self, session: str, start: float, step: float = 2.0) -> None:
        self.session = session
        self.ts = start
        self.step = step
        self.events: list[bytes] = []
        self.control: list[bytes] = []
        self.seq = 0
        self.cseq = 0
        self.calls = 0

    def ev(self, type_: str, **fields: object) -> int:
        self.seq += 1
        self.ts += self.step
        line = {"v": 1, "seq": self.seq, "ts": round(self.ts, 3), "type": type_, **fields}
        self.events.append(_encode(line))
        return self.seq

    def raw(self, data: bytes) -> None:
        """A malformed line, written as is."""
        self.events.append(data.rstrip(b"\n") + b"\n")

    def decide(self, action: str, decision_id: str, escalation_id: str | None = None,
               text: str | None = None, checkpoint_id: str | None = None,
               operator: str = "alice") -> None:
        self.cseq += 1
        self.control.append(_encode({
            "v": 1, "seq": self.cseq, "ts": round(self.ts + 1, 3), "type": "decision",
            "decision_id": decision_id, "escalation_id": escalation_id, "action": action,
            "text": text, "checkpoint_id": checkpoint_id, "operator": operator,
        }))

    def call(self, tool: str, args: dict[str, object], output: str, ok: bool = True,
             error: str | None = None) -> tuple[int, int]:
        self.calls += 1
        cid = f"c{self.calls}"
        a = self.ev("tool_call", call_id=cid, tool=tool, args=args)
        b = self.ev("tool_result", call_id=cid, ok=ok, output=output,
                    output_bytes=len(output.encode()), output_hash=_h(output), error=error,
                    duration_ms=120.0)
        return a, b

    def verdict(self, action: str, level: int, reason: str | None = None,
                message: str | None = None) -> int:
        return self.ev("verdict", call_id=f"c{self.calls}", action=action, level=level,
                       reason=reason, message=message)

    def start(self, agent: str, task: str, heartbeat_s: float | None = None) -> None:
        self.ev("session_start", agent=agent, task=task, cwd=f"/work/{self.session}", pid=4242,
                policy=POLICY, heartbeat_s=heartbeat_s)

    def write(self, root: Path) -> None:
        folder = root / "sessions" / self.session
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "events.jsonl").write_bytes(b"".join(self.events))
        if self.control:
            (folder / "control.jsonl").write_bytes(b"".join(self.control))


def _encode(line: dict[str, object]) -> bytes:
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _h(text: str) -> str:
    import hashlib

    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def _escalate(r: Recording, eid: str, reason: str, evidence: list[int], kind: str,
              level: int = 3, deadline: float | None = 300.0, fallback: str = "abort") -> None:
    r.ev("escalation", escalation_id=eid, level=level, reason=reason, evidence=evidence,
         options=["approve", "guidance", "rollback", "skip", "abort"],
         deadline_ts=None if deadline is None else round(r.ts + deadline, 3),
         fallback=fallback, kind=kind)


def healthy(t0: float) -> Recording:
    r = Recording("healthy-refactor", t0)
    r.start("demo-agent", "Refactor the config loader", heartbeat_s=None)
    r.ev("task_start", task_id="t1", title="Refactor the config loader")
    r.ev("checkpoint", checkpoint_id="cp-1", label="before edits", commit="a1b2c3d4e5f6",
         at_seq=r.seq, files=12, changed_files=["src/config.py", "tests/test_config.py"])
    r.ev("message", role="assistant", text="I'll read the loader first.")
    r.call("read_file", {"path": "src/config.py"}, "def load(path):\n    ...")
    r.verdict("allow", 0)
    r.call("edit_file", {"path": "src/config.py", "old": "...", "new": "return toml.load"},
           "edited 1 hunk")
    r.ev("checkpoint", checkpoint_id="cp-2", label="after loader edit", commit="b2c3d4e5f6a7",
         at_seq=r.seq, files=12, changed_files=["tests/test_config.py"])
    for i in range(3):
        r.call("bash", {"cmd": "pytest -q tests/test_config.py"},
               f"{4 + i} passed in 0.{i}1s" if i else "1 failed, 3 passed",
               ok=bool(i), error=None if i else "exit status 1")
        r.ev("usage", input_tokens=1800 + 200 * i, output_tokens=300, cost_usd=0.012)
    r.call("edit_file", {"path": "tests/test_config.py", "old": "x", "new": "y"}, "edited")
    r.ev("limit", name="iterations_per_session", value=r.calls, limit=200, action="pause")
    r.ev("task_end", task_id="t1", status="done")
    r.ev("session_end", status="completed", reason="all tasks done")
    return r


def exact_repeat_approve(t0: float) -> Recording:
    r = Recording("exact-repeat-approve", t0)
    r.start("demo-agent", "Find why the build fails")
    ev = []
    for i in range(7):
        a, _ = r.call("bash", {"cmd": "make build"}, "error: missing header foo.h", ok=False,
                      error="exit status 2")
        ev.append(a)
        if i == 2:
            r.ev("detection", detector="exact_repeat", level=1, signature="bash:make build",
                 evidence=ev[:], message="same call 3 times with the same output; try "
                 "reading the error instead of re-running")
            r.verdict("nudge", 1, "exact_repeat", "You ran `make build` 3 times unchanged.")
        if i == 4:
            r.ev("detection", detector="exact_repeat", level=2, signature="bash:make build",
                 evidence=ev[:], message="blocked: 5 identical calls")
            r.verdict("block", 2, "exact_repeat", "Re-plan: this call is refused.")
    r.ev("detection", detector="exact_repeat", level=3, signature="bash:make build",
         evidence=ev[:], message="7 identical calls, the agent ignores the block")
    _escalate(r, "esc-1", "exact_repeat: `make build` 7 times with the same error", ev, "detection")
    r.decide("approve", "d-approve-1", "esc-1")
    r.ev("decision_applied", escalation_id="esc-1", decision_id="d-approve-1", action="approve",
         outcome="level lowered to 1; 2 more repeats of bash:make build allowed")
    r.call("read_file", {"path": "Makefile"}, "CFLAGS += -Iinclude")
    r.ev("session_end", status="completed", reason=None)
    return r


def similar_guidance(t0: float) -> Recording:
    r = Recording("similar-calls-guidance", t0)
    r.start("demo-agent", "Search the code base for the retry logic")
    ev = []
    for word in ("retry", "retries", "retrying", "Retry", "retry_count", "retry "):
        a, _ = r.call("grep", {"pattern": word, "path": "src"}, "no matches")
        ev.append(a)
    r.ev("detection", detector="similar_calls", level=2, signature="grep:retry*",
         evidence=ev, message="6 near-identical searches with no results")
    r.ev("detection", detector="repeated_text", level=1, signature="msg:let me search",
         evidence=ev[-2:], message="the same sentence repeated in 3 messages")
    _escalate(r, "esc-1", "similar_calls: 6 near-identical searches", ev, "detection")
    r.decide("guidance", "d-guide-1", "esc-1",
             text="The retry logic is in vendor/http/backoff.py; search vendor/ too.")
    r.ev("decision_applied", escalation_id="esc-1", decision_id="d-guide-1", action="guidance",
         outcome="guidance delivered to the agent")
    r.call("read_file", {"path": "vendor/http/backoff.py"}, "def backoff(...)")
    r.ev("session_end", status="completed", reason=None)
    return r


def cycle_rollback(t0: float) -> Recording:
    r = Recording("cycle-rollback", t0)
    r.start("demo-agent", "Fix the flaky date test")
    r.ev("checkpoint", checkpoint_id="cp-1", label="session start", commit="c0ffee000001",
         at_seq=r.seq, files=40, changed_files=["src/dates.py", "tests/test_dates.py",
                                                 "src/tz.py"])
    ev = []
    for _ in range(3):
        a, _ = r.call("edit_file", {"path": "src/dates.py", "old": "utc", "new": "local"}, "ok")
        b, _ = r.call("edit_file", {"path": "src/dates.py", "old": "local", "new": "utc"}, "ok")
        ev += [a, b]
    r.ev("checkpoint", checkpoint_id="cp-2", label="mid-cycle", commit="c0ffee000002",
         at_seq=r.seq, files=40, changed_files=["src/dates.py"])
    r.ev("detection", detector="cycle", level=3, signature="A->B->A src/dates.py",
         evidence=ev, message="edit/undo cycle of period 2, repeated 3 times")
    _escalate(r, "esc-1", "cycle: the agent keeps undoing its own edit", ev, "cycle")
    r.decide("rollback", "d-rb-1", "esc-1", checkpoint_id="cp-1")
    r.ev("rollback", checkpoint_id="cp-1", restored_files=1, safety_checkpoint_id="cp-3")
    r.ev("decision_applied", escalation_id="esc-1", decision_id="d-rb-1", action="rollback",
         outcome="restored cp-1 (1 file); safety checkpoint cp-3")
    r.ev("session_end", status="completed", reason=None)
    return r


def same_error_skip(t0: float) -> Recording:
    r = Recording("same-error-skip", t0)
    r.start("demo-agent", "Upgrade the database driver")
    r.ev("task_start", task_id="t1", title="Upgrade the database driver")
    ev = []
    for i in range(6):
        a, _ = r.call("bash", {"cmd": f"pip install dbdriver=={i + 2}.0"},
                      "ERROR: No matching distribution", ok=False, error="exit status 1")
        ev.append(a)
    r.ev("detection", detector="recurring_error", level=2,
         signature="err:No matching distribution",
         evidence=ev, message="the same error 6 times from different calls")
    r.ev("detection", detector="error_rate", level=2, signature="errors/10",
         evidence=ev, message="6 of the last 10 calls failed")
    _escalate(r, "esc-1", "recurring_error: every install fails the same way", ev,
              "detection")
    r.decide("skip", "d-skip-1", "esc-1")
    r.ev("decision_applied", escalation_id="esc-1", decision_id="d-skip-1", action="skip",
         outcome="task t1 skipped")
    r.ev("task_end", task_id="t1", status="skipped")
    r.ev("session_end", status="completed", reason="task skipped by operator")
    return r


def no_progress_abort(t0: float) -> Recording:
    r = Recording("no-progress-abort", t0)
    r.start("demo-agent", "Write the migration guide")
    ev = []
    for _ in range(8):
        a = r.ev("message", role="assistant", text="Let me think about the best structure.")
        ev.append(a)
        r.call("read_file", {"path": "docs/guide.md"}, "# Guide\n")
    r.ev("detection", detector="repeated_text", level=1, signature="msg:best structure",
         evidence=ev[:4], message="the same message 4 times")
    r.ev("detection", detector="no_progress", level=3, signature="workspace unchanged",
         evidence=ev, message="16 steps, no file changed, no new output")
    _escalate(r, "esc-1", "no_progress: nothing changed in 16 steps", ev, "detection")
    r.decide("abort", "d-abort-1", "esc-1")
    r.ev("decision_applied", escalation_id="esc-1", decision_id="d-abort-1", action="abort",
         outcome="session aborted by operator")
    r.ev("session_end", status="aborted", reason="aborted by operator alice")
    return r


def pause_reset(t0: float) -> Recording:
    r = Recording("stale-read-pause-reset", t0)
    r.start("demo-agent", "Tidy the README")
    a, _ = r.call("read_file", {"path": "README.md"}, "# Project\n")
    r.call("edit_file", {"path": "README.md", "old": "Project", "new": "Tool"}, "ok")
    b, _ = r.call("read_file", {"path": "README.md"}, "# Tool\n")
    c, _ = r.call("read_file", {"path": "README.md"}, "# Tool\n")
    r.ev("detection", detector="stale_read", level=1, signature="read:README.md",
         evidence=[b, c], message="README.md read again although unchanged since the last read")
    r.decide("pause", "d-pause-1")
    r.ev("escalation", escalation_id="esc-pause-1", level=3, reason="paused by operator alice",
         evidence=[], options=["approve", "guidance", "rollback", "skip", "abort"],
         deadline_ts=None, fallback="approve", kind="pause")
    r.ev("decision_applied", escalation_id=None, decision_id="d-pause-1", action="pause",
         outcome="paused: escalation esc-pause-1 opened")
    r.decide("approve", "d-resume-1", "esc-pause-1")
    r.ev("decision_applied", escalation_id="esc-pause-1", decision_id="d-resume-1",
         action="approve", outcome="resumed")
    r.decide("reset", "d-reset-1")
    r.ev("decision_applied", escalation_id=None, decision_id="d-reset-1", action="reset",
         outcome="session counters cleared")
    r.call("bash", {"cmd": "markdownlint README.md"}, "ok")
    r.ev("session_end", status="completed", reason=None)
    _ = a
    return r


def polling(t0: float) -> Recording:
    r = Recording("legit-polling", t0, step=5.0)
    r.start("demo-agent", "Wait for the CI run to finish")
    ev = []
    for i in range(10):
        state = "running" if i < 9 else "success"
        a, _ = r.call("bash", {"cmd": "gh run view 1234 --json status"},
                      f'{{"status": "{state}", "elapsed": {30 * (i + 1)}}}')
        ev.append(a)
    r.ev("detection", detector="polling", level=0, signature="bash:gh run view",
         evidence=ev, message="repeated call with changing output: polling, treated as progress")
    r.ev("session_end", status="completed", reason=None)
    return r


def hard_limit(t0: float) -> Recording:
    r = Recording("hard-limit-stop", t0, step=1.0)
    r.start("demo-agent", "Generate fixtures for every table")
    for i in range(1, 41):
        r.call("bash", {"cmd": f"gen-fixture table_{i}"}, f"wrote table_{i}.json")
        if i % 10 == 0:
            r.ev("limit", name="iterations_per_session", value=i, limit=40,
                 action="stop" if i == 40 else "warn")
            r.ev("limit", name="cost_usd", value=round(0.045 * i, 3), limit=2.0, action="stop")
    r.verdict("stop", 4, "limit iterations_per_session", "Hard limit reached: 40 tool calls.")
    r.ev("session_end", status="terminated", reason="hard limit: iterations_per_session 40/40")
    return r


def malformed(t0: float) -> Recording:
    r = Recording("malformed-lines", t0)
    r.start("hostile-agent", "Task with " + HOSTILE)
    r.call("bash", {"cmd": "echo " + HOSTILE}, "output: " + HOSTILE)
    r.ev("message", role="assistant", text=HOSTILE)
    r.raw(b'{"v":1,"seq":99,"ts":1,"type":"tool_call"')           # truncated JSON
    r.raw(b"[1, 2, 3]")                                            # not an object
    r.raw(b'{"v":1,"seq":100,"ts":1767226000,"type":"tool_call","call_id":"x"}')  # missing fields
    r.raw(b'{"v":1,"seq":101,"ts":1767226000,"type":"message","role":"assistant","text":"\xff\xfe"}')
    r.raw(b"not json at all \x1b[31m[bold]")
    r.ev("future_event", note="an event type from a newer writer: shown as it is")
    r.ev("detection", detector="exact_repeat", level=1, signature=HOSTILE[:40],
         evidence=[2], message="hostile: " + HOSTILE)
    r.ev("session_end", status="failed", reason=HOSTILE)
    return r


def two_operators(t0: float) -> Recording:
    r = Recording("two-operators-fallback", t0)
    r.start("demo-agent", "Rename the public API")
    ev = [r.call("bash", {"cmd": "pytest"}, "3 failed", ok=False, error="exit 1")[0]
          for _ in range(4)]
    _escalate(r, "esc-1", "recurring_error: pytest fails the same way 4 times", ev,
              "detection")
    r.decide("guidance", "d-bob-1", "esc-1", text="Update the call sites first.", operator="bob")
    r.decide("approve", "d-alice-1", "esc-1", operator="alice")
    r.ev("decision_applied", escalation_id="esc-1", decision_id="d-bob-1", action="guidance",
         outcome="guidance delivered to the agent")
    r.ev("decision_ignored", decision_id="d-alice-1",
         reason="duplicate: escalation esc-1 was already answered by d-bob-1")
    ev2 = []
    for k in range(4):
        r.call("edit", {"path": "api.py", "old": f"name_{k}", "new": f"name_{k + 1}"}, "ok")
        ev2.append(r.call("bash", {"cmd": "pytest -x"}, "1 failed", ok=False,
                          error="exit 1")[0])
    r.ev("detection", detector="ineffective_edits", level=1, signature="probe:pytest-x",
         evidence=ev2[1:], message="3 rounds of edits to api.py left `pytest -x` unchanged")
    r.ev("detection", detector="revert", level=1, signature="revert:api.py",
         evidence=ev2[1:], message="api.py went back to content it had before 3 times")
    _escalate(r, "esc-2", "ineffective_edits: still failing", ev2, "detection", deadline=60.0)
    r.ev("decision_applied", escalation_id="esc-2", decision_id="fallback", action="abort",
         outcome="deadline passed: fallback abort applied")
    r.ev("session_end", status="aborted", reason="deadline passed")
    return r


def waiting(t0: float) -> Recording:
    r = Recording("waiting-for-operator", t0)
    r.start("demo-agent", "Port the CLI to click")
    ev = []
    for _ in range(5):
        a, _ = r.call("bash", {"cmd": "python -m cli --help"}, "ImportError: click",
                      ok=False, error="exit 1")
        ev.append(a)
    r.ev("checkpoint", checkpoint_id="cp-1", label="before port", commit="deadbeef0001",
         at_seq=2, files=9, changed_files=["cli/__main__.py", "pyproject.toml"])
    r.ev("detection", detector="recurring_error", level=3, signature="err:ImportError click",
         evidence=ev, message="ImportError 5 times; install click or change plan")
    _escalate(r, "esc-1", "recurring_error: ImportError: click, 5 times", ev, "detection",
              deadline=None)
    return r


RECORDINGS = (healthy, exact_repeat_approve, similar_guidance, cycle_rollback, same_error_skip,
              no_progress_abort, pause_reset, polling, hard_limit, malformed, two_operators,
              waiting)


MARKER = ("RECORDINGS", "This folder holds recorded agent sessions. Agent Supervisor shows "
          "them read-only and never writes into them.\n")
"""The marker file of a recordings root (`supervisor.store.recordings`; stdlib only here)."""


def write_recordings(root: Path) -> list[str]:
    """Rewrite every recording under `root/sessions` and mark `root` as recordings (read-only
    for every supervisor tool); returns their ids."""
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER[0]).write_text(MARKER[1])
    ids = []
    for i, build in enumerate(RECORDINGS):
        rec = build(BASE_TS + 3600 * i)
        folder = root / "sessions" / rec.session
        if folder.exists():
            shutil.rmtree(folder)
        rec.write(root)
        ids.append(rec.session)
    return ids


def write_long(root: Path, count: int) -> Path:
    """A long, realistic session of `count` events; returns its events file."""
    r = Recording(f"long-{count}", BASE_TS, step=0.25)
    r.start("demo-agent", f"Long session of {count} events")
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
    return _write_to(r, root)


def _write_to(r: Recording, root: Path) -> Path:
    r.write(root)
    return root / "sessions" / r.session / "events.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", type=int, metavar="N",
                        help="write only the long session of N events (into --out)")
    parser.add_argument("--out", type=Path, help="store root to write into (default: "
                        "sample_sessions/ for recordings, sample_sessions/generated/ for --long)")
    args = parser.parse_args()
    if args.long:
        path = write_long(args.out or HERE / "generated", args.long)
        print(path)
    else:
        for sid in write_recordings(args.out or HERE):
            print(sid)


if __name__ == "__main__":
    main()
