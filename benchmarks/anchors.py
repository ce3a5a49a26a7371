"""The documented loop rules of other agents, re-implemented from
/work/shared/reference/loop-detection-anchors.md, to score beside ours on the same runs.

Each anchor takes a run's protocol events and returns the 0-based tool-call steps at which it
would fire (every step where its condition holds, so episodes can be scored one by one).
"""

from collections.abc import Callable
from typing import Any

import common  # noqa: F401  (puts the repository on sys.path)

from supervisor.engine.fingerprint import canonical_args, normalise_output

Anchor = Callable[[list[dict[str, Any]]], list[int]]


def calls(events: list[dict[str, Any]]) -> list[tuple[str, str | None, bool | None]]:
    """(call key, normalised output, ok) per tool call, in order."""
    out: list[list[Any]] = []
    index: dict[str, int] = {}
    for e in events:
        if e.get("type") == "tool_call":
            index[str(e.get("call_id"))] = len(out)
            out.append([f"{e.get('tool')}:{canonical_args(e.get('args'))}", None, None])
        elif e.get("type") == "tool_result" and str(e.get("call_id")) in index:
            c = out[index[str(e.get("call_id"))]]
            c[1], c[2] = normalise_output(str(e.get("output") or "")), bool(e.get("ok"))
    return [(a, b, c) for a, b, c in out]


def identical_consecutive(n: int) -> Anchor:
    """Cline / Roo Code / OpenCode / Gemini CLI: n identical consecutive calls, outcome
    ignored."""
    def detect(events: list[dict[str, Any]]) -> list[int]:
        fires, run, last = [], 0, None
        for i, (key, _, _) in enumerate(calls(events)):
            run = run + 1 if key == last else 1
            last = key
            if run >= n:
                fires.append(i)
        return fires
    return detect


def seed_rule(events: list[dict[str, Any]]) -> list[int]:
    """The seeds' rule: 3 identical consecutive calls, or 3 consecutive failures with the
    same (normalised) error output."""
    fires = set(identical_consecutive(3)(events))
    steps = calls(events)
    for i in range(2, len(steps)):
        last3 = steps[i - 2: i + 1]
        if all(ok is False for _, _, ok in last3) and len({out for _, out, _ in last3}) == 1:
            fires.add(i)
    return sorted(fires)


def openhands_classic(events: list[dict[str, Any]]) -> list[int]:
    """OpenHands: 4 identical action+observation pairs; 3 identical actions each ending in an
    error; A-B alternation over 6 pairs."""
    steps = calls(events)
    fires = []
    for i in range(len(steps)):
        last4 = steps[max(0, i - 3): i + 1]
        last3 = steps[max(0, i - 2): i + 1]
        last6 = steps[max(0, i - 5): i + 1]
        if (len(last4) == 4 and len({(k, o) for k, o, _ in last4}) == 1) or (
                len(last3) == 3 and len({k for k, _, _ in last3}) == 1
                and not any(ok for _, _, ok in last3)) or (
                len(last6) == 6 and all(last6[j][:2] == last6[j % 2][:2] for j in range(6))
                and last6[0][0] != last6[1][0]):
            fires.append(i)
    return fires


ANCHORS: dict[str, Anchor] = {
    "cline soft / opencode (3 identical)": identical_consecutive(3),
    "roo code (4th identical blocked)": identical_consecutive(4),
    "gemini cli (5 identical)": identical_consecutive(5),
    "seed rule (identical x3 or same error x3)": seed_rule,
    "openhands classic": openhands_classic,
}
