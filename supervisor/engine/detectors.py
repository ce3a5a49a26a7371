"""The detectors: each a small named unit with documented thresholds (see docs/engine.md).

Observe-time detectors look at a step that has just completed (its call, outcome and workspace)
and return a `Finding` or None; a finding at level 1 is a nudge, level 3 an escalation. Blocks
(level 2) happen before a call runs, in the `blocks_*` functions, when the call would continue
a pattern a detector already saw. Every function reads only the bounded look-back of `State`,
so its cost does not grow with the session.

A step is a dict: `i` (0-based step), `seq` (of its tool_call), `tool`, `cat` (category), `sig`
(call signature), `canon` (canonical arguments, cut), `ws` (workspace version), `ok`, `out`
(outcome hash), `err` (error class), `empty` (the output says nothing), `novel` (an output not
seen before), `path`, `read` (a file read the cache may answer), `blk` (why `check` refused it),
`t` (time of the check).
"""

from collections.abc import Iterator
from itertools import islice
from typing import Any

from supervisor.engine import guidance as g
from supervisor.engine.fingerprint import (
    GENERIC_ERROR_CLASSES,
    KNOWN_ERROR_CLASSES,
    TRANSIENT_ERROR_CLASSES,
)
from supervisor.engine.state import State
from supervisor.engine.types import ACTION_BY_LEVEL, Finding

Params = dict[str, Any]


def finding(detector: str, level: int, sig: str, evidence: list[int], message: str,
            step: int, action: str | None = None) -> Finding:
    return Finding(detector, level, sig, evidence[-20:], message,
                   action or ACTION_BY_LEVEL[level], step)  # type: ignore[arg-type]


def recent(st: State, n: int) -> Iterator[dict[str, Any]]:
    """The last `n` completed steps, newest first."""
    return islice(reversed(st.hist), n)


# --- exact repeat ---------------------------------------------------------------------------

def same_key_outcomes(st: State, sig: str, ws: int, lookback: int) -> list[dict[str, Any]]:
    """Completed steps of this call in this workspace within the look-back, newest first."""
    return [s for s in recent(st, lookback) if s["sig"] == sig and s["ws"] == ws]


