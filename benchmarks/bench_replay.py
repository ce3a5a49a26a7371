"""Replay: a recorded session through the engine, as `analyze`, `stats` and the quality benchmark
replay it, in events a second against `json.loads` of the same lines.

The session is generated (`session_lines`): an agent's steps as its log holds them (its text,
the answer's usage, the tool call, its result), with outputs shaped like real ones (test runs
with durations and line numbers, listings with dates, logs with commit hashes, tracebacks,
search hits), so the output normalisation, the failure reading and the shell parsing each do
the work they do on a real run. Each side is timed in CPU time of this process (the machine is
shared), best of interleaved runs over the same lines: the anchor parses every line with
`json.loads`; the replay (`analysis.replay.analyze_events`, the default policy) replays the
parsed events. Target: the replay costs at most `MAX_RATIO` times the parse, per event.
"""

import json
import random
import time
from typing import Any

from common import Figure

from supervisor.analysis.replay import analyze_events
from supervisor.cli.vocabulary import load_all
from supervisor.engine import Policy

EVENTS = 20_000
MAX_RATIO = 18.0
"""The replay per event against `json.loads` per line: 20.6x and 21.8x before the cuts of
2026-11-29, 15.3x and 14.5x after (benchmarks/README.md "Replaying a recorded session")."""

_WORDS = ["value", "items", "config", "parser", "result", "handler", "client", "record",
          "token", "buffer", "schema", "cache", "index", "layout", "worker", "session"]


def _output(rng: random.Random, i: int, kind: str) -> tuple[str, bool]:
    """A tool output of the given kind, with the noise real outputs carry."""
    word = rng.choice(_WORDS)
    if kind == "pytest":
        lines = ["============================= test session starts ====================="
                 "========", f"platform linux -- Python 3.11.7, pytest-8.1.{i % 9}",
                 f"collected {rng.randint(5, 90)} items", ""]
        for t in range(rng.randint(3, 14)):
            lines.append(f"tests/test_{word}_{t}.py::test_{rng.choice(_WORDS)} PASSED"
                         f"  [{rng.randint(1, 99)}%]")
        ok = rng.random() > 0.4
        if not ok:
            lines += ["", "=================================== FAILURES ===================",
                      "Traceback (most recent call last):",
                      f'  File "/repo/src/{word}.py", line {rng.randint(10, 900)}, in {word}',
                      f"    return self.{word}[key]",
                      f"KeyError: '{rng.choice(_WORDS)}_{i}'"]
        lines.append(f"=== {rng.randint(3, 90)} passed in {rng.random() * 9:.2f}s ===")
        return "\n".join(lines), ok
    if kind == "ls":
        return "\n".join(
            f"-rw-r--r-- 1 dev dev {rng.randint(100, 90000):6d} Nov {rng.randint(1, 29):2d} "
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {rng.choice(_WORDS)}_{n}.py"
            for n in range(rng.randint(4, 30))), True
    if kind == "git":
        return "\n".join(
            f"{rng.getrandbits(28):07x} {rng.choice(_WORDS)}: fix the {rng.choice(_WORDS)} "
            f"(2026-11-{rng.randint(1, 29):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
            f":{rng.randint(0, 59):02d}Z)" for _ in range(rng.randint(3, 20))), True
    if kind == "grep":
        return "\n".join(
            f"src/{rng.choice(_WORDS)}.py:{rng.randint(1, 800)}:    {word} = "
            f"{rng.choice(_WORDS)}.{rng.choice(_WORDS)}({i})" for _ in range(rng.randint(1, 25))
        ), True
    body = "\n".join(
        f"{n + 1:5d}\t    def {rng.choice(_WORDS)}_{n}(self, {word}): return self.{word}"
        for n in range(rng.randint(10, 60)))
    return body, True


