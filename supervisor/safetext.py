"""Make untrusted agent text safe to show on an operator's terminal: the one sanitiser.

Agent output, file names, git output, ids and policy values can carry ANSI escape sequences,
OSC sequences (which set the window title, write to the clipboard or draw hyperlinks), other C0
and C1 control characters and DEL, bidirectional overrides and isolates (which reorder what is
shown, "Trojan Source"), invisible characters (zero-width spaces and joiners, word joiners and
invisible operators U+2060-2064, the soft hyphen, Unicode tag characters U+E0000-E007F, every
other format character of category Cf, variation selectors, Hangul fillers) and Unicode line
separators. All of them are removed; tabs become spaces and, unless kept, newlines become a
visible `⏎`. Two exceptions keep emoji whole and hide nothing: a zero-width joiner between two
pictographs (👩‍💻) and one variation selector right after a symbol (❤️).

Escaping Rich markup is the renderer's job (the TUI builds `rich.text.Text` objects, which never
interpret markup, and its console strips what a widget forgot: `supervisor.tui.format`); this
module is stdlib only so every layer may use it.
"""

import re

_ESCAPES = re.compile(
    r"""
    \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?      # OSC ... BEL or ST (or unterminated)
  | \x1b[P^_X][^\x1b]*(?:\x1b\\)?           # DCS, PM, APC, SOS strings
  | \x1b\[[0-?]*[ -/]*[@-~]?                # CSI sequences (colours, cursor moves)
  | \x9b[0-?]*[ -/]*[@-~]?                  # 8-bit CSI
  | [\x9d\x90\x9e\x9f\x98][^\x07\x9c\x1b]*(?:\x07|\x9c|\x1b\\)?  # 8-bit OSC, DCS, PM, APC, SOS
  | \x1b[ -/]*[0-~]?                        # other escapes: ESC 7, ESC ( B, ... (lone ESC)
    """,
    re.VERBOSE,
)
UNSAFE_CHARS = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"        # C0 (but tab and newline), DEL, C1
    "\u00ad"                              # soft hyphen
    "\u034f"                              # combining grapheme joiner
    "\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2"  # Arabic format characters, ALM
    "\u115f\u1160\u3164\uffa0"            # Hangul fillers (render as nothing)
    "\u180b-\u180f"                       # Mongolian variation selectors and vowel separator
    "\u200b\u200c\u200e\u200f"             # zero-width space, non-joiner; LRM, RLM
    "\u2028\u2029"                        # line and paragraph separators
    "\u202a-\u202e"                       # bidi embeddings and overrides
    "\u2060-\u206f"                       # word joiner, invisible operators, isolates, ...
    "\ufe00-\ufe0d"                       # variation selectors (hide data in "one" character)
    "\ufeff\ufff9-\ufffb"                 # BOM / zero-width no-break space, annotations
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f"               # tag characters
    "\U000e0100-\U000e01ef"               # variation selectors supplement
)
"""Every character `clean` removes wherever it is, as a regular-expression class body: control
characters and invisible or reordering characters (all of Unicode category Cf included). The
zero-width joiner U+200D and the variation selectors U+FE0E/U+FE0F are removed too, except in
an emoji (`_EMOJI_PARTS`)."""
_PICTOGRAPH = ("\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u21aa\u231a-\u23ff\u24c2"
               "\u25aa-\u25fe\u2600-\u27bf\u2934\u2935\u2b05-\u2b55\u3030\u303d\u3297"
               "\u3299\U0001f000-\U0001faff")
_EMOJI_PARTS = (
    f"\u200d(?![{_PICTOGRAPH}])"                                  # a joiner not before,
    f"|(?<![{_PICTOGRAPH}\ufe0f\U0001f3fb-\U0001f3ff])\u200d"    # or not after, a pictograph
    f"|(?<![{_PICTOGRAPH}0-9#*])[\ufe0e\ufe0f]"                    # a selector not after one
)
_CONTROLS = re.compile(f"[{UNSAFE_CHARS}]|{_EMOJI_PARTS}")


def clean(text: str, *, keep_newlines: bool = True, limit: int | None = None) -> str:
    """Remove terminal control sequences and unsafe characters from `text`.

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


def strip_unsafe(text: str) -> str:
    """`text` without any unsafe character, and nothing else changed (escape sequences lose
    their ESC or C1 introducer, so the rest shows as harmless text). For a stream of output
    whose structure must stay intact (JSON lines): a removed character is never a JSON one."""
    return _CONTROLS.sub("", text)


def is_clean(text: str) -> bool:
    """True when `clean` would leave `text` as it is (newlines aside): no escape, no unsafe
    character. Cheap: a fast check before cleaning text that is almost always clean."""
    return "\t" not in text and _CONTROLS.search(text) is None


_QUOTE_MARKS = str.maketrans({c: "'" for c in "“”„‟〝〞〟＂\"«»‹›"})


def quote(text: str, limit: int = 120) -> str:
    """Agent text as a quotation in the supervisor's own words: `“…”`, on one line, at most
    `limit` characters, without escape sequences or unsafe characters, and with every double
    quotation mark inside it (`”`, `"`, `»`, ...) made a single one, so the quoted text cannot
    end the quotation and go on in the supervisor's voice."""
    text = clean(text, keep_newlines=False).translate(_QUOTE_MARKS).strip()
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return f"“{text}”"


_SGR = re.compile(r"\x1b\[[0-9;]{0,64}m")
"""A colour or text-style sequence (SGR) and nothing else: digits and `;` only."""


def clean_sgr(text: str, *, reset: bool = True) -> str:
    """`clean` that keeps colour and style sequences (SGR, `ESC [ digits ; m`): every other
    escape sequence and unsafe character is removed as `clean` does, and (unless `reset` is
    False: one line of a screen whose style carries on) the style is reset at the end. For a
    terminal screen captured with its colours (`tmux capture-pane -e`)."""
    out = []
    last = 0
    for match in _SGR.finditer(text):
        out.append(clean(text[last:match.start()]))
        out.append(match.group())
        last = match.end()
    out.append(clean(text[last:]))
    return "".join(out) + ("\x1b[0m" if reset else "")

