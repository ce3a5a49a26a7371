"""`supervisor stats SESSION`: usage against every limit (the seeds' `/stats`)."""

import argparse
from typing import Any

from supervisor.cli.common import add_store_arguments, fitted, store_from, terminal_columns


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("session", help="session id")
    parser.add_argument("--json", action="store_true", help="one JSON object")


def run(args: argparse.Namespace) -> int:
    import json
    import time

    from supervisor.guard.inspect import session_usage
    from supervisor.guard.loop_cost import in_loops, sentence
    from supervisor.store.units import human, unit_of

    store = store_from(args)
    store.require(args.session)
    now = time.time()
    summary = store.summary(args.session)
    events = store.read_all(args.session).events  # read once: the replay and the loops' cost
    usage = session_usage(store, args.session, now, replaying=_replaying, events=events)
    loops = in_loops([e.model_dump() for e in events])
    if args.json:
        print(json.dumps({
            "session": args.session, "status": summary.status(now), "level": usage.level,
            "tool_calls": summary.tool_calls, "errors": summary.errors,
            "limits": [{"name": n, "value": v, "limit": lim, "action": a}
                       for n, v, lim, a in usage.gauges],
            "source": usage.source, "policy_problem": usage.problem, "as_of": usage.as_of,
            "inside_loops": loops,
        }))
        return 0
    columns = terminal_columns()  # the sentences are broken between words on a terminal
    print(fitted(f"session {args.session}: {summary.status(now)}, level {usage.level}, "
                 f"{summary.tool_calls:,} tool calls, {summary.errors:,} errors", columns))
    rows = [["LIMIT", "USED", "LIMIT", "%", "THEN"]]
    for name, value, limit, action in usage.gauges:
        unit = unit_of(name)
        if limit is None:
            rows.append([name, human(value, unit), "off", "-", "-"])
        else:
            rows.append([name, human(value, unit), human(limit, unit),
                         f"{100 * value / limit:.0f}%", action])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    said = sentence(loops)
    if said:
        print(fitted("inside its loops (from each escalation's onset): "
                     + said.removeprefix("this loop has cost "), columns))
    silence = _silence(summary, usage, now)
    if silence:
        print(fitted(silence, columns))
    if usage.problem:
        print(fitted(f"(the session's {usage.problem}: the limits shown are the default "
                     "profile's)", columns))
    if usage.source == "replay":
        print(fitted("(no saved guard state: figures come from replaying the event log)",
                     columns))
    return 0



REPLAY_SAID_FROM = 20_000
"""Events from which a replay is announced: 200,000 took 15 s of CPU (86 s at a load of 20),
and the command said nothing until its table (12.8 s on 2026-11-29, the log read once and the
engine's replay cut: benchmarks/README.md "Replaying a recorded session")."""


def _replaying(events: int) -> None:
    """Say, before a long replay, why nothing comes for a while (on stderr: the table and
    `--json` stay as they are)."""
    import sys

    if events >= REPLAY_SAID_FROM:
        print(f"supervisor: no saved guard state: replaying the session's {events:,} events "
              "through the engine…", file=sys.stderr, flush=True)


def _silence(summary: Any, usage: Any, now: float) -> str | None:
    """Why an idle session's `duration_s` stops at its last event, in words (None while the
    agent is active, or when the session ended or has no duration limit): an operator back
    from a night away must not read the gauge as the night not having happened, nor expect
    the night to be counted."""
    from supervisor.store.render import ago
    from supervisor.store.summary import IDLE_AFTER_S, LIVE_STATUSES
    from supervisor.store.units import human

    if (summary.status(now) not in LIVE_STATUSES  # ended, vanished: it will not go on
            or usage.as_of is None or now - usage.as_of < IDLE_AFTER_S
            or not any(name == "duration_s" for name, *_ in usage.gauges)):
        return None
    why = ("the agent waits for an operator, and that time is never counted"
           if usage.waits_for_operator else
           f"if the agent goes on by itself, at most {human(usage.idle_gap_s, 'seconds')} of "
           "it will be, and none if a user's prompt ends it")
    return (f"(duration_s is the working time up to the agent's last event, "
            f"{ago(usage.as_of, now)}; the silence since is not counted: {why})")
