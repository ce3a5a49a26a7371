"""`supervisor stats SESSION`: usage against every limit (the seeds' `/stats`)."""

import argparse

from supervisor.cli.common import add_store_arguments, store_from


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
    usage = session_usage(store, args.session, now)
    loops = in_loops([e.model_dump() for e in store.read_all(args.session).events])
    if args.json:
        print(json.dumps({
            "session": args.session, "status": summary.status(now), "level": usage.level,
            "tool_calls": summary.tool_calls, "errors": summary.errors,
            "limits": [{"name": n, "value": v, "limit": lim, "action": a}
                       for n, v, lim, a in usage.gauges],
            "source": usage.source, "policy_problem": usage.problem,
            "inside_loops": loops,
        }))
        return 0
    print(f"session {args.session}: {summary.status(now)}, level {usage.level}, "
          f"{summary.tool_calls} tool calls, {summary.errors} errors")
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
        print("inside its loops (from each escalation's onset): "
              + said.removeprefix("this loop has cost "))
    if usage.problem:
        print(f"(the session's {usage.problem}: the limits shown are the default profile's)")
    if usage.source == "replay":
        print("(no saved guard state: figures come from replaying the event log)")
    return 0

