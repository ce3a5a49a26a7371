"""`supervisor sessions`: one line per session with status, level, counts and pending escalations.

A session waiting for the operator shows its number of pending escalations with a `!` marker,
so it stands out in a long table; a dead agent's are `stale` (no answer can reach it: the
dashboard's "not running" group); an operator's own pause is not one (its status says `paused`,
`--json` gives its id as `paused`).

`--prune DAYS` lists the sessions that are over and older than DAYS, and removes them with
`--yes` (`supervisor.operator.prune`: never a live, waiting or dead one, nor one whose run is
still remembered), saying what was removed and what was kept.
"""

import argparse
import time
from typing import TYPE_CHECKING, Any

from supervisor.cli.common import (
    CliError,
    add_store_arguments,
    store_from,
    store_label,
    terminal_columns,
)
from supervisor.protocol.decisions import is_hold
from supervisor.safetext import clean

if TYPE_CHECKING:
    from supervisor.operator.prune import Held


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("--json", action="store_true", help="one JSON object per session")
    parser.add_argument("--prune", metavar="DAYS", type=_days,
                        help="list the ended sessions whose last event is DAYS or more old "
                             "(0: every ended one); with --yes, remove them")
    parser.add_argument("--yes", action="store_true", help="with --prune: remove them")


def _days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of days: {text!r}") from None
    if not days >= 0 or days == float("inf"):
        raise argparse.ArgumentTypeError(f"not a number of days: {text!r}")
    return days


def run(args: argparse.Namespace) -> int:
    import json

    from supervisor.store.render import ago

    if args.yes and args.prune is None:
        raise CliError("--yes goes with --prune DAYS")
    store = store_from(args)
    now = time.time()
    if args.prune is not None:
        with store:
            return _prune(store, args.prune, args.yes, now)
    with store:
        summaries = store.summaries()
    if args.json:
        for s in summaries:
            # ASCII escapes: agent text must not reach the terminal as C1 or bidi characters
            print(json.dumps(_row(s, now), ensure_ascii=True))
        return 0
    if not summaries:
        root = getattr(store, "root", None)  # a local root: say when it is a mistyped one
        missing = root is not None and not root.exists()
        if missing and getattr(args, "root", None):  # named, and not there: a typo fails
            raise CliError(f"root {store_label(store)} does not exist (a typo? agents write to "
                           "$SUPERVISOR_HOME, else the user state directory)")
        print(f"no sessions in {store.noun} {store_label(store)}"
              + (" (it does not exist)" if missing else ""))
        return 0
    headers = ["SESSION", "AGENT", "TASK", "STATUS", "LEVEL", "EVENTS", "ERRORS", "PENDING",
               "LAST ACTIVITY"]
    rows = [
        [
            clean(s.session_id, limit=40),
            clean(s.agent or "-", keep_newlines=False, limit=20),
            clean(s.task or "-", keep_newlines=False, limit=40),
            s.status(now),
            str(s.level),
            str(s.events),
            str(s.errors) + (f" +{s.bad_lines} bad" if s.bad_lines else ""),
            _pending_cell(s, now),
            # the agent's own last event, as the dashboard's column: not an operator's tool
            # writing on its behalf (an offline rollback), which is not the agent's activity
            ago(s.last_seen_ts, now),
        ]
        for s in summaries
    ]
    print(_table(headers, rows, terminal_columns()))  # cut on a terminal only
    for s in summaries:  # a policy that switches supervision off must not go unseen
        for warning in s.policy_warnings:
            print(f"warning: {clean(s.session_id, limit=40)}: {warning}")
        if s.vanished:  # its row is the kept summary: what was read before the removal
            print(f"note: {clean(s.session_id, limit=40)}: its events.jsonl was removed; the "
                  "row is what was read of it before (anything written after that read is "
                  "not counted)")
        if s.unsealed:  # the agent's side tried to speak as the supervisor
            print(f"warning: {clean(s.session_id, limit=40)}: {s.unsealed} line(s) claim the "
                  "supervisor's voice without its seal (written by the agent's side; "
                  "`supervisor tail` shows them quoted)")
    return 0


