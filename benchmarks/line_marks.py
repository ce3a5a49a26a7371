"""What the guard's marks cost on the hook path (docs/security.md, "The guard believes only its
own calls"): the event writer appending the four lines of one Factory Droid call (the agent's
text, the call, its `allow` verdict, its result, as `droid_steps` writes them) with the guard's
sealer, which marks three of them, against the same writer without one (as they were written
before marks).

`python benchmarks/line_marks.py`: CPU a call of each, interleaved (ABBA) in one process, and
one BLAKE2b mark against an HMAC-SHA256 of the same line. `python benchmarks/line_marks.py
plain|marked CALLS` only appends, for instruction counts: `valgrind --tool=callgrind` of 1,000
and of 3,000 calls of each, the difference of the differences over 2,000 is a call's.
"""

import hashlib
import hmac
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LINES: list[dict[str, Any]] = [
    {"type": "message", "role": "assistant", "text": "Next I read module_20.txt."},
    {"type": "tool_call", "call_id": "call-5b8cca45b50f0fb0-20", "tool": "Bash",
     "args": {"command": "cat module_20.txt", "description": "run it (risk: low reads only)"}},
    {"type": "verdict", "call_id": "call-5b8cca45b50f0fb0-20", "action": "allow", "level": 0,
     "reason": "", "message": None, "gauges": {
         "consecutive_tool_calls": 1, "iterations_per_session": 20, "errors_per_session": 0,
         "iterations_per_cycle": 20, "duration_s": 0.033542, "tokens": 0, "cost_usd": 0.0,
         "actions_per_task": 20, "resets_per_conversation": 0}},
    {"type": "tool_result", "call_id": "call-5b8cca45b50f0fb0-20", "ok": True,
     "output": "module 20: NAME_20\n\n\n[Process exited with code 0]", "output_bytes": 49,
     "output_hash": "35501ad316ea869d", "error": None, "duration_ms": None, "tool": "Bash"},
]


def writers(root: Path) -> dict[str, Any]:
    from supervisor.store.voice import LineSealer
    from supervisor.store.writer import LineWriter

    (root / "s").mkdir()
    sealer = LineSealer(root, "s")
    sealer.mark(b"{}\n")  # the key read once, as a guard's journal reads it
    return {"plain": LineWriter(root / "s" / "plain.jsonl"),
            "marked": LineWriter(root / "s" / "marked.jsonl", sealer=sealer)}


def append(writer: Any, calls: int) -> None:
    for _ in range(calls):
        for line in LINES:
            writer.append(dict(line))


def compare(rounds: int = 40, calls: int = 200) -> None:
    per_call: dict[str, list[float]] = {"plain": [], "marked": []}
    with tempfile.TemporaryDirectory() as tmp:
        kinds = writers(Path(tmp))
        for n in range(rounds):
            order = ("plain", "marked") if n % 4 in (0, 3) else ("marked", "plain")
            for name in order:
                started = time.thread_time()
                append(kinds[name], calls)
                per_call[name].append((time.thread_time() - started) / calls * 1e6)
        for writer in kinds.values():
            writer.close()
    plain, marked = (statistics.median(per_call[k]) for k in ("plain", "marked"))
    print(f"the writer, a call's four lines: plain {plain:.1f} us, marked {marked:.1f} us "
          f"(+{marked - plain:.1f} us, {marked / plain:.3f}x)")
    key, line = b"k" * 64, b'{"type":"tool_call","args":{"command":"cat module_20.txt"}}' * 6
    for name, mark in (("BLAKE2b mark", lambda: hashlib.blake2b(
            line, key=key, digest_size=16).hexdigest()),
            ("HMAC-SHA256", lambda: hmac.digest(key, line, "sha256").hex())):
        started = time.thread_time()
        for _ in range(20_000):
            mark()
        print(f"{name} of a {len(line)}-byte line: "
              f"{(time.thread_time() - started) / 20_000 * 1e6:.2f} us")


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("plain", "marked"):
        with tempfile.TemporaryDirectory() as tmp:
            append(writers(Path(tmp))[argv[0]], int(argv[1]) if len(argv) > 1 else 1000)
        return 0
    compare()
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main(sys.argv[1:]))
