"""The colours of the dashboard's own labels (statuses, levels, deadlines, the queue), taken from
the current theme and made readable on its background: at least `MIN_CONTRAST` (WCAG AA for
text), whatever theme is chosen, shipped or the user's.

Rich styles cannot name Textual's design variables, so the screens write their styles as
templates (`"bold {bad}"`) and `style()` fills them in from the palette of the current theme;
the app calls `use_theme` whenever the theme changes.
"""

from dataclasses import asdict, dataclass

from textual.color import Color
from textual.theme import Theme

MIN_CONTRAST = 4.5
"""WCAG 2 AA for normal text."""
MARGIN = 0.6
"""Aimed above `MIN_CONTRAST`: Textual draws text at the theme's `text_alpha` (slightly toward
its background), which costs a little contrast."""


def luminance(color: Color) -> float:
    """WCAG relative luminance of an opaque colour."""

    def channel(value: int) -> float:
        v = value / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)


def contrast(a: Color, b: Color) -> float:
    """WCAG contrast ratio of two opaque colours (1 to 21)."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def readable(color: Color, background: Color, minimum: float = MIN_CONTRAST) -> Color:
    """`color`, darkened (on a light background) or lightened (on a dark one) until it reads."""
    dark_background = luminance(background) < 0.5
    for _ in range(40):
        if contrast(color, background) >= minimum:
            return color
        color = color.lighten(0.03) if dark_background else color.darken(0.03)
    return Color(255, 255, 255) if dark_background else Color(0, 0, 0)


@dataclass(frozen=True, slots=True)
class Palette:
    """Hex colours by role: text colours readable on the theme's backgrounds, and the colours of
    labels drawn on a coloured background (`*_bg`) with their readable text (`on_*`)."""

    ok: str = "#2e7d32"
    warn: str = "#8a5a00"
    bad: str = "#c62828"
    info: str = "#0b5cad"
    muted: str = "#5c6370"
    warn_bg: str = "#ffb454"
    on_warn: str = "#000000"
    bad_bg: str = "#c62828"
    on_bad: str = "#ffffff"
    alert_bg: str = "#a0379c"
    """An unsupervised agent (its hooks stopped): the theme's secondary colour, apart from the
    warning of a request and the error of a dead agent."""
    on_alert: str = "#ffffff"

    @classmethod
    def of(cls, theme: Theme) -> "Palette":
        """The palette of a theme: readable on its background and its surface (the table,
        the queue and the prompts are drawn on one or the other)."""
        back = Color.parse(theme.background or ("#000000" if theme.dark else "#ffffff"))
        grounds = [back, *(Color.parse(c) for c in (theme.surface, theme.panel) if c)]
        fore = Color.parse(theme.foreground or ("#ffffff" if theme.dark else "#000000"))

        def text(value: str | None, fallback: str) -> str:
            color = Color.parse(value or fallback)
            for _ in range(3):  # readable on every ground (a change for one may undo another)
                for ground in grounds:
                    color = readable(color, ground, MIN_CONTRAST + MARGIN)
            return color.hex

        def label(value: str | None, fallback: str) -> tuple[str, str]:
            """A coloured label's background, and black or white text readable on it."""
            background = Color.parse(value or fallback)
            black, white = Color(0, 0, 0), Color(255, 255, 255)
            ink = black if contrast(black, background) >= contrast(white, background) else white
            return readable(background, ink, MIN_CONTRAST + 2 * MARGIN).hex, ink.hex

        warn_bg, on_warn = label(theme.warning, "#ffb454")
        bad_bg, on_bad = label(theme.error, "#c62828")
        alert_bg, on_alert = label(theme.secondary, "#a0379c")
        return cls(
            ok=text(theme.success, "#2e7d32"), warn=text(theme.warning, "#8a5a00"),
            bad=text(theme.error, "#c62828"), info=text(theme.primary, "#0b5cad"),
            muted=text(fore.blend(back, 0.4).hex, fore.hex),
            warn_bg=warn_bg, on_warn=on_warn, bad_bg=bad_bg, on_bad=on_bad,
            alert_bg=alert_bg, on_alert=on_alert,
        )


_roles: dict[str, str] = asdict(Palette())


def use_theme(theme: Theme) -> None:
    """Take the colours of `theme` (called by the app when its theme changes)."""
    global _roles
    _roles = asdict(Palette.of(theme))


def colours() -> dict[str, str]:
    """The roles' colours now: a new dict at each theme change, so a view that keeps text
    styled earlier (the sessions table's rows) knows when to make it again."""
    return _roles


def style(template: str) -> str:
    """A Rich style from a template naming roles: `"bold {bad}"`, `"bold {on_bad} on {bad_bg}"`."""
    return template.format_map(_roles)
