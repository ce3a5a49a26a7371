"""A relay restarted on a long session: resuming the seal check from its saved state against
checking the session's file from its start.

The relay checks the seals of the lines that speak in the supervisor's voice before it ships
them (`store.voice`); a copy of an earlier sealed line is caught by its `seq`, which needs the
last seal that held before where the relay starts. A restarted relay keeps that `seq` in its
saved state under its own seal (`Position.sealed`, `voice.resume_seal`) and goes on from its
saved position; the baseline is what knowing it otherwise costs, and what the relay still does
with a state written by hand: every line from the file's start read again, each line of a
sealed type parsed and its seal checked.

The session: a `session_start` declaring its seals, then tool calls, results and `allow`
verdicts, with a sealed `nudge` verdict every 20 lines (about 300 bytes a line). CPU time of
the process (`process_time`) of making the session's `Shipper` with the saved state, the two
alternated A B B A over the rounds, median of the rounds.
"""

import dataclasses
import json
import statistics
import tempfile
import time
from pathlib import Path

from common import Figure

from supervisor.store.provenance import SEAL_FIELD, operator_key
from supervisor.store.redis.relay import Position, Shipper
from supervisor.store.voice import SEALED, SEALS_FIELD, line_seal

SESSION = "long"


def _write_session(root: Path, lines: int) -> None:
    key = operator_key(root)
    path = root / "sessions" / SESSION / "events.jsonl"
    path.parent.mkdir(parents=True)
    with path.open("w") as out:
        out.write(json.dumps({"v": 1, "seq": 1, "ts": 0.0, "type": "session_start",
                              "agent": "bench", SEALS_FIELD: list(SEALED)}) + "\n")
        for seq in range(2, lines + 1):
            line: dict[str, object] = {"v": 1, "seq": seq, "ts": float(seq)}
            if seq % 20 == 0:
                line |= {"type": "verdict", "action": "nudge", "call_id": f"c{seq}",
                         "message": "the same command failed three times; read the error"}
                line[SEAL_FIELD] = line_seal(key, SESSION, line)
            elif seq % 3 == 0:
                line |= {"type": "verdict", "action": "allow", "call_id": f"c{seq}"}
            elif seq % 3 == 1:
                line |= {"type": "tool_call", "call_id": f"c{seq}", "tool": "Bash",
                         "args": {"command": f"pytest -q tests/test_dates.py -k case_{seq}"}}
            else:
                line |= {"type": "tool_result", "call_id": f"c{seq}", "ok": False,
                         "output": "1 failed: assert parse('2024-02-30') is None " * 3}
            out.write(json.dumps(line) + "\n")


def _cpu_to_resume(root: Path, state: dict[str, object]) -> float:
    started = time.process_time()
    Shipper(root, SESSION, Position(**state))  # type: ignore[arg-type]
    return time.process_time() - started


def run(scale: float = 1.0) -> list[Figure]:
    lines = max(2_000, round(200_000 * scale))
    rounds = max(2, round(6 * scale))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write_session(root, lines)
        first = Shipper(root, SESSION, Position())
        more = True
        while more:  # shipped, and Redis confirmed it all
            more = first.read()
            first.confirmed(first.pos.gen, first.read_to)
        saved = dataclasses.asdict(first.saved())
        assert saved["sealed"] == lines - lines % 20
        by_hand = {**saved, "vouched": ""}
        resumed, checked = [], []
        for index in range(rounds):
            order = ((saved, resumed), (by_hand, checked))
            for state, into in order if index % 2 == 0 else reversed(order):
                into.append(_cpu_to_resume(root, state) * 1e3)
        size = first.read_to / 1e6
    return [Figure("relay restart: seal check resumed from its saved state vs from the start",
                   statistics.median(resumed), "ms", statistics.median(checked),
                   max_ratio=0.05,
                   note=f"a session of {lines} lines ({size:.0f} MB), {rounds} rounds, CPU "
                        "time, ABBA")]
