"""The "Needs you" queue: pending escalations oldest first, each with its age and the countdown
to its deadline, then, set apart, the stale ones whose agent is dead (no answer can reach it).

`EscalationQueue.show(live, stale, now)` is called on every app tick: ages and countdowns tick,
so the entries' text changes every second. The options are rebuilt only when the entries
themselves change; otherwise only the prompts whose text changed are replaced.
"""

from collections.abc import Callable, Sequence
from typing import Any

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from supervisor.store.render import ago
from supervisor.tui.format import deadline_text, level_text, safe

STALE_HEADER = "stale-header"
"""Id of the (disabled) option that heads the stale group."""
KEY_SEPARATOR = "\x00"


def entry_key(session_id: str, escalation_id: object) -> str:
    """The option id of one entry: session id and escalation id."""
    return f"{session_id}{KEY_SEPARATOR}{escalation_id}"


def split_key(key: str) -> tuple[str, str]:
    """(session id, escalation id) of an option id made by `entry_key`."""
    sid, _, eid = key.partition(KEY_SEPARATOR)
    return sid, eid


def live_line(session_id: str, esc: dict[str, Any], now: float) -> Text:
    """`12s ago  s1  3 escalate  skip in 1:48  exact_repeat: ...`"""
    line = Text(no_wrap=True, end="")
    line.append(f"{ago(esc.get('ts'), now):>8}  ", style="dim")
    line.append_text(safe(session_id, 30, "bold"))
    line.append("  ")
    line.append_text(level_text(esc.get("level", 3)))
    line.append("  ")
    line.append_text(deadline_text(esc, now))
    line.append("  ")
    line.append_text(safe(esc.get("reason"), 80))
    return line


def stale_line(session_id: str, esc: dict[str, Any], now: float, why: str) -> Text:
    """`5m ago  s2  dead: no heartbeat for 40 s  exact_repeat: ...`, dimmed."""
    line = Text(no_wrap=True, end="", style="dim")
    line.append(f"{ago(esc.get('ts'), now):>8}  ")
    line.append_text(safe(session_id, 30, "bold"))
    line.append("  ")
    line.append(f"dead: {why}", style="red")
    line.append("  ")
    line.append_text(safe(esc.get("reason"), 80))
    return line


class EscalationQueue(OptionList):
    """Pending escalations: the live ones, then a disabled header, then the stale ones."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._keys: list[str] = []
        self._plain: list[str] = []

    def show(
        self, live: Sequence[tuple[str, dict[str, Any]]],
        stale: Sequence[tuple[str, dict[str, Any]]], now: float,
        why_stale: Callable[[str], str],
    ) -> None:
        """Bring the entries up to date; `why_stale(session_id)` says why its agent is dead."""
        keys: list[str] = []
        lines: list[Text] = []
        for sid, esc in live:
            keys.append(entry_key(sid, esc.get("escalation_id")))
            lines.append(live_line(sid, esc, now))
        if stale:
            keys.append(STALE_HEADER)
            lines.append(Text(f"not running ({len(stale)}): their agents are gone, answers "
                              "cannot reach them", style="bold dim", no_wrap=True, end=""))
            for sid, esc in stale:
                keys.append(entry_key(sid, esc.get("escalation_id")))
                lines.append(stale_line(sid, esc, now, why_stale(sid)))
        plain = [line.plain for line in lines]
        if keys != self._keys:
            highlighted = self.highlighted
            self.clear_options()
            self.add_options(
                Option(line, id=key, disabled=key == STALE_HEADER)
                for key, line in zip(keys, lines, strict=True)
            )
            if highlighted is not None and keys:
                self.highlighted = min(highlighted, len(keys) - 1)
        else:
            for index, (old, new) in enumerate(zip(self._plain, plain, strict=True)):
                if old != new:
                    self.replace_option_prompt_at_index(index, lines[index])
        self._keys, self._plain = keys, plain
        self.display = bool(keys)
