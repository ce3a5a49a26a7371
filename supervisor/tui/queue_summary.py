"""A short, distinct summary of one escalation for the "Needs you" queue: what fired, how often,
what the loop cost since its onset, on which call (`exact_repeat ×3 · $1.84 · Bash “make
build”`, the agent's argument quoted; the count and the cost before the call, so a cut at the
line's end keeps them), so a queue of escalations that all start with the same prose
("Paused: this exact call (…") can be told apart at 80 columns.

Built from the model (the detection that led to it) and one read of the last evidence call from
the log; the sessions screen keeps it per escalation (an escalation never changes).
"""

from typing import Any

from supervisor.safetext import clean, quote
from supervisor.tui.model import SessionState

KEY_ARGUMENTS = ("command", "cmd", "file_path", "path", "pattern", "query", "url", "prompt")
"""Which argument names a call best, in this order; else its first text argument."""
CALL_LIMIT = 40


def escalation_summary(st: SessionState, esc: dict[str, Any]) -> str:
    """`detector ×N · tool key-argument` (the parts that are known)."""
    evidence = [n for n in esc.get("evidence") or []
                if isinstance(n, int) and not isinstance(n, bool)]
    what = _what(st, esc, evidence)
    parts = [f"{what} ×{len(evidence)}" if len(evidence) > 1 else what]
    cost = _cost(esc.get("spent"))
    if cost:
        parts.append(cost)
    call = _call(st, evidence)
    if call:
        parts.append(call)
    return " · ".join(parts)


def _what(st: SessionState, esc: dict[str, Any], evidence: list[int]) -> str:
    kind = clean(str(esc.get("kind") or ""), keep_newlines=False, limit=20)
    if kind and kind != "detection":  # limit, cycle
        return kind
    seq = esc.get("seq")
    before = [d for d in st.detections
              if not isinstance(seq, int) or isinstance(seq, bool) or d.seq < seq]
    related = [d for d in before if set(d.evidence) & set(evidence)] or before
    return related[-1].detector if related else kind or "escalation"  # cleaned by the model


def _cost(spent: object) -> str | None:
    """What the loop cost since its onset (`escalation.spent`, docs/protocol.md): `$1.84`, or
    its tokens when the cost is unknown."""
    if not isinstance(spent, dict):
        return None
    cost, tokens = spent.get("cost_usd"), spent.get("tokens")
    if isinstance(cost, int | float) and not isinstance(cost, bool) and cost > 0:
        return f"${cost:.2f}" if cost >= 0.01 else f"${cost:.4f}"
    if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0:
        return f"{tokens:,} tokens"
    return None


def _call(st: SessionState, evidence: list[int]) -> str | None:
    history = st.history
    for seq in reversed(evidence):
        index = history.index_of_seq(seq)
        if index is None or history.type_of(index) != "tool_call":
            continue
        event = history.event(index)
        if not isinstance(event, dict):
            continue
        args = event.get("args")
        key = None
        if isinstance(args, dict):
            named = [args.get(k) for k in KEY_ARGUMENTS if isinstance(args.get(k), str)]
            texts = [v for v in args.values() if isinstance(v, str)]
            key = (named or texts or [None])[0]
        tool = clean(str(event.get("tool") or "?"), keep_newlines=False, limit=20)
        # the argument is the agent's words: quoted, so none of it reads as the row's own
        return f"{tool} {quote(key, CALL_LIMIT)}" if key else tool
    return None
