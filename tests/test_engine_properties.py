"""Properties: the engine never raises on arbitrary event sequences, and a restored snapshot
continues exactly as the original would."""

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supervisor.engine import Engine, Policy

TOOLS = ["Bash", "Read", "Edit", "Grep", "BashOutput", "str_replace_editor", "mcp__x__get", "?"]
COMMANDS = ["ls", "cat a.py", "pytest -q", "sleep 5", "sed -i s/a/b/ f", "python x.py",
            "grep -rn foo .", "curl localhost/status"]
OUTPUTS = ["", "ok", "No such file or directory", "String to replace not found",
           "SyntaxError: bad", "1 failed", "step 1", "step 2", "x" * 50]

junk = st.one_of(st.none(), st.integers(), st.text(max_size=8), st.booleans(),
                 st.lists(st.integers(), max_size=2), st.floats(allow_nan=False))
args = st.one_of(
    st.fixed_dictionaries({"command": st.sampled_from(COMMANDS)}),
    st.fixed_dictionaries({"file_path": st.sampled_from(["/a", "/b"])}),
    st.fixed_dictionaries({"command": st.sampled_from(["view", "str_replace"]),
                           "path": st.sampled_from(["/a", "/b"]),
                           "old_str": st.sampled_from(["x", "y", "zz"])}),
    st.dictionaries(st.text(max_size=3), junk, max_size=3),
    junk,
)
call_id = st.sampled_from([f"c{i}" for i in range(6)])

tool_call = st.builds(
    lambda c, t, a, s: {"type": "tool_call", "call_id": c, "tool": t, "args": a, "seq": s},
    call_id, st.sampled_from(TOOLS), args, st.one_of(st.integers(0, 50), junk))
tool_result = st.builds(
    lambda c, ok, o, e, s: {"type": "tool_result", "call_id": c, "ok": ok, "output": o,
                            "output_bytes": 1, "output_hash": "h", "error": e, "seq": s},
    call_id, st.one_of(st.booleans(), junk), st.one_of(st.sampled_from(OUTPUTS), junk),
    st.one_of(st.none(), st.sampled_from(["exit code 1", "timed out"]), junk),
    st.one_of(st.integers(0, 50), junk))
message = st.builds(lambda r, t: {"type": "message", "role": r, "text": t},
                    st.sampled_from(["assistant", "user", "system", 3]),
                    st.sampled_from(["I will fix the test now and run it again to see.",
                                     "Let me look.", "ok " * 30, "", None]))
other = st.one_of(
    st.builds(lambda i, o, c: {"type": "usage", "input_tokens": i, "output_tokens": o,
                               "cost_usd": c}, junk, junk, junk),
    st.builds(lambda s: {"type": "task_end", "task_id": "t", "status": s},
              st.sampled_from(["done", "skipped", "failed", None])),
    st.builds(lambda c: {"type": "checkpoint", "commit": c}, st.sampled_from(["a", "b", None])),
    st.fixed_dictionaries({"type": st.sampled_from(
        ["session_start", "task_start", "rollback", "heartbeat", "verdict", "weird"])},
        optional={"ts": junk, "seq": junk}),
    st.dictionaries(st.text(max_size=4), junk, max_size=3),
)
op = st.one_of(
    st.tuples(st.just("check"), tool_call),
    st.tuples(st.just("observe"), st.one_of(tool_call, tool_result, tool_result, message, other)),
    st.tuples(st.just("approve"), st.one_of(st.none(), st.integers(0, 3))),
    st.tuples(st.just("reset"), st.none()),
    st.tuples(st.just("new_cycle"), st.none()),
)
ops = st.lists(op, max_size=60)
profiles = st.sampled_from(["default", "seed-strict", "tight"])


def _policy(name: str) -> Policy:
    if name == "tight":
        return Policy.from_dict({"window": 8, "lookback": 4,
                                 "limits": {"iterations_per_session": {"limit": 20}}})
    return Policy.profile(name)


def _apply(engine: Engine, kind: str, value: Any, now: float) -> Any:
    if kind == "check":
        c = engine.check(value, now)
        return ("check", c.action, c.level, c.reason, c.message, c.cached_output,
                [f.to_dict() for f in c.findings], [h.to_event() for h in c.limits],
                c.escalation.to_dict() if c.escalation else None)
    if kind == "observe":
        return ("observe", [f.to_dict() for f in engine.observe(value, now)])
    if kind == "approve":
        engine.approve(None, value)
    elif kind == "reset":
        return ("reset", engine.reset(now))
    else:
        engine.new_cycle()
    return (kind, engine.level)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops, profiles)
def test_engine_never_raises(sequence: list[tuple[str, Any]], profile: str) -> None:
    engine = Engine(_policy(profile))
    for i, (kind, value) in enumerate(sequence):
        _apply(engine, kind, value, float(i))
        assert 0 <= engine.level <= 4
    json.dumps(engine.snapshot())
    engine.gauges(1e9)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops, ops, profiles)
def test_restore_continues_exactly(first: list[tuple[str, Any]], rest: list[tuple[str, Any]],
                                   profile: str) -> None:
    original = Engine(_policy(profile))
    for i, (kind, value) in enumerate(first):
        _apply(original, kind, value, float(i))
    saved = json.dumps(original.snapshot(copy=False))  # how a hook saves and loads it
    restored = Engine.restore(json.loads(saved), copy=False)
    for i, (kind, value) in enumerate(rest, start=len(first)):
        a = _apply(original, kind, value, float(i))
        b = _apply(restored, kind, value, float(i))
        assert a == b
    assert original.snapshot() == restored.snapshot()


events = st.lists(st.one_of(tool_call, tool_result, message, other, junk), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events, profiles)
def test_replay_never_raises(sequence: list[Any], profile: str) -> None:
    from supervisor.analysis.replay import analyze_events

    report = analyze_events(sequence, _policy(profile), session="s", source="x")
    line = report.to_json()
    assert line["steps"] == sum(1 for e in sequence if isinstance(e, dict)
                                and e.get("type") == "tool_call")
    json.dumps(report.to_dict())
    firsts = [v for v in line["first"].values() if v is not None]
    assert all(0 <= v < max(line["steps"], 1) for v in firsts)
