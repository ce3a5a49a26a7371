"""Prune ended sessions from the dashboard, as `supervisor sessions --prune DAYS --yes` does
(`supervisor.operator.prune`: the same rule, the same re-check before each removal).

`C` on the sessions screen asks which age (`screens.prune`), then lists the sessions that would
go and asks for `y`; the removal runs in a thread, the removed sessions leave the table (not
shown as `vanished`: they were removed on purpose), and a notification says what was removed
and what was kept, and why. A read-only dashboard, or a shared store (pruned on each agent's
host), removes nothing and says so.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from supervisor.operator import prune
from supervisor.safetext import clean
from supervisor.tui.format import safe
from supervisor.tui.screens.modals import ConfirmScreen
from supervisor.tui.screens.prune import AGES_DAYS, PruneScreen, age_label

if TYPE_CHECKING:
    from supervisor.tui.app import SupervisorApp

LISTED = 12
"""Sessions named in the confirmation (the rest are counted)."""


def refusal(app: SupervisorApp) -> str | None:
    """Why nothing can be pruned from this dashboard, or None."""
    if app.read_only:
        return "read-only: nothing is removed"
    return app.store.removal_refusal()


def _held(app: SupervisorApp) -> prune.Held | None:
    from supervisor.host.records import holds

    root = getattr(app.store, "root", None)
    return None if root is None else (lambda sid: holds(Path(root), sid))


async def act(app: SupervisorApp) -> None:
    """Ask which age, list and confirm, remove, say what was done; from a worker."""
    refused = refusal(app)
    if refused:
        app.notify(f"prune: {clean(refused, keep_newlines=False)}", severity="warning",
                   markup=False, timeout=10)
        return
    held = _held(app)
    summaries = [st.summary for st in app.model.sessions.values() if not st.gone]
    now = app.clock()
    found = {days: prune.candidates(summaries, now, days * prune.DAY_S, held)
             for days in AGES_DAYS}
    days = await app.push_screen_wait(PruneScreen(app.store.describe(),
                                                  {d: len(c) for d, (c, _) in found.items()}))
    if days is None:
        return
    chosen, kept = found[days]
    if not chosen:
        app.notify(f"no session {age_label(days)}" + _kept_note(kept), markup=False,
                   timeout=8)
        return
    if not await app.push_screen_wait(ConfirmScreen(_question(app, chosen, kept, days, now))):
        return
    app.pruning.update(c.session_id for c in chosen)
    try:
        done = await asyncio.to_thread(prune.prune, app.store, chosen, app.clock(),
                                       days * prune.DAY_S, held)
    finally:
        app.pruning.difference_update(c.session_id for c in chosen)
    for candidate in done.removed:
        app.model.forget(candidate.session_id)
    removed = ", ".join(c.session_id for c in done.removed[:LISTED])
    more = len(done.removed) - LISTED
    text = (f"removed {len(done.removed)} session{'s' if len(done.removed) != 1 else ''}"
            + (f": {removed}" + (f" and {more} more" if more > 0 else "") if removed else ""))
    text += "".join(f"; kept {sid}: {why}" for sid, why in done.kept)
    text += "".join(f"; not removed {sid}: {why}" for sid, why in done.failed)
    app.notify(clean(text, keep_newlines=False, limit=1000), title="prune", markup=False,
               timeout=15, severity="error" if done.failed else "information")


def _kept_note(kept: list[tuple[str, str]]) -> str:
    return (f" (kept {len(kept)} that ended: " + "; ".join(f"{sid}: {why}" for sid, why in kept)
            + ")") if kept else ""


def _question(app: SupervisorApp, chosen: list[prune.Candidate],
              kept: list[tuple[str, str]], days: float, now: float) -> Text:
    count = len(chosen)
    question = Text(f"Remove {count} session{'s' if count != 1 else ''} {age_label(days)} "
                    "from ", style="bold")
    question.append_text(safe(app.store.describe(), 120, "bold"))
    question.append("?\nTheir events, decisions and checkpoints are deleted: this cannot be "
                    "undone.\n")
    for candidate in chosen[:LISTED]:
        question.append("  ")
        question.append_text(safe(candidate.describe(now), 120))
        question.append("\n")
    if count > LISTED:
        question.append(f"  and {count - LISTED} more (the oldest are listed)\n")
    for sid, why in kept:
        question.append("  kept ", style="dim")
        question.append_text(safe(f"{sid}: {why}", 200, "dim"))
        question.append("\n")
    return question