def _prune(store: Any, days: float, remove: bool, now: float) -> int:
    """`--prune DAYS [--yes]`: what would go (and what stays, why), then remove it."""
    from supervisor.operator import prune

    refused = store.removal_refusal()
    if refused:
        raise CliError(refused)
    held = _run_holds(store)
    older = days * prune.DAY_S
    chosen, kept = prune.candidates(store.summaries(), now, older, held)
    age = f"{days:g} day{'s' if days != 1 else ''} old or more" if days else "of any age"
    for sid, why in kept:
        print(f"kept {clean(sid, limit=40)}: {clean(why, keep_newlines=False)}")
    if not chosen:
        print(f"no ended session {age} in {store.noun} {store_label(store)}")
        return 0
    if not remove:
        print(f"{len(chosen)} ended session{'s' if len(chosen) != 1 else ''} {age} would be "
              "removed (add --yes to remove them):")
        for c in chosen:
            print("  " + clean(c.describe(now), keep_newlines=False))
        return 0
    done = prune.prune(store, chosen, now, older, held)
    for c in done.removed:
        print("removed " + clean(c.describe(now), keep_newlines=False))
    for sid, why in done.kept:
        print(f"kept {clean(sid, limit=40)}: {clean(why, keep_newlines=False)}")
    for sid, why in done.failed:
        print(f"not removed {clean(sid, limit=40)}: {clean(why, keep_newlines=False)}")
    print(f"{len(done.removed)} removed" + (f", {len(done.kept)} kept" if done.kept else "")
          + (f", {len(done.failed)} failed" if done.failed else ""))
    return 1 if done.failed else 0


def _run_holds(store: Any) -> "Held | None":
    """The runs `supervisor run` still remembers hold their sessions (a local root only)."""
    from pathlib import Path

    from supervisor.host.records import holds

    root = getattr(store, "root", None)
    return None if root is None else (lambda sid: holds(Path(root), sid))


def _stale(s: Any, now: float) -> bool:
    """The agent is dead: its escalations are stale, no answer can reach it (the dashboard's
    "not running" group, `DashboardModel.stale`)."""
    return s.liveness(now).alive is False


def _pending_cell(s: Any, now: float) -> str:
    waiting = s.needs_you()
    if not waiting:
        return "-"
    return f"{len(waiting)} stale" if _stale(s, now) else f"{len(waiting)} !"


def _row(s: Any, now: float) -> dict[str, object]:
    from supervisor.hooks.installed import broken_project_hook
    from supervisor.store.silence import unsupervised

    stale = _stale(s, now)
    return {
        "session": s.session_id, "agent": s.agent, "task": s.task, "status": s.status(now),
        "level": s.level, "events": s.events, "errors": s.errors, "bad_lines": s.bad_lines,
        "last_ts": s.last_ts, "pending_escalations": [] if stale else list(s.needs_you()),
        "stale_escalations": list(s.needs_you()) if stale else [],
        "paused": next((eid for eid, esc in s.pending.items() if is_hold(esc)),
                       None),
        "notifications": s.notifications,
        "unsupervised": unsupervised(s, now, hooks=broken_project_hook),
        "policy_warnings": list(s.policy_warnings),
        "unsealed_lines": s.unsealed,
    }


SHRINKS = ((2, 6), (1, 6))
"""(column, narrowest) given up first when the table is wider than the terminal: the task,
then the agent; never the session id (what the other commands are given) nor a figure. Then
the last column's header is said shorter (`ACTIVE`: its values are `7m ago`)."""


def _table(headers: list[str], rows: list[list[str]], columns: int | None = None) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    if columns is not None:  # a row wrapped at 80 columns reads as two: cut the words with …
        over = sum(widths) + 2 * (len(widths) - 1) - columns
        for index, narrowest in SHRINKS:
            give = max(0, min(over, widths[index] - narrowest))
            widths[index] -= give
            over -= give
        rows = [[c if len(c) <= w else c[:w - 1] + "…" for c, w in zip(r, widths, strict=True)]
                for r in rows]
        if over > 0 and headers[-1] == "LAST ACTIVITY":
            headers = [*headers[:-1], "ACTIVE"]
            widths[-1] = max(len("ACTIVE"), *(len(r[-1]) for r in rows))
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)
