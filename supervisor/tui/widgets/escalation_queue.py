"""The "Needs you" queue: pending escalations oldest first, each with its age and the countdown
to its deadline, then, set apart, the stale ones whose agent is dead (no answer can reach it).

Two lines per live entry: in aligned columns age, session, level (from 100 columns), a short
summary that tells entries apart (`exact_repeat ×3 · Bash make build`,
`supervisor.tui.queue_summary`) and the deadline; under it the reason's prose, cut with `…`.
`EscalationQueue.show(live, stale, now)` is called on every app tick: ages and countdowns
tick, so the entries' text changes every second. The options are rebuilt only when the entries
themselves change; otherwise only the prompts whose text changed are replaced.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.css.scalar import Unit
from textual.widget import Widget
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from supervisor.store.render import ago
from supervisor.tui.format import deadline_text, level_text, safe
from supervisor.tui.palette import style

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


MARK = "●"
"""Leads a marked entry (`space`), in a column of its own: every entry has the same width and
its columns line up whether it is marked or not."""
MARK_WIDTH = 1
AGE_WIDTH = 8
LEVEL_WIDTH = 10
LEVEL_FROM = 100
"""The level column is shown from this width (it is `3 escalate` for nearly every entry)."""
SESSION_MAX = 30
DEADLINE_MAX = 32
GAP = "  "


@dataclass(frozen=True, slots=True)
class Widths:
    """The queue's column widths for one drawing (the reason takes what is left)."""

    session: int
    deadline: int
    reason: int
    """The summary's width on the first line."""
    level: int
    total: int


