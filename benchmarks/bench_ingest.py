"""Ingest: parse and validate a generated 200,000-event log, against a bare `json.loads` loop.

Best of three interleaved runs each, over the same file. The issue's figure: `parse_line` on
every line (validated into its pydantic model) against the bare loop that reads the file and
runs `json.loads` on every line. A second figure: a `Tailer` first load, which does what the
dashboard does (read, split, parse, validate, and keep 200,000 events and their offsets),
against the same `json.loads` loop keeping its 200,000 dicts (keeping objects alive costs both
sides memory growth, so that is the fair baseline for it).
"""

import json
import random
import shutil
from pathlib import Path

from common import Figure, best_of, work_dir

from supervisor.protocol.codec import BadLine, parse_line
from supervisor.protocol.lines import encode_line
from supervisor.store.tailer import Tailer

EVENTS = 200_000
TARGET_RATIO = 2.0


def make_log(path: Path, count: int, seed: int = 7) -> None:
    """A realistic mix: mostly tool calls, results (with outputs) and verdicts."""
    rng = random.Random(seed)
    words = ["pytest", "src/app.py", "error", "assert", "def", "return", "import", "ok", "line"]
    kinds = ["tool_call"] * 30 + ["tool_result"] * 30 + ["verdict"] * 20 + ["message"] * 10 + [
        "usage"] * 5 + ["detection", "heartbeat", "checkpoint", "limit", "escalation"]
    with open(path, "wb") as f:
        for seq in range(1, count + 1):
            call = f"c{seq // 3}"
            base = {"v": 1, "seq": seq, "ts": 1.7e9 + seq * 0.01}
            text = " ".join(rng.choices(words, k=rng.randint(3, 60)))
            kind = rng.choice(kinds)
            body: dict = {
                "tool_call": {"call_id": call, "tool": "bash", "args": {"command": text}},
                "tool_result": {"call_id": call, "ok": rng.random() > 0.2, "output": text * 4,
                                "output_bytes": len(text) * 4, "output_hash": "ab" * 8,
                                "error": None, "duration_ms": 12.5},
                "verdict": {"call_id": call, "action": "allow", "level": 0, "reason": None,
                            "message": None},
                "message": {"role": "assistant", "text": text},
                "usage": {"input_tokens": 1200, "output_tokens": 80, "cost_usd": 0.01},
                "detection": {"detector": "repeat", "level": 1, "signature": "s" * 16,
                              "evidence": [seq - 4, seq - 2], "message": text},
                "heartbeat": {},
                "checkpoint": {"checkpoint_id": "cp", "label": text[:30], "commit": "f" * 40,
                               "at_seq": seq, "files": 3},
                "limit": {"name": "tool_calls", "value": seq, "limit": 1e6, "action": "warn"},
                "escalation": {"escalation_id": f"e{seq}", "level": 3, "reason": text,
                               "evidence": [seq - 1], "options": ["approve", "abort"],
                               "deadline_ts": None, "fallback": "abort"},
            }[kind]
            f.write(encode_line({**base, "type": kind, **body}))



def run(scale: float = 1.0) -> list[Figure]:
    count = max(100, int(EVENTS * scale))
    path = work_dir("ingest") / "events.jsonl"
    make_log(path, count)
    lines = path.read_bytes().splitlines()

    def baseline() -> None:
        for line in path.read_bytes().splitlines():
            json.loads(line)

    def baseline_kept() -> None:
        kept = [json.loads(line) for line in path.read_bytes().splitlines()]
        assert len(kept) == count

    def ours() -> None:
        for line in path.read_bytes().splitlines():
            parse_line(line)

    def tailer() -> None:
        batch = Tailer(path).poll()
        assert len(batch.events) == count and not batch.bad_lines

    assert not any(isinstance(parse_line(x), BadLine) for x in lines[:1000])
    runs = 3 if scale >= 1 else 1
    base, parse, base_kept, tail = best_of(runs, baseline, ours, baseline_kept, tailer)
    size_mb = path.stat().st_size / 1e6
    shutil.rmtree(path.parent, ignore_errors=True)
    note = f"{count:,} events, {size_mb:.0f} MB; best of {runs}"
    return [
        Figure("parse_line per line", parse * 1e3, "ms", base * 1e3, TARGET_RATIO, note=note),
        Figure("Tailer first load, events kept", tail * 1e3, "ms", base_kept * 1e3,
               TARGET_RATIO, note="baseline: the json.loads loop keeping its results too"),
        Figure("events per second (Tailer)", count / tail, "ev/s"),
    ]
