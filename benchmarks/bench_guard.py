"""The guard: overhead per tool call, and checkpoint time on a 5,000-file work tree.

- Overhead per call: `Guard.pre_call` (engine check with a 1,000-step window, the session lock,
  the operator-command check, the `tool_call` and `verdict` events appended) against appending
  the same two events with plain `json.dumps` and one `os.write` each. The tool results are
  recorded too (the engine needs them) but outside the timed part, in both runs. A second
  figure compares the median cost of the last sixth of the calls with the first sixth.
- Checkpoints: the first checkpoint of a 5,000-file tree and a checkpoint after 20 files
  changed, against `git add -A && git commit` of the same tree in a plain repository.
"""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from common import Figure, work_dir

from supervisor.guard.checkpoints import CheckpointStore
from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings

CALLS = 3000
FILES = 5000
BENCH_POLICY = {
    "window": 1000,
    # No call-count limit may pause the run: every call must go through the whole check.
    "limits": {name: {"limit": 0} for name in (
        "consecutive_tool_calls", "iterations_per_session", "iterations_per_cycle",
        "actions_per_task")},
}
NO_CHECKPOINTS = GuardSettings(checkpoints=False, checkpoint_at_start=False, checkpoint_every=0)


def _calls(count: int) -> list[tuple[str, dict, str]]:
    """A realistic mix: reads, edits, test runs; some repeats, outputs that change."""
    out = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            out.append(("Read", {"file_path": f"/w/src/m{i % 40}.py"}, f"content {i}"))
        elif kind == 1:
            out.append(("Edit", {"file_path": f"/w/src/m{i % 40}.py", "old_string": f"a{i}",
                                 "new_string": f"b{i}"}, "ok"))
        elif kind == 2:
            out.append(("Bash", {"command": "pytest -q"}, f"{i % 7} failed"))
        else:
            out.append(("Grep", {"pattern": f"def f{i % 90}"}, f"match {i}"))
    return out


