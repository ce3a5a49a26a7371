"""Make untrusted agent text safe to show on an operator's terminal.

Agent output can carry ANSI escape sequences, OSC sequences (which can set the window title,
write to the clipboard or draw hyperlinks), other C0/C1 control characters, bidirectional
overrides and Unicode line separators. All of them are removed; tabs become spaces and, unless
kept, newlines become a visible `⏎`. Escaping Rich markup is the renderer's job (the TUI builds
`rich.text.Text` objects, which never interpret markup); this module is stdlib only so every
layer may use it.
"""

import re

_ESCAPES = re.compile(
    r"""
    \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?      # OSC ... BEL or ST (or unterminated)
  | \x1b[P^_X][^\x1b]*(?:\x1b\\)?           # DCS, PM, APC, SOS strings
  | \x1b\[[0-?]*[ -/]*[@-~]?                # CSI sequences (colours, cursor moves)
  | \x9b[0-?]*[ -/]*[@-~]?                  # 8-bit CSI
  | \x9d[^\x07\x9c]*(?:\x07|\x9c)?          # 8-bit OSC
  | \x1b[ -/]*[0-~]?                        # other escapes: ESC 7, ESC ( B, ... (lone ESC)
    """,
    re.VERBOSE,
)
_CONTROLS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 (but tab and newline) and C1 controls
    "\u061c\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi marks, overrides
    "\u2028\u2029\ufeff\ufff9-\ufffb]"  # line/paragraph separators, BOM, annotations
)


def clean(text: str, *, keep_newlines: bool = True, limit: int | None = None) -> str:
    """Remove terminal control sequences and characters from `text`.

    With `keep_newlines=False` newlines are shown as `⏎` (for one-line table cells).
    With `limit`, the result is cut to that many characters, ending in `…`.
    """
    if limit is not None and len(text) > limit * 4:
        text = text[: limit * 4]  # bound the regex work on huge outputs
    text = _ESCAPES.sub("", text)
    text = text.replace("\t", "    ").replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROLS.sub("", text)
    if not keep_newlines:
        text = text.replace("\n", "⏎")
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return text
