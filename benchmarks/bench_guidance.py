"""Self-healing guidance: what a failed edit's answer costs.

- hook answer to a failed edit: Claude Code's PostToolBatch carrying an `Edit` whose
  `old_string` is not in a 5,000-line file (the guard reads the file, finds the closest region,
  builds the hint), in-process through the hook runtime, against the same answer for an `Edit`
  of a file that does not exist (the same path without the file's work). Target: at most 6x: a
  failed edit is rare, and the answer saves the agent a turn.
- closest match at the guard's read bound: a 1 MiB file (about 26,000 lines; the guard never
  reads a larger one), against the bare work any line-similarity search does: normalising the
  lines and scanning them with rapidfuzz once per vote line. Target: at most 2x: everything
  else (the exact and whitespace checks, the alignment, the region) stays small beside it.

Search texts are six lines of the file with one line changed, as agents get them wrong; each
measured call searches a different place, and is the first failure of its own session, so the
engine's loop detectors never refuse or hold one (what is measured is the guidance).
"""

import json
import random
import shutil
from pathlib import Path

from common import Figure, best_of, work_dir

from supervisor.engine.closest import closest_match
from supervisor.hooks.budget import Budget
from supervisor.hooks.runtime import run_safely

LINES = 5000
WORDS = ("alpha", "beta", "value", "index", "result", "compute", "self", "return", "if", "for",
         "in", "range", "data", "items", "key", "None", "append", "len")


def source(lines: int, seed: int = 7) -> list[str]:
    """Code-like lines: indented, words repeating (as code does), each one different."""
    rng = random.Random(seed)
    return [" " * (4 * rng.randint(0, 3)) + " ".join(rng.choice(WORDS) for _ in
                                                     range(rng.randint(2, 8))) + f"  # {i}"
            for i in range(lines)]


def wrong_search(lines: list[str], at: int) -> str:
    """Six lines from `at` with the third one changed."""
    span = list(lines[at:at + 6])
    span[2] = span[2].replace("a", "A", 1) + " extra"
    return "\n".join(span)


def hook_answer(scale: float) -> Figure:
    base = work_dir("guidance")
    try:
        return _hook_answer(base, scale)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _hook_answer(base: Path, scale: float) -> Figure:
    root, ws = base / "store", base / "ws"
    root.mkdir()
    ws.mkdir()
    (root / "policy.toml").write_text("[guard]\ncheckpoints = false\n")
    lines = source(LINES)
    (ws / "big.py").write_text("\n".join(lines) + "\n")
    runs = max(3, int(15 * scale))
    counter = iter(range(10**6))

    def call(path: str, at: int) -> None:
        n = next(counter)
        search = wrong_search(lines, at)
        payload = {"session_id": f"bench-{n}", "cwd": str(ws),
                   "hook_event_name": "PostToolBatch",
                   "transcript_path": str(base / "none.jsonl"), "tool_calls": [{
                       "tool_name": "Edit", "tool_use_id": f"toolu_{n}",
                       "tool_input": {"file_path": path, "old_string": search,
                                      "new_string": f"x{n}"},
                       "tool_response": "<tool_use_error>String to replace not found in "
                                        "file.</tool_use_error>"}]}
        answer = run_safely("claude-code", json.dumps(payload).encode(), root, Budget(60),
                            _complain)
        if path.endswith("big.py") and "The closest text is at" not in answer:
            raise RuntimeError(f"no region in the answer: {answer[:300]}")

    spots = iter(range(100, LINES - 10, 37))
    call(str(ws / "big.py"), next(spots))  # warm: rapidfuzz is imported
    ours, plain = best_of(runs, lambda: call(str(ws / "big.py"), next(spots)),
                          lambda: call(str(ws / "missing.py"), next(spots)))
    return Figure("hook answer to a failed edit, 5,000-line file", ours * 1000, "ms",
                  plain * 1000, max_ratio=6,
                  note="PostToolBatch in-process, vs the same answer for a missing file")


def match_at_the_bound(scale: float) -> Figure:
    from rapidfuzz import fuzz, process

    from supervisor.engine import closest

    lines = source(int(LINES * 5.2), seed=4)  # about 1 MiB, the guard's read bound
    text = ("\n".join(lines) + "\n")[: 1024 * 1024 - 1]
    runs = max(3, int(15 * scale))
    spots = iter(range(500, len(lines) - 10, 509))
    closest_match(text, wrong_search(lines, 50))  # warm

    def bare_scan() -> None:
        """The least a line-similarity search does: normalise the lines, scan them with
        rapidfuzz once per vote line."""
        norm = [" ".join(line.split()) for line in text.split("\n")]
        query = wrong_search(lines, next(spots)).split("\n")
        for i in range(closest._VOTE_LINES):
            process.extract(" ".join(query[i % len(query)].split()), norm, scorer=fuzz.ratio,
                            limit=closest._HITS_PER_LINE, score_cutoff=closest._VOTE_CUTOFF)

    ours, bare = best_of(runs, lambda: closest_match(text, wrong_search(lines, next(spots))),
                         bare_scan)
    return Figure(f"closest match at the 1 MiB read bound ({len(text) // 1024} KiB)",
                  ours * 1000, "ms", bare * 1000, max_ratio=2,
                  note="vs normalising the lines and scanning them with rapidfuzz once per vote "
                       "line")


def _complain(message: str) -> None:
    raise RuntimeError(message)


def run(scale: float = 1.0) -> list[Figure]:
    return [hook_answer(scale), match_at_the_bound(scale)]

