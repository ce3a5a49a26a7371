"""Small, safe formatters shared by the screens: every agent string goes through `safe()`.

Agent text becomes a `rich.text.Text` built from plain strings (Rich never parses markup in
them) after `safetext.clean` removed escape sequences and control characters.
"""

import time
from typing import TYPE_CHECKING, Any

from rich.text import Text

from supervisor.protocol.names import LEVEL_NAMES
from supervisor.safetext import clean
from supervisor.store import units
from supervisor.tui import palette

if TYPE_CHECKING:
    from supervisor.tui.event_detail import EvidenceStep

LEVEL_STYLES = ("{ok}", "{warn}", "bold {warn}", "bold {bad}", "bold {on_bad} on {bad_bg}")
"""Style templates (`supervisor.tui.palette`): the theme's colours, readable on its background."""
STATUS_STYLES = {
    "running": "{ok}",
    "waiting": "bold {on_warn} on {warn_bg}",
    "paused": "bold {info}",  # the operator's own choice: not the colour of a request
    "idle": "{muted}",
    "dead": "bold {on_bad} on {bad_bg}",
    "unsupervised": "bold {on_alert} on {alert_bg}",  # its hooks stopped: not a request
    "completed": "{ok}",
    "aborted": "{bad}",
    "failed": "bold {bad}",
    "terminated": "{bad}",
    "limit": "{bad}",
    "recorded": "{muted}",
    "broken": "bold {on_bad} on {bad_bg}",
    "empty": "{muted}",
}
STATUS_LABELS = {"waiting": "WAITING"}


def format_clock(ts: float) -> str:
    """`HH:MM:SS` in local time (the store keeps Unix seconds)."""
    return time.strftime("%H:%M:%S", time.localtime(ts)) if ts else "--:--:--"


def safe(value: object, limit: int | None = 400, style: str = "") -> Text:
    """Untrusted text as a one-line `Text` (markup never interpreted, controls removed)."""
    return Text(clean("" if value is None else str(value), keep_newlines=False, limit=limit),
                style=style, no_wrap=True, end="")


def safe_block(value: object, limit: int | None = 4000, style: str = "") -> Text:
    """Untrusted text kept on several lines (for detail panes)."""
    return Text(clean("" if value is None else str(value), limit=limit), style=style)


def level_text(level: int, *, ended: bool = False) -> Text:
    """`3 escalate` in the level's colour; dimmed once the session ended (it is history)."""
    level = max(0, min(int(level), 4))
    template = "{muted}" if ended else LEVEL_STYLES[level]
    return Text(f"{level} {LEVEL_NAMES[level]}", style=palette.style(template), end="")


def status_text(status: str) -> Text:
    return Text(STATUS_LABELS.get(status, status),
                style=palette.style(STATUS_STYLES.get(status, "")), end="")


def countdown(deadline: float | None, now: float) -> Text:
    """Time left before an escalation's fallback applies."""
    if deadline is None:
        return Text("no deadline", style=palette.style("{muted}"))
    left = deadline - now
    if left <= 0:
        return Text("deadline passed: the fallback applies", style=palette.style("bold {bad}"))
    return Text(f"{_clock_left(left)} left", style=_urgency(left))


def deadline_text(escalation: dict[str, Any], now: float) -> Text:
    """What the deadline will do to a pending escalation: `skip in 1:48` (its fallback and the
    time left), `deadline passed: skip applies`, or `no deadline`."""
    deadline = escalation.get("deadline_ts")
    fallback = clean(str(escalation.get("fallback") or "skip"), keep_newlines=False, limit=12)
    if not isinstance(deadline, int | float):
        return Text("no deadline", style=palette.style("{muted}"), end="")
    left = deadline - now
    if left <= 0:
        return Text(f"deadline passed: {fallback} applies", style=palette.style("bold {bad}"),
                    end="")
    return Text(f"{fallback} in {_clock_left(left)}", style=_urgency(left), end="")


def _clock_left(left: float) -> str:
    minutes, seconds = divmod(int(left), 60)
    if minutes >= 60:
        return f"{minutes // 60:d}h{minutes % 60:02d}m"
    return f"{minutes:d}:{seconds:02d}"


def _urgency(left: float) -> str:
    return palette.style("bold {bad}" if left < 30 else "bold {warn}" if left < 120 else "bold")


def gauge_text(name: str, value: float | None, limit: float, action: str, width: int = 24) -> Text:
    """Two lines: `name  12 / 50 → stop` (in the limit's unit: `16 s / 8 h`, `$0.002 / $100`)
    then a bar, coloured by closeness to the limit."""
    ratio = 0.0 if value is None or limit <= 0 else value / limit
    ratio = min(ratio, 1e9) if ratio == ratio else 0.0  # inf (a tiny limit) or NaN: full or 0
    filled = max(0, min(width, round(ratio * width)))
    style = "green" if ratio < 0.6 else "yellow" if ratio < 0.85 else "bold red"
    text = Text(no_wrap=True, end="")
    text.append(clean(name, keep_newlines=False, limit=24), style="bold")
    text.append(f"  {units.gauge(name, value, limit)}", style=style)
    if action:
        text.append(f" → {clean(action, keep_newlines=False, limit=20)}", style="dim")
    text.append("\n")
    text.append("█" * filled, style=style)
    text.append("░" * (width - filled), style="dim")
    return text


def evidence_title(count: int) -> str:
    """`Evidence (1 step` / `Evidence (3 steps`: the heading the prompt, the event in full and
    its loading line share (the caller closes the parenthesis, with more or without)."""
    return f"Evidence ({count} step{'s' if count != 1 else ''}"


def evidence_lines(steps: "list[EvidenceStep]", width: int = 300) -> list[Text]:
    """Each evidence step as its call and its result, named by `#seq` as the engine names
    them: `#12 call  bash pytest -q` then `#13 result  failed (exit 1): E assert 1 == 2`.
    A call and its result named both are shown once."""
    lines: list[Text] = []
    shown: set[int] = set()
    for step in steps:
        if step.seq in shown:
            continue
        if step.call is None and step.result is None:
            line = Text(f"  #{step.seq:<6} {step.type:<11} ", style="dim", no_wrap=True, end="")
            line.append_text(safe(step.summary, width))
            lines.append(line)
            shown.add(step.seq)
            continue
        if step.call is not None:
            line = Text(f"  #{step.call[0]:<6} ", style="dim", no_wrap=True, end="")
            line.append("call    ", style="bold")
            line.append_text(safe(step.call[1], width))
            lines.append(line)
            shown.add(step.call[0])
        if step.result is None:
            lines.append(Text("          no result recorded", style="dim", end=""))
            continue
        line = Text(f"  #{step.result[0]:<6} ", style="dim", no_wrap=True, end="")
        line.append("result  ", style="bold")
        if step.ok:
            line.append("ok", style="green")
        else:
            line.append("failed" + (f" ({clean(step.error, keep_newlines=False, limit=60)})"
                                    if step.error else ""), style="red")
        if step.excerpt:
            line.append(": ")
            line.append_text(safe(" ⏎ ".join(step.excerpt.splitlines()), width))
        lines.append(line)
        shown.add(step.result[0])
    return lines
