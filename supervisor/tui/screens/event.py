"""The event detail screen: one event in full, read from its line, with what refers to it.

For a tool call (or its result, or its verdict): the arguments as pretty JSON, the whole output
(wrapped, scrollable, searchable with `/`, `n`, `N`), the verdicts and the detections and
escalations whose evidence names the call. Other events: every field. `left`/`right` go to the
previous/next row of the history as it is shown (filter and folding kept). The line is read in
a worker thread (a big file must not freeze the screen); agent text is cleaned before it is
drawn.
"""

import json
from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType

from supervisor.safetext import clean
from supervisor.store.units import count
from supervisor.tui.event_detail import EventDetail, Related, load_detail
from supervisor.tui.format import evidence_lines, evidence_title, safe
from supervisor.tui.history import unsealed_summary
from supervisor.tui.history_layout import HistoryLayout
from supervisor.tui.model import SessionState
from supervisor.tui.screens.pager import PagerScreen

_TITLES = {"tool_call": "Tool call", "tool_result": "Result", "verdict": "Verdict"}


class EventScreen(PagerScreen):
    """One history row in full."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "Previous event", show=True),
        Binding("right", "step(1)", "Next event", show=True),
    ]
    HINTS = "/ search  ←/→ previous/next event  esc back"

    def __init__(self, clock_format: Callable[[float], str], state: SessionState, index: int,
                 rows: HistoryLayout) -> None:
        super().__init__()
        self.clock_format = clock_format
        self.state = state
        self.session_id = state.session_id
        self.index = index
        self.rows = rows
        """The history rows as the session screen shows them, for `left`/`right`."""
        self.detail: EventDetail | None = None

    def on_mount(self) -> None:
        super().on_mount()
        self._open(self.index)

    def _open(self, index: int) -> None:
        self.index = index
        st = self.state
        store = st.history
        head = Text()
        head.append_text(safe(self.session_id, 40))
        head.append(f"  #{store.seq_of(index)} {store.type_of(index)} "
                    f"{self.clock_format(store.ts_of(index))}")
        self.set_head(head)
        self.show_state("reading the event…")
        self._load(store, index, list(st.detections), list(st.escalations.values()))

    @work(thread=True, exclusive=True, group="event-detail")
    def _load(self, store: Any, index: int, detections: list[Any],
              escalations: list[dict[str, Any]]) -> None:
        """Read the event and its related events off the UI thread (the log may be huge)."""
        detail = load_detail(store, index, detections, escalations)
        self.app.call_from_thread(self._show, detail)

    def _show(self, detail: EventDetail) -> None:
        if detail.index != self.index:
            return  # the operator moved on meanwhile
        self.detail = detail
        self.set_text(detail_lines(detail, self.clock_format))

    def action_step(self, delta: int) -> None:
        self.rows.extend()
        row = self.rows.row_of(self.index)
        if row is None:
            return
        row += delta
        if 0 <= row < len(self.rows):
            self._open(self.rows.index(row))


def detail_lines(detail: EventDetail, clock: Callable[[float], str]) -> list[Text]:
    """The event in full as lines of text, every agent string cleaned."""
    lines: list[Text] = []
    if detail.event is None:
        lines.append(Text(f"#{detail.seq} {detail.type}: the line cannot be read: "
                          f"{detail.error}", style="bold red"))
        return lines
    if detail.type == "unsealed":  # the line below claims to be the supervisor's: say whose
        lines += [Text(clean(unsealed_summary(detail.event), keep_newlines=False),
                       style="bold red"), Text("")]
    if detail.type in _TITLES:
        call, result = detail.call, detail.result
        if call is not None:
            _call(lines, call, clock)
        elif detail.type != "tool_call":
            lines.append(Text("the call of this result is not in the history near it",
                              style="dim"))
        if result is not None:
            _result(lines, result, clock)
        elif call is not None:
            lines += [Text(""), Text("Result", style="bold"), Text("no result recorded (yet)",
                                                                    style="dim")]
        for verdict in detail.verdicts:
            _verdict(lines, verdict, clock)
    else:
        _other(lines, detail.event, clock)
    if detail.evidence:
        lines += [Text(""), Text(evidence_title(len(detail.evidence)) + ")", style="bold")]
        lines += evidence_lines(detail.evidence)
    if detail.detections:
        lines += [Text(""), Text("Detections that name it", style="bold")]
        for d in detail.detections:
            row = Text(f"  #{d.seq} ", style="dim")
            row.append(d.detector, style="bold")
            row.append(f" (level {d.level}): ")
            row.append(d.message)  # cleaned by the model
            row.append("  evidence " + " ".join(f"#{n}" for n in d.evidence), style="dim")
            lines.append(row)
    if detail.escalations:
        lines += [Text(""), Text("Escalations that name it", style="bold")]
        for e in detail.escalations:
            row = Text(f"  #{e.get('seq')} ", style="dim")
            row.append_text(safe(e.get("escalation_id"), 40, "bold"))
            row.append(f" (level {e.get('level')}): ")
            row.append_text(safe(e.get("reason"), 400))
            lines.append(row)
    return lines


def _heading(title: str, event: dict[str, Any], clock: Callable[[float], str]) -> Text:
    head = Text(title, style="bold")
    head.append(f"  #{event.get('seq')}  {clock(_ts(event))}", style="dim")
    return head


def _call(lines: list[Text], call: Related, clock: Callable[[float], str]) -> None:
    e = call.event
    head = _heading("Tool call", e, clock)
    head.append("  ")
    head.append_text(safe(e.get("tool"), 80, "bold"))
    head.append("  call ", style="dim")
    head.append_text(safe(e.get("call_id"), 80))
    lines += [head, Text("Arguments", style="bold")]
    lines += _block(json.dumps(e.get("args"), indent=2, ensure_ascii=False, default=str))


def _result(lines: list[Text], result: Related, clock: Callable[[float], str]) -> None:
    e = result.event
    ok = bool(e.get("ok"))
    head = _heading("Result", e, clock)
    head.append("  ")
    head.append("ok" if ok else "ERROR", style="bold green" if ok else "bold red")
    if e.get("error"):
        head.append(" ")
        head.append_text(safe(e.get("error"), 200, "red"))
    if isinstance(e.get("duration_ms"), int | float):
        head.append(f"  {e['duration_ms']:g} ms", style="dim")
    raw_output = e.get("output")
    output = raw_output if isinstance(raw_output, str) else ""
    size = e.get("output_bytes")
    if isinstance(size, int):
        head.append(f"  {count(size)} bytes", style="dim")
    lines += [Text(""), head]
    lines += _block(output) if output else [Text("(no output)", style="dim")]
    kept = len(output.encode("utf-8", "replace"))
    if isinstance(size, int) and size > kept:
        lines.append(Text(f"(the log keeps the first {count(kept)} of {count(size)} bytes; "
                          f"hash of the whole output {clean(str(e.get('output_hash')))})",
                          style="dim italic"))


def _verdict(lines: list[Text], verdict: Related, clock: Callable[[float], str]) -> None:
    e = verdict.event
    head = _heading("Verdict", e, clock)
    head.append("  ")
    head.append_text(safe(e.get("action"), 20, "bold"))
    head.append(f" (level {e.get('level')})")
    lines += [Text(""), head]
    for label in ("reason", "message"):
        if e.get(label):
            row = Text(f"{'told the agent' if label == 'message' else label}: ", style="dim")
            row.append_text(Text(clean(str(e[label]))))
            lines += row.split("\n")


def _other(lines: list[Text], event: dict[str, Any], clock: Callable[[float], str]) -> None:
    kind = str(event.get("type"))
    lines.append(_heading(clean(kind, keep_newlines=False, limit=40), event, clock))
    fields = {k: v for k, v in event.items() if k not in ("v", "seq", "ts", "type")}
    text = fields.pop("text", None) if kind == "message" else None
    lines += _block(json.dumps(fields, indent=2, ensure_ascii=False, default=str))
    if isinstance(text, str):
        lines += [Text(""), Text("Text", style="bold")]
        lines += _block(text)


def _block(text: str) -> list[Text]:
    return [Text(line) for line in clean(text).split("\n")]


def _ts(event: dict[str, Any]) -> float:
    ts = event.get("ts")
    return float(ts) if isinstance(ts, int | float) else 0.0