def identical_run(prior: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest prior steps that share the newest one's outcome (interleaving allowed)."""
    if not prior:
        return []
    out = prior[0]["out"]
    return [s for s in prior if s["out"] == out]


def exact_repeat(st: State, step: dict[str, Any], p: Params, lookback: int) -> Finding | None:
    """The same call with the same outcome in an unchanged workspace, within the look-back."""
    prior = same_key_outcomes(st, step["sig"], step["ws"], lookback)[1:]  # [0] is this step
    same = [s for s in prior if s["out"] == step["out"]]
    n = len(same) + 1
    strict = not step["ok"] and step["err"] not in TRANSIENT_ERROR_CLASSES
    threshold = p["error_nudge"] if strict else p["nudge"]
    block = p["error_block"] if strict else p["block"]
    if n < threshold or n >= block or step.get("blk"):
        return None
    steps = sorted([s["i"] for s in same] + [step["i"]])
    msg = (
        f"Loop: you ran the identical call {g.short_call(step['tool'], step['canon'])} at "
        f"{g.steps_text(steps)} with {g.outcome_text(step['ok'], step['err'])} and nothing "
        f"changed in between. Do not repeat it: {g.advice(step['cat'], step['err'])}."
    )
    evidence = sorted([*(s["seq"] for s in same), step["seq"]])
    return finding("exact_repeat", 1, step["sig"], evidence, msg, step["i"])


def blocks_exact(st: State, sig: str, ws: int, p: Params, lookback: int,
                 pending_blocked: int) -> tuple[int, list[dict[str, Any]]] | None:
    """(level, evidence steps) when this call would repeat a known outcome too often."""
    run = identical_run(same_key_outcomes(st, sig, ws, lookback))
    if not run:
        return None
    strict = not run[0]["ok"] and run[0]["err"] not in TRANSIENT_ERROR_CLASSES
    block = p["error_block"] if strict else p["block"]
    attempts = len(run) + pending_blocked + 1
    stop = p.get("stop")
    if stop and attempts >= stop:
        return 4, run
    if attempts >= p["escalate"] and attempts >= block:
        return 3, run
    if attempts >= block:
        return 2, run
    return None


# --- similar calls --------------------------------------------------------------------------

def _ratio(a: str, b: str, cutoff: float) -> float:
    from rapidfuzz.fuzz import ratio  # lazy: ~40 ms import the hook should not always pay

    return ratio(a, b, score_cutoff=cutoff * 100) / 100


def _uninformative(step: dict[str, Any]) -> bool:
    return bool(step.get("empty")) and (step["ok"] or step["err"] not in KNOWN_ERROR_CLASSES)


def outcome_class(step: dict[str, Any]) -> str:
    """Errors of a known class compare by that class; other errors and successes by their
    normalised output (two scripts failing with different messages are not alike)."""
    err = step["err"]
    if not step["ok"] and err in KNOWN_ERROR_CLASSES:
        return f"err:{err}"
    return f"out:{step['out']}"


def similar_calls(st: State, step: dict[str, Any], p: Params) -> Finding | None:
    """Calls of one tool whose canonical arguments are ≥ threshold alike, same outcome class.

    Calls whose output says nothing (blank, "No matches found") are left out unless they failed
    with a known error class: searching one name after another and finding nothing is
    exploring."""
    if _uninformative(step):
        return None
    canon = step["canon"][: p["max_chars"]]
    cls = outcome_class(step)
    cluster = []
    sigs = {step["sig"]}
    for s in islice(recent(st, p["lookback"]), 1, None):
        if s["tool"] != step["tool"] or s["ws"] != step["ws"] or outcome_class(s) != cls:
            continue
        if _uninformative(s):
            continue
        if s["sig"] == step["sig"] or _ratio(canon, s["canon"][: p["max_chars"]],
                                               p["threshold"]) >= p["threshold"]:
            cluster.append(s)
            sigs.add(s["sig"])
    n = len(cluster) + 1
    if len(sigs) < 2 or n < p["nudge"]:
        return None
    flag = next((f for f in st.similar_flags if f["tool"] == step["tool"] and f["ws"] == step["ws"]
                 and f["cls"] == cls), None)
    if flag is None:
        flag = {"tool": step["tool"], "ws": step["ws"], "cls": cls, "n": 0, "blocked": 0,
                "canon": canon, "err": step["err"], "ok": step["ok"], "cat": step["cat"],
                "steps": [], "seqs": []}
        st.similar_flags.append(flag)
        del st.similar_flags[:-8]
    was = flag["n"]
    flag.update(n=max(n, was), canon=canon)
    flag["steps"] = sorted({s["i"] for s in cluster} | {step["i"]})[-20:]
    flag["seqs"] = sorted({s["seq"] for s in cluster} | {step["seq"]})[-20:]
    if step.get("blk"):
        return None
    level = 3 if n >= p["escalate"] else (1 if was < p["nudge"] else 0)
    if level == 0:
        return None
    msg = (
        f"Loop: {n} near-identical {step['tool']} calls (arguments ≥ {p['threshold']:.0%} alike) "
        f"at {g.steps_text(flag['steps'])} all gave {g.outcome_text(step['ok'], step['err'])}. "
        f"Small variations will not help: {g.advice(step['cat'], step['err'])}."
    )
    return finding("similar_calls", level, step["sig"], flag["seqs"], msg, step["i"])


def blocks_similar(st: State, tool: str, canon: str, ws: int, p: Params
                   ) -> tuple[int, dict[str, Any]] | None:
    """(level, flag) when the call is one more variation of a flagged similar-call cluster."""
    for flag in st.similar_flags:
        if flag["tool"] != tool or flag["ws"] != ws:
            continue
        if _ratio(canon[: p["max_chars"]], flag["canon"], p["threshold"]) < p["threshold"]:
            continue
        attempts = flag["n"] + flag["blocked"] + 1
        if attempts >= p["escalate"]:
            return 3, flag
        if attempts >= p["block"]:
            return 2, flag
    return None


# --- cycles ---------------------------------------------------------------------------------

def cycle(st: State, step: dict[str, Any], p: Params) -> Finding | None:
    """A-B-A-B and longer periods (2-6) of identical calls and outcomes, nothing changing."""
    keys = st.keys
    best = None
    for period in range(p["min_period"], p["max_period"] + 1):
        name = str(period)
        run = st.cycle_runs.get(name, 0)
        run = run + 1 if len(keys) > period and keys[-1] == keys[-1 - period] else 0
        st.cycle_runs[name] = run
        if best is None and run:
            length = run + period
            need = max(2 * period, p["min_steps"])
            last = list(islice(reversed(keys), period))
            if length >= need and len(set(last)) > 1:
                best = (period, length, need)
    if best is None:
        if st.cycle and (st.cycle.get("ws") != step["ws"] or not _continues(st, step)):
            st.cycle = None
        return None
    period, length, need = best
    steps = [s for s in islice(recent(st, length), length)]
    sigs = [s["sig"] for s in reversed(steps[:period])]
    state = st.cycle
    if state is None or state["period"] != period or state["ws"] != step["ws"]:
        state = {"period": period, "sigs": sigs, "ws": step["ws"], "length": length,
                 "need": need, "blocked": 0, "pos": 0, "fired": 0}
        st.cycle = state
    evidence = sorted(s["seq"] for s in steps)
    tools = " → ".join(g.short_call(s["tool"], s["canon"], 48) for s in reversed(steps[:period]))
    state.update(length=length, sigs=sigs, pos=0, seqs=evidence[-20:], tools=tools,
                 steps=sorted(s["i"] for s in steps)[-20:])
    level = 0
    if length >= need + p["escalate_periods"] * period and state["fired"] < 3:
        level = 3
    elif state["fired"] == 0:
        level = 1
    if level == 0 or step.get("blk"):
        return None
    state["fired"] = level
    msg = (
        f"Loop: the same {period} calls ({tools}) repeat with identical results "
        f"{length // period} times over {g.steps_text(sorted(s['i'] for s in steps))} and nothing "
        f"changed. Break the cycle: {g.advice(step['cat'], step['err'])}."
    )
    return finding("cycle", level, _cycle_signature(sigs), evidence, msg, step["i"])


def _continues(st: State, step: dict[str, Any]) -> bool:
    return bool(st.cycle) and step["sig"] in st.cycle["sigs"]


def _cycle_signature(sigs: list[str]) -> str:
    start = sigs.index(min(sigs))
    return "cycle:" + "-".join(s[:8] for s in sigs[start:] + sigs[:start])


def blocks_cycle(st: State, sig: str, ws: int, p: Params) -> tuple[int, dict[str, Any]] | None:
    """(level, cycle) when the call is the next element of a detected cycle."""
    c = st.cycle
    if not c or c["ws"] != ws or c["fired"] == 0:
        return None
    expected = c["sigs"][c["pos"] % c["period"]]
    if sig != expected:
        return None
    attempts = c["length"] + c["blocked"] + 1
    if attempts >= c["need"] + p["escalate_periods"] * c["period"]:
        return 3, c
    if attempts >= c["need"] + p["block_periods"]:
        return 2, c
    return None


# --- same error -----------------------------------------------------------------------------

def error_group(tool: str, category: str) -> str:
    """Failures are compared within one tool, and across all mutating tools (an Edit, then a
    MultiEdit, then a Write failing the same way is one streak)."""
    return "mutate" if category == "mutate" else tool


def same_error(st: State, step: dict[str, Any], p: Params) -> Finding | None:
    """The same specific error class again and again from one tool while the arguments vary."""
    group = error_group(step["tool"], step["cat"])
    if step["ok"] or step["err"] in GENERIC_ERROR_CLASSES:
        if step["ok"] and st.same_error and st.same_error["tool"] == group:
            st.same_error = None
        return None
    chain = [step]
    for s in islice(recent(st, p["lookback"]), 1, None):
        if error_group(s["tool"], s["cat"]) != group:
            if s["ok"] and s["novel"] and s["cat"] in ("read", "run"):
                break  # something new was learned in between
            continue
        if s["ok"] or s["err"] != step["err"] or s["ws"] != step["ws"]:
            break
        chain.append(s)
    n = len(chain)
    if len({s["sig"] for s in chain}) < 2:
        return None
    st.same_error = {"tool": group, "err": step["err"], "n": n, "last": step["i"],
                     "path": step["path"],
                     "cat": step["cat"], "blocked": 0, "seqs": sorted(s["seq"] for s in chain),
                     "steps": sorted(s["i"] for s in chain)}
    if step.get("blk"):
        return None
    stop = p.get("stop")
    if stop and n >= stop:
        level = 4
    elif n >= p["escalate"]:
        level = 3
    elif n == p["nudge"]:
        level = 1
    else:
        return None
    who = "edits" if group == "mutate" else step["tool"]
    msg = (
        f"Loop: {who} failed with the same error ({step['err']}) {n} times with "
        f"different arguments at {g.steps_text(st.same_error['steps'])}. Varying the arguments "
        f"does not fix it: {g.advice(step['cat'], step['err'])}."
    )
    return finding("same_error", level, f"error:{group}:{step['err']}",
                   st.same_error["seqs"], msg, step["i"])


def blocks_same_error(st: State, tool: str, category: str, path: str | None, p: Params
                      ) -> tuple[int, dict[str, Any]] | None:
    """(level, state) when the tool is called again right after a same-error streak (for
    edits: on the same file)."""
    se = st.same_error
    if not se or se["tool"] != error_group(tool, category):
        return None
    if se["tool"] == "mutate" and se.get("path") and path != se["path"]:
        return None
    attempts = se["n"] + se["blocked"] + 1
    if attempts < p["block"]:
        return None
    last = st.hist[-1] if st.hist else None
    if last is None or last["i"] != se["last"]:
        return None  # something else happened since the last failure (e.g. a re-read)
    if p.get("stop") and attempts >= p["stop"]:
        return 4, se
    return (3 if attempts >= p["escalate"] else 2), se


# --- error rate -----------------------------------------------------------------------------

def _hard_failure(step: dict[str, Any]) -> bool:
    """A failure that counts for the error rate: not a read-only command's bare non-zero exit
    (grep finding nothing exits 1)."""
    return not step["ok"] and not (step["cat"] == "read" and step["err"] in GENERIC_ERROR_CLASSES)


def error_rate(st: State, step: dict[str, Any], p: Params) -> Finding | None:
    """At least `ratio` of the last `min_steps` to `window` steps failed (the longest such
    trailing stretch is reported)."""
    er = st.error_rate
    if er["cooldown"] > 0:
        er["cooldown"] -= 1
        return None
    window = list(islice(reversed(st.hist), p["window"]))
    if len(window) < p["min_steps"] or not _hard_failure(step):
        return None
    flags = [_hard_failure(s) for s in window]
    size = next((n for n in range(len(window), p["min_steps"] - 1, -1)
                 if sum(flags[:n]) >= p["ratio"] * n), 0)
    if not size:
        er["fired"] = 0
        return None
    window = window[:size]
    errors = [s for s in window if _hard_failure(s)]
    er["fired"] += 1
    er["cooldown"] = p["window"] // 2
    level = 3 if er["fired"] >= p["escalate_after"] else 1
    classes = sorted({s["err"] for s in errors})
    msg = (
        f"{len(errors)} of the last {len(window)} calls failed ({', '.join(classes[:4])}). "
        f"Stop and re-plan: read the errors, check your assumptions about the environment, "
        f"and try a different approach."
    )
    return finding("error_rate", level, "error_rate", sorted(s["seq"] for s in errors), msg,
                   step["i"])


# --- no progress ----------------------------------------------------------------------------

def no_progress(st: State, step: dict[str, Any], progress: bool, p: Params) -> Finding | None:
    """Many steps without a workspace change or any new output."""
    if progress:
        st.no_progress = 0
        st.no_progress_fired = 0
        return None
    st.no_progress += 1
    n = st.no_progress
    if n >= p["escalate"] and st.no_progress_fired < 3:
        level = 3
    elif n >= p["nudge"] and st.no_progress_fired == 0:
        level = 1
    else:
        return None
    st.no_progress_fired = level
    steps = [s for s in islice(reversed(st.hist), n)]
    msg = (
        f"No progress for {n} steps (since step {steps[-1]['i']}): nothing changed in the "
        f"workspace and no call returned anything new. Summarise what you know, then change "
        f"strategy or ask for help."
    )
    return finding("no_progress", level, "no_progress", sorted(s["seq"] for s in steps), msg,
                   step["i"])


# --- polling --------------------------------------------------------------------------------

def polling(st: State, step: dict[str, Any], p: Params) -> Finding | None:
    """A poll whose output keeps changing is waiting; the same output too long is stuck."""
    entry = st.polls.get(step["sig"])
    if entry is None or entry["out"] != step["out"] or entry["ws"] != step["ws"]:
        entry = {"out": step["out"], "ws": step["ws"], "n": 0, "blocked": 0, "steps": [],
                 "seqs": [], "t0": step.get("t", 0.0)}
    entry["n"] += 1
    entry["steps"] = (entry["steps"] + [step["i"]])[-20:]
    entry["seqs"] = (entry["seqs"] + [step["seq"]])[-20:]
    st.polls.pop(step["sig"], None)
    st.polls[step["sig"]] = entry
    while len(st.polls) > 32:
        st.polls.pop(next(iter(st.polls)))
    n = entry["n"]
    if step.get("blk"):
        return None
    if n == p["escalate"]:
        level = 3
    elif n == p["nudge"]:
        level = 1
    else:
        return None
    waited = max(0.0, float(step.get("t", 0.0)) - float(entry.get("t0", 0.0)))
    msg = (
        f"Polling stuck: {g.short_call(step['tool'], step['canon'])} returned the same output "
        f"{n} times in a row over {waited:.0f} s ({g.steps_text(entry['steps'])}). "
        f"{g.STRATEGY['poll'].capitalize()}; if it is still working, wait longer between "
        f"checks."
    )
    return finding("polling", level, step["sig"], entry["seqs"], msg, step["i"])


def blocks_polling(st: State, sig: str, ws: int, p: Params
                   ) -> tuple[int, dict[str, Any]] | None:
    entry = st.polls.get(sig)
    if not entry or entry["ws"] != ws:
        return None
    attempts = entry["n"] + entry["blocked"] + 1
    if attempts >= p["escalate"]:
        return 3, entry
    if attempts >= p["block"]:
        return 2, entry
    return None
