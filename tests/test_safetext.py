"""safetext.clean: nothing an agent wrote can drive the operator's terminal."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supervisor.safetext import clean

DANGEROUS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e"
                       "\u2028\u2029\u2066-\u2069\ufeff]")


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b[2J\x1b[H cleared", " cleared"),
        ("a\x1b]0;window title\x07b", "ab"),
        ("a\x1b]52;c;Y2xpcA==\x1b\\b", "ab"),  # clipboard write, ST-terminated
        ("a\x1b]8;;http://x\x07link\x1b]8;;\x07b", "alinkb"),  # hyperlink
        ("a\x1bPq#0;1;2\x1b\\b", "ab"),  # DCS (sixel)
        ("a\x9b31mb", "ab"),  # 8-bit CSI
        ("a\x9d0;t\x9cb", "ab"),  # 8-bit OSC
        ("a\x1b7b\x1b8c\x1b(Bd\x1bce", "abcde"),  # save/restore cursor, charset, reset
        ("bell\x07 back\x08space", "bell backspace"),
        ("\u202eevil\u202c", "evil"),
        ("line\u2028sep\u2029", "linesep"),
        ("zero\u200bwidth\ufeff", "zerowidth"),
        ("tab\there", "tab    here"),
        ("[bold red]markup[/]", "[bold red]markup[/]"),  # markup is the renderer's job
        ("unterminated \x1b[31", "unterminated "),
    ],
)
def test_sequences_are_removed(raw: str, shown: str) -> None:
    assert clean(raw) == shown


def test_newlines_kept_or_made_visible() -> None:
    assert clean("a\r\nb\rc\n") == "a\nb\nc\n"
    assert clean("a\nb", keep_newlines=False) == "a⏎b"


def test_limit_cuts_with_an_ellipsis() -> None:
    assert clean("abcdef", limit=4) == "abc…"
    assert clean("abc", limit=4) == "abc"
    assert len(clean("\x1b[1m" * 10_000 + "x" * 10_000, limit=50)) <= 50


def test_emoji_and_accents_survive() -> None:
    text = "café 👩‍💻 日本"
    assert clean(text) == text


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_no_control_character_survives(text: str) -> None:
    out = clean(text, keep_newlines=False)
    assert not DANGEROUS.search(out) and "\n" not in out
