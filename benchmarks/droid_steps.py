"""Factory Droid's two hook steps of a tool call in the resident server, in one process.

Each call as Droid makes it in the `agent_cli` benchmark (a `cat` of a new file, Droid's
`Execute`): the model's answer (its text and the `tool_use`) appended to the session's
transcript as Droid writes it, PreToolUse (which reads that transcript), the tool's result and
Droid's record of each hook run appended, PostToolUse. Each step goes through
`runtime.run_safely` with the server's `Resident`, timed to its answer (the thread's CPU), and
the work it leaves for after its answer (`later`: reading on in the transcript) is run and timed
apart, as the server runs it. `bench_hook` reports the figure; run alone it prints each part,
or a profile of the steps: `python benchmarks/droid_steps.py [CALLS] [--profile]`.
"""

import cProfile
import json
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import UNLIMITED_POLICY as POLICY

SESSION = "536f4093-3147-4a4f-822b-9a69f01429d9"


@dataclass
class Steps:
    """Seconds of CPU per measured call."""

    pre: list[float] = field(default_factory=list)
    post: list[float] = field(default_factory=list)
    answered: list[float] = field(default_factory=list)
    """PreToolUse and PostToolUse to their answers: what Droid waits for."""
    after: list[float] = field(default_factory=list)
    """The work both left for after their answers."""


def _line(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry, separators=(",", ":")).encode() + b"\n"


def _message(role: str, content: list[dict[str, Any]], **more: Any) -> bytes:
    return _line({"type": "message", "id": f"m{time.monotonic_ns()}",
                  "timestamp": "2026-11-29T03:24:49.047Z",
                  "message": {"role": role, "content": content, **more}})


def _hook_record(event: str) -> bytes:
    """The line Droid writes to its transcript for each hook it ran."""
    return _message("user", [], visibility="user_only", hookEventName=event,
                    hookMatcher="Execute", hookCommands=[{
                        "type": "command", "command": "exec supervisor-hook droid --timeout 600",
                        "timeout": 600}], hookStatus="completed",
                    hookResults=[{"exitCode": 0, "stdout": "", "stderr": ""}])


class DroidSession:
    """A Droid session driven through the resident server's steps, one call at a time."""

    def __init__(self, base: Path) -> None:
        from supervisor.hooks.resident import Resident

        self.root = (base / "store").resolve()
        self.root.mkdir()
        (self.root / "policy.toml").write_text(POLICY)
        self.cwd = base / "work"
        self.cwd.mkdir()
        self.transcript = base / f"{SESSION}.jsonl"
        self.transcript.write_bytes(_line({"type": "session_start", "id": SESSION}))
        self.resident = Resident()
        self.index = 0
        self.step(self.payload("SessionStart", source="startup"))
        self.step(self.payload("UserPromptSubmit", prompt="Read each module in src."))

    def payload(self, event: str, **more: Any) -> bytes:
        return json.dumps({"session_id": SESSION, "transcript_path": str(self.transcript),
                           "cwd": str(self.cwd), "permission_mode": "auto-high",
                           "hook_event_name": event, **more}).encode()

    def step(self, data: bytes) -> tuple[float, float]:
        """(CPU to the answer, CPU of the work left for after it), seconds."""
        from supervisor.hooks.budget import Budget
        from supervisor.hooks.runtime import run_safely

        later: list[Callable[[], None]] = []
        complaints: list[str] = []
        started = time.thread_time()
        answer = run_safely("droid", data, self.root, Budget(600), complaints.append,
                            resident=self.resident, later=later)
        answered = time.thread_time()
        for work in later:
            work()
        done = time.thread_time()
        if complaints or answer:
            raise RuntimeError(f"a measured step was not simply allowed: {complaints} {answer}")
        return answered - started, done - answered

    def call(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """One tool call: (PreToolUse's times, PostToolUse's times)."""
        self.index += 1
        i = self.index
        name = f"module_{i:02d}.txt"
        (self.cwd / name).write_text(f"module {i}: NAME_{i}\n")
        args = {"command": f"cat {name}", "summary": "run it", "riskLevel": "low",
                "riskLevelReason": "reads only"}
        with open(self.transcript, "ab") as handle:
            handle.write(_message("assistant", [
                {"type": "text", "text": f"Next I read {name}."},
                {"type": "tool_use", "id": f"call_{i}", "name": "Execute", "input": args}]))
        pre = self.step(self.payload("PreToolUse", tool_name="Execute", tool_input=args))
        output = f"module {i}: NAME_{i}\n\n\n[Process exited with code 0]"
        with open(self.transcript, "ab") as handle:
            handle.write(_hook_record("PreToolUse"))
        post = self.step(self.payload("PostToolUse", tool_name="Execute", tool_input=args,
                                      tool_response=output))
        with open(self.transcript, "ab") as handle:
            handle.write(_hook_record("PostToolUse") + _message("user", [
                {"type": "tool_result", "tool_use_id": f"call_{i}", "is_error": False,
                 "content": output}]))
        return pre, post

    def close(self) -> None:
        self.resident.close_all()


def measure(calls: int, warm: int = 20) -> Steps:
    """`calls` calls measured after `warm` of warm-up, in a session of their own."""
    steps = Steps()
    with tempfile.TemporaryDirectory() as tmp:
        session = DroidSession(Path(tmp))
        try:
            for n in range(warm + calls):
                pre, post = session.call()
                if n >= warm:
                    steps.pre.append(pre[0])
                    steps.post.append(post[0])
                    steps.answered.append(pre[0] + post[0])
                    steps.after.append(pre[1] + post[1])
        finally:
            session.close()
    return steps


def main(argv: list[str]) -> int:
    calls = int(argv[0]) if argv and argv[0].isdigit() else 300
    if "--profile" in argv:
        profiler = cProfile.Profile()
        profiler.enable()
        measure(calls)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(60)
        return 0
    steps = measure(calls)
    for name in ("pre", "post", "answered", "after"):
        ms = [v * 1000 for v in getattr(steps, name)]
        print(f"{name:9} CPU median {statistics.median(ms):.3f} ms, "
              f"mean {statistics.fmean(ms):.3f}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main(sys.argv[1:]))