def widths(entries: Sequence[tuple[str, Text]], total: int) -> Widths:
    """Columns fitted to the entries (session ids, deadline texts) and the queue's width."""
    longest = min(SESSION_MAX, total // 4)
    session = min(longest, max((len(safe(sid, SESSION_MAX).plain) for sid, _ in entries),
                               default=8))
    deadline = min(DEADLINE_MAX, max((d.cell_len for _, d in entries), default=0))
    level = LEVEL_WIDTH if total >= LEVEL_FROM else 0
    used = MARK_WIDTH + AGE_WIDTH + session + level + deadline + (4 if level else 3) * len(GAP)
    return Widths(session, deadline, max(10, total - used), level, total)


def _cell(text: Text, width: int, *, right: bool = False) -> Text:
    cell = text.copy()
    cell.no_wrap, cell.end = True, ""
    if cell.cell_len > width:
        cell.truncate(width, overflow="ellipsis")
    cell.align("right" if right else "left", width)
    return cell


def live_line(session_id: str, esc: dict[str, Any], now: float, w: Widths,
              summary: str = "", *, marked: bool = False) -> Text:
    """Two lines: `  12s ago  s1  3 escalate  exact_repeat ×3 · Bash make  skip in 1:48`
    (`●` first when `marked`), then the reason's prose under the summary, dimmed."""
    line = Text(no_wrap=True, end="")
    line.append(MARK if marked else " " * MARK_WIDTH, style="bold")
    line.append_text(_cell(Text(ago(esc.get("ts"), now), style=style("{muted}")), AGE_WIDTH,
                           right=True))
    line.append(GAP)
    line.append_text(_cell(safe(session_id, SESSION_MAX, "bold"), w.session))
    line.append(GAP)
    if w.level:
        line.append_text(_cell(level_text(esc.get("level", 3)), w.level))
        line.append(GAP)
    line.append_text(_cell(safe(summary or esc.get("reason"), 400, "bold"), w.reason))
    line.append(GAP)
    line.append_text(_cell(deadline_text(esc, now), w.deadline))
    if summary:
        indent = MARK_WIDTH + AGE_WIDTH + len(GAP)
        line.append("\n" + " " * indent)
        line.append_text(_cell(safe(esc.get("reason"), 400, style("{muted}")),
                               max(10, w.total - indent)))
    return line


def stale_line(session_id: str, esc: dict[str, Any], now: float, why: str, w: Widths) -> Text:
    """`  5m ago  s2        dead: no heartbeat for 40 s  exact_repeat: ...`, dimmed."""
    line = Text(" " * MARK_WIDTH, no_wrap=True, end="", style=style("{muted}"))
    line.append_text(_cell(Text(ago(esc.get("ts"), now)), AGE_WIDTH, right=True))
    line.append(GAP)
    line.append_text(_cell(safe(session_id, SESSION_MAX, "bold"), w.session))
    line.append(GAP)
    rest = Text(f"dead: {why}", style=style("{bad}"))
    rest.append(GAP)
    rest.append_text(safe(esc.get("reason"), 400))
    line.append_text(_cell(rest, w.level + w.reason + w.deadline + (2 if w.level else 1)
                           * len(GAP)))
    return line


class EscalationQueue(OptionList):
    """Pending escalations: the live ones, then a disabled header, then the stale ones."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "toggle_mark", "Mark", show=True),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._keys: list[str] = []
        self._plain: list[str] = []
        self._last: tuple[Any, ...] | None = None
        self._stale_from: int | None = None
        """The index of the stale entries' header (None: no stale entry)."""
        self.marked: set[str] = set()
        """Entries marked (`space`) to be answered together (`A` on the sessions screen);
        a mark goes with its entry (answered, or its agent gone)."""

    def toggle_mark(self) -> str | None:
        """Mark the highlighted live entry, or unmark it; its key (None: nothing to mark)."""
        index = self.highlighted
        if index is None or index >= len(self._keys) or self._keys[index] == STALE_HEADER:
            return None
        key = self._keys[index]
        if self._stale_from is not None and index > self._stale_from:
            return None  # its agent is gone: an answer cannot reach it
        self.marked ^= {key}
        if self._last is not None:
            self.show(*self._last)
        return key

    def action_toggle_mark(self) -> None:
        """`space`: mark the highlighted escalation to answer it with others (`A`)."""
        if self.toggle_mark() is None:
            self.notify("only a live escalation can be marked", severity="warning", timeout=3)
            return
        count = len(self.marked)
        self.notify(f"{count} marked: A answers them together" if count else "none marked",
                    timeout=3)

    def marked_keys(self) -> list[str]:
        """The marked entries, in the queue's order (oldest first)."""
        return [key for key in self._keys if key in self.marked]

    def on_resize(self) -> None:
        """The reason's column follows the width: draw the entries again."""
        if self._last is not None:
            self._plain = []
            self._keys = []
            self.show(*self._last)

    def _drawing_width(self, rows: int) -> int:
        """The width the entries are drawn at: the queue's own once it is laid out; while it is
        hidden (no entry: it appears with its first) the width its container will give it.
        Either way less the vertical scrollbar when `rows` (the entries' lines) overflow the
        queue's height, and not less it when they no longer do.

        Not a guess: entries drawn wider than the queue turns out to be are wrapped by the
        option list until the queue's resize redraws them, and that frame is shown (under load
        for a while): each deadline alone on a line and the queue three rows too high. So are
        entries that arrive many at once: the queue appears with its scrollbar."""
        bar = self.styles.scrollbar_size_vertical if self._overflows(rows) else 0
        width = self.scrollable_content_region.width
        if width:
            if self.show_vertical_scrollbar:
                width += self.styles.scrollbar_size_vertical
            return max(1, width - bar)
        parent = self.parent
        if isinstance(parent, Widget):
            room = parent.scrollable_content_region.width or parent.size.width
            if room:
                return max(1, room - self.styles.margin.width - self.styles.gutter.width - bar)
        return self.size.width or 120  # nothing laid out yet: the first layout's resize redraws

    def _overflows(self, rows: int) -> bool:
        """Whether `rows` lines of entries are more than the queue's height can show (its
        `max-height`, in lines)."""
        limit = self.styles.max_height
        if limit is None or limit.unit is not Unit.CELLS:
            return False
        return rows > int(limit.value) - self.styles.gutter.height

    def show(
        self, live: Sequence[tuple[str, dict[str, Any]]],
        stale: Sequence[tuple[str, dict[str, Any]]], now: float,
        why_stale: Callable[[str], str],
        summary: Callable[[str, dict[str, Any]], str] = lambda sid, esc: "",
    ) -> None:
        """Bring the entries up to date; `why_stale(session_id)` says why its agent is dead,
        `summary(session_id, escalation)` tells a live entry apart from the others."""
        self._last = (live, stale, now, why_stale, summary)
        said = [summary(sid, esc) for sid, esc in live]
        rows = sum(2 if text else 1 for text in said) + (1 + len(stale) if stale else 0)
        total = self._drawing_width(rows)
        w = widths([(sid, deadline_text(esc, now)) for sid, esc in (*live, *stale)], total)
        keys: list[str] = []
        lines: list[Text] = []
        for (sid, esc), text in zip(live, said, strict=True):
            keys.append(entry_key(sid, esc.get("escalation_id")))
            lines.append(live_line(sid, esc, now, w, text, marked=keys[-1] in self.marked))
        self.marked &= set(keys)
        self._stale_from = len(keys) if stale else None
        if stale:
            keys.append(STALE_HEADER)
            lines.append(Text(f"not running ({len(stale)}): their agents are gone, answers "
                              "cannot reach them", style=style("bold {muted}"), no_wrap=True,
                              end="",
                              overflow="ellipsis"))
            for sid, esc in stale:
                keys.append(entry_key(sid, esc.get("escalation_id")))
                lines.append(stale_line(sid, esc, now, why_stale(sid), w))
        plain = [line.plain for line in lines]
        if keys != self._keys:
            # the highlight stays on its escalation when entries arrive above it (enter must
            # open the one the operator sees highlighted); an answered one gives its place
            highlighted = self.highlighted
            kept = self._keys[highlighted] if highlighted is not None \
                and highlighted < len(self._keys) else None
            self.clear_options()
            self.add_options(
                Option(line, id=key, disabled=key == STALE_HEADER)
                for key, line in zip(keys, lines, strict=True)
            )
            if kept in keys:
                self.highlighted = keys.index(kept)
            elif highlighted is not None and keys:
                self.highlighted = min(highlighted, len(keys) - 1)
        else:
            for index, (old, new) in enumerate(zip(self._plain, plain, strict=True)):
                if old != new:
                    self.replace_option_prompt_at_index(index, lines[index])
        self._keys, self._plain = keys, plain
        self.display = bool(keys)