def overhead(scale: float) -> list[Figure]:
    """Each call through the guard, then the same call's two plain appends, one after the
    other: a busy moment of the machine hits both alike (they used to run one after the
    other, so a burst of the other jobs' load landed on one side only)."""
    base = work_dir("guard-overhead")
    try:
        return _overhead(base, scale)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _overhead(base: Path, scale: float) -> list[Figure]:
    count = max(200, int(CALLS * scale))
    calls = _calls(count)
    guard = Guard.open(base / "store", "bench", cwd=base, policy=BENCH_POLICY,
                       settings=NO_CHECKPOINTS, save_every_s=1.0)
    guard.start("bench")
    ours = plain = 0.0
    times: list[float] = []
    actions: dict[str, int] = {}
    fd = os.open(base / "plain.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    seq = 0
    try:
        for i, (tool, args, output) in enumerate(calls):
            started = time.perf_counter()
            verdict = guard.pre_call(tool, args, call_id=f"c{i}")
            times.append(time.perf_counter() - started)
            ours += times[-1]
            actions[verdict.action] = actions.get(verdict.action, 0) + 1
            if verdict.proceed:
                guard.post_call(f"c{i}", output, ok=True)

            started = time.perf_counter()
            for event in (
                {"type": "tool_call", "call_id": f"c{i}", "tool": tool, "args": args},
                {"type": "verdict", "call_id": f"c{i}", "action": "allow", "level": 0,
                 "reason": None, "message": None},
            ):
                seq += 1
                line = {"v": 1, "seq": seq, "ts": time.time(), **event}
                os.write(fd, (json.dumps(line) + "\n").encode())
            plain += time.perf_counter() - started
            os.write(fd, (json.dumps({"type": "tool_result", "output": output}) + "\n").encode())
    finally:
        os.close(fd)
    if actions.get("pause") or actions.get("stop"):
        raise RuntimeError(f"the benchmark's calls escalated: {actions}")
    guard.end()
    guard.close()
    per_call_us = ours / count * 1e6
    sixth = max(1, count // 6)
    early = sorted(times[:sixth])[sixth // 2]
    late = sorted(times[-sixth:])[sixth // 2]
    return [
        Figure("guard overhead per tool call (window 1,000)", round(per_call_us, 1), "us",
               baseline=round(plain / count * 1e6, 1), max_ratio=25.0, max_value=1000.0,
               note="check + record vs two json.dumps appends; verdicts: "
               + ", ".join(f"{k} {v}" for k, v in sorted(actions.items()))),
        Figure("guard cost per call, last sixth of the session", round(late * 1e6, 1), "us",
               baseline=round(early * 1e6, 1), max_ratio=3.0,
               note="median, vs the first sixth: the cost stays flat as the session grows"),
    ]


def _make_tree(root: Path, files: int) -> None:
    for i in range(files):
        directory = root / f"pkg{i % 50}" / f"sub{i % 7}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"mod{i}.py").write_text(f"# module {i}\n" + "x = 1\n" * (i % 30))
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.js").write_text("ignored\n")


def _git(cwd: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b")
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def _checkpoint_round(base: Path, files: int, ours_first: bool) -> tuple[float, ...]:
    """One round on fresh trees: (ours first, plain first, ours after 20 edits, plain after
    them), each side's step right after the other's (in `ours_first`'s order)."""
    tree, plain = base / "tree", base / "plain"
    _make_tree(tree, files)
    _make_tree(plain, files)
    store = CheckpointStore(base / "checkpoints.git", tree)

    def ours(label: str) -> float:
        started = time.perf_counter()
        store.create(label)
        return time.perf_counter() - started

    def bare(*steps: tuple[str, ...]) -> float:
        started = time.perf_counter()
        for step in steps:
            _git(plain, *step)
        return time.perf_counter() - started

    def both(label: str, *steps: tuple[str, ...]) -> tuple[float, float]:
        if ours_first:
            mine = ours(label)
            return mine, bare(*steps)
        theirs = bare(*steps)
        return ours(label), theirs

    first, plain_first = both("first", ("init", "-q"), ("add", "-A"),
                              ("commit", "-q", "-m", "first"))
    for i in range(20):
        for target in (tree, plain):
            path = target / f"pkg{i % 50}" / f"sub{i % 7}" / f"mod{i}.py"
            path.write_text(path.read_text() + f"y = {i}\n")
    second, plain_second = both("second", ("add", "-A"), ("commit", "-q", "-m", "second"))
    shutil.rmtree(base, ignore_errors=True)
    return first, plain_first, second, plain_second


def checkpoints(scale: float) -> list[Figure]:
    """Best of `rounds` on fresh trees, the order of the two sides alternating (A B, B A): a
    single run of each, one after the other, measured the machine's load as much as git."""
    files = max(200, int(FILES * scale))
    rounds = 3 if scale >= 0.5 else 2
    results = [_checkpoint_round(work_dir("guard-checkpoints"), files, index % 2 == 0)
               for index in range(rounds)]
    first, plain_first, second, plain_second = (min(r[k] for r in results) for k in range(4))
    note = f"best of {rounds} rounds on fresh trees, interleaved"
    return [
        Figure(f"first checkpoint, {files:,}-file tree", round(first * 1000, 1), "ms",
               baseline=round(plain_first * 1000, 1), max_ratio=2.0,
               note=f"vs git init + add -A + commit; {note}"),
        Figure(f"checkpoint after 20 edits, {files:,}-file tree", round(second * 1000, 1), "ms",
               baseline=round(plain_second * 1000, 1), max_ratio=4.0,
               note=f"vs git add -A + commit; {note}"),
    ]


def run(scale: float = 1.0) -> list[Figure]:
    return overhead(scale) + checkpoints(scale)


if __name__ == "__main__":
    for figure in run():
        print(figure)
