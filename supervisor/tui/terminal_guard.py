"""The last line of defence: nothing the dashboard draws can put a control sequence, a bidi
override or an invisible character on the operator's terminal, whichever widget drew it.

Every widget renders agent text through `supervisor.tui.format.safe()` (or the model cleaned it
when folding), but a widget that forgets must not be a hole. All output of a Textual app leaves
through one place: `Strip.render`, which turns a line of styled segments into the characters
written to the terminal (both kinds of screen update call it, and its result is cached per
strip). `install()` wraps it once per process: a strip whose text holds anything
`supervisor.safetext` removes is rendered from cleaned segments, padded to the cells the layout
expected, and without hyperlinks (a `[link=...]` an agent smuggled in as markup would otherwise
become an OSC 8 sequence; the dashboard draws no links of its own). A clean strip costs one
regular-expression search, once.
"""

from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from textual.strip import Strip

from supervisor.safetext import clean, is_clean

_MARK = "_supervisor_terminal_guard"


def install() -> None:
    """Guard every strip's rendering (idempotent)."""
    if getattr(Strip.render, _MARK, False):
        return
    original = Strip.render

    def render(self: Strip, console: Any) -> str:
        if self._render_cache is None and not _safe(self):
            self._render_cache = original(_cleaned(self), console)
        return original(self, console)

    setattr(render, _MARK, True)
    render.__doc__ = original.__doc__
    Strip.render = render  # type: ignore[method-assign]


def _safe(strip: Strip) -> bool:
    segments = strip._segments
    if not is_clean("".join(text for text, _, _ in segments)):
        return False
    return not any(style is not None and style.link for _, style, _ in segments)


def _cleaned(strip: Strip) -> Strip:
    out = []
    for text, style, control in strip._segments:
        if control is not None:
            continue  # a control segment has no place inside a line of text
        # exactly the cells the layout counted: padded where a sequence was removed, cut where
        # a tab became spaces
        safe = set_cell_size(clean(text, keep_newlines=False), cell_len(text))
        if style is not None and style.link:
            style = style.update_link(None)
        out.append(Segment(safe, style))
    return Strip(out, strip.cell_length)
