"""Hostile text for the adversarial tests, and the check that none of it reached a terminal."""

import re
import unicodedata

from supervisor.safetext import UNSAFE_CHARS

INJECTED_SGR = "\x1b[6;53m"
"""A colour sequence no widget of ours emits (blink + overline): if it is on screen, it came
from the agent."""
HOSTILE = (
    "evil\x1b]52;c;cHduZWQ=\x07"            # OSC 52: write the operator's clipboard
    "\x1b]0;owned title\x1b\\"               # OSC 0: retitle the window
    "\x1b[2J\x1b[H" + INJECTED_SGR +         # clear the screen, home, odd SGR
    "\x9b2J\x9d8;;https://x\x9c\x85\x7f"     # 8-bit CSI, 8-bit OSC, NEL, DEL
    "\u202eRTL\u202c\u2066iso\u2069\u200f"   # bidi override, isolate, RLM
    "z\u200bw\u200cs\u200dp\u2060j\u2062i\u00ads\U000e0041t\U000e0100x\ufeff"
    "[bold red]pwned[/] [link=https://evil.example]click[/link] end"
)
"""Everything the issue lists: escape sequences (7- and 8-bit), C1, DEL, bidi overrides and
isolates, zero-width characters, word joiner and invisible operators, soft hyphen, tag
characters, variation selectors, BOM, and Rich markup."""
HOSTILE_NAMES = [
    "evil\x1b]52;c;cHduZWQ=\x07.py",
    "\u202eyp.exe",
    "clear\x1b[2Jscreen.txt",
    "c1\x9b2J\x85.md",
    "zero\u200bwidth\u2060\u00ad.js",
    "tag\U000e0041\U000e0100.txt",
    "[bold]markup[red]x.txt",
]
"""File names an agent can create (every byte but `/` and NUL is allowed)."""

_LEGIT = re.compile(r"\x1b\[[0-9;:?<>=]*[A-Za-z@`]")
"""What a terminal renderer itself writes: CSI sequences (colours, cursor moves)."""
_UNSAFE = re.compile(f"[{UNSAFE_CHARS}]")


def unsafe_in(output: str) -> list[str]:
    """What reached the terminal that must not have: the injected sequences, any escape that is
    not a plain CSI (OSC, DCS, ...), C1 controls and DEL, bidi and invisible characters
    (a zero-width joiner between two pictographs excepted), hyperlinks."""
    found = []
    for marker in (INJECTED_SGR, "\x1b[2J", "\x1b]", "\x1bP", "\x1b_", "\x1b^"):
        if marker in output:
            found.append(repr(marker))
    text = _LEGIT.sub("", output)
    found += sorted({f"U+{ord(ch):04X} {unicodedata.name(ch, '?')}" for ch in _UNSAFE.findall(
        text) if ch not in "\n\r"})
    found += [f"U+200D outside an emoji at {m.start()}" for m in re.finditer("\u200d", text)
              if not (_pictograph(text, m.start() - 1) and _pictograph(text, m.start() + 1))]
    return found


def _pictograph(text: str, index: int) -> bool:
    return 0 <= index < len(text) and ord(text[index]) >= 0x1F000