def session_lines(count: int, seed: int = 5) -> list[bytes]:
    """`count` event lines of one agent's session: its start, then steps of four events each
    (the answer's text, its usage, the tool call, the result), mostly different work."""
    rng = random.Random(seed)
    lines = [{"v": 1, "seq": 1, "ts": 1.7e9, "type": "session_start", "session_id": "replay",
              "agent": "bench", "cwd": "/repo"}]
    i = 0
    while len(lines) < count:
        i += 1
        ts = 1.7e9 + i * 7.0
        word = rng.choice(_WORDS)
        kind = rng.choice(["pytest", "ls", "git", "grep", "read", "edit"])
        if kind == "read":
            tool, args = "Read", {"file_path": f"/repo/src/{word}_{i % 97}.py"}
        elif kind == "edit":
            tool, args = "Edit", {"file_path": f"/repo/src/{word}_{i % 97}.py",
                                  "old_string": f"{word} = {i}", "new_string": f"{word} = {i + 1}"}
        elif kind == "pytest":
            tool, args = "Bash", {"command": f"cd /repo && python -m pytest tests/test_{word}.py"
                                             f" -q -k {rng.choice(_WORDS)} 2>&1 | tail -40",
                                  "description": "run the tests"}
        elif kind == "ls":
            tool, args = "Bash", {"command": f"ls -la src/{word}/ | head -{10 + i % 20}"}
        elif kind == "git":
            tool, args = "Bash", {"command": f"git log --oneline --format='%h %s (%cI)' -{i % 30}"
                                             f" -- src/{word}.py"}
        else:
            tool, args = "Grep", {"pattern": f"{word}_{i % 50}", "path": "src"}
        output, ok = _output(rng, i, kind if kind != "edit" else "read")
        if kind == "edit":
            output = f"The file /repo/src/{word}_{i % 97}.py has been updated."
        call_id = f"toolu_{i:08d}"
        seq = len(lines) + 1
        lines += [
            {"v": 1, "seq": seq, "ts": ts, "type": "message", "role": "assistant",
             "text": f"Next I look at the {word} of step {i}."},
            {"v": 1, "seq": seq + 1, "ts": ts + 0.1, "type": "usage", "input_tokens": 900 + i,
             "output_tokens": 120, "cost_usd": 0.004, "answer": f"msg_{i}"},
            {"v": 1, "seq": seq + 2, "ts": ts + 0.2, "type": "tool_call", "call_id": call_id,
             "tool": tool, "args": args},
            {"v": 1, "seq": seq + 3, "ts": ts + 1.5, "type": "tool_result", "call_id": call_id,
             "ok": ok, "output": output, "output_bytes": len(output), "duration_ms": 1300.0,
             "error": None if ok else "exit code 1"},
        ]
    return [json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in lines[:count]]


def _parse(lines: list[bytes]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines]


def measure(lines: list[bytes], rounds: int = 3) -> tuple[float, float, int]:
    """(best CPU seconds of the replay, of the json.loads anchor, the replay's findings), the
    two interleaved."""
    load_all()
    policy = Policy.profile("default")
    events = _parse(lines)
    replay = anchor = float("inf")
    found = 0
    for _ in range(rounds):
        start = time.process_time()
        _parse(lines)
        anchor = min(anchor, time.process_time() - start)
        start = time.process_time()
        report = analyze_events(events, policy, session="replay", source="bench")
        replay = min(replay, time.process_time() - start)
        found = len(report.findings)
    return replay, anchor, found


def run(scale: float = 1.0) -> list[Figure]:
    count = max(400, int(EVENTS * scale))
    lines = session_lines(count)
    replay, anchor, found = measure(lines)
    return [
        Figure("replay: engine per event vs json.loads per line",
               round(replay / count * 1e6, 2), "µs", baseline=round(anchor / count * 1e6, 2),
               max_ratio=MAX_RATIO,
               note=f"{count:,} events, {count / replay:,.0f} events/s, {found} findings"),
    ]


if __name__ == "__main__":
    import sys

    for fig in run(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0):
        print(fig)
