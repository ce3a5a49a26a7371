"""Sessions that work in one folder: a rollback of one puts back the others' files too.

Two agents in one repository (two terminals, or a person's session beside an autonomous one)
share the work tree a checkpoint restores: rolling one back removes what the other wrote since
and restores what it changed. `supervisor rollback` refuses while such a session has not ended
(`--force` rolls back anyway), and the dashboard's checkpoint picker says who they are.
"""

from collections.abc import Iterable
from pathlib import PurePath

from supervisor.store.summary import SessionSummary


def shares_folder(mine: SessionSummary, other: SessionSummary) -> bool:
    """Whether `other`, a session that has not ended, works in the folder `mine` restores
    (the same one, or one inside the other, on the same host). A session's own sub-agents
    (`<session>.sub-<id>`) are its own work, not another's."""
    if other.session_id == mine.session_id or other.ended or other.vanished:
        return False
    if other.session_id.startswith(f"{mine.session_id}.") or \
            mine.session_id.startswith(f"{other.session_id}."):
        return False
    if not mine.cwd or not other.cwd or (mine.host and other.host and mine.host != other.host):
        return False
    a, b = PurePath(mine.cwd), PurePath(other.cwd)
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)


def sharing(mine: SessionSummary, summaries: Iterable[SessionSummary]) -> list[SessionSummary]:
    """The sessions of `summaries` that share `mine`'s folder (`shares_folder`), in order."""
    return [other for other in summaries if shares_folder(mine, other)]


def described(others: list[SessionSummary], now: float, most: int = 5) -> str:
    """`s2 (codex, running, last activity 30s ago); s3 (...)`: who they are, at most `most`."""
    from supervisor.store.render import ago

    named = "; ".join(f"{o.session_id} ({o.agent or 'agent unknown'}, {o.status(now)}, "
                      f"last activity {ago(o.last_activity_ts, now)})" for o in others[:most])
    return named + (f"; {len(others) - most} more" if len(others) > most else "")
