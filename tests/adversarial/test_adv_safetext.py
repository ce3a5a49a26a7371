"""The one sanitiser covers what the issue lists: C1 controls, DEL, bidi overrides and every
invisible character (all of Unicode category Cf, variation selectors, tags), in either of its
two modes (`clean` for display, `strip_unsafe` for structured output), and emoji survive."""

import sys
import unicodedata

import pytest

from supervisor.safetext import clean, is_clean, strip_unsafe

FORMAT_CHARS = [chr(cp) for cp in range(sys.maxunicode + 1)
                if unicodedata.category(chr(cp)) == "Cf"]
OTHER_INVISIBLE = ["\u00ad", "\u034f", "\u115f", "\u1160", "\u3164", "\uffa0", "\u2028",
                   "\u2029", "\ufe00", "\ufe0e", "\ufe0f", "\U000e0100", "\U000e01ef", "\x7f",
                   *map(chr, range(0x80, 0xA0))]


@pytest.mark.parametrize("mode", [clean, strip_unsafe])
def test_every_format_and_invisible_character_is_removed(mode) -> None:
    # (`clean` also removes what an 8-bit string introducer such as U+0090 would swallow)
    kept = [f"U+{ord(ch):04X}" for ch in FORMAT_CHARS + OTHER_INVISIBLE
            if ch in mode(f"a{ch}b") or not mode(f"a{ch}b").startswith("a")]
    assert not kept
    assert all(not is_clean(f"a{ch}b") for ch in FORMAT_CHARS + OTHER_INVISIBLE)


def test_emoji_keep_their_joiners_and_presentation_selectors() -> None:
    for emoji in ("👩\u200d💻", "❤\ufe0f", "👍🏽", "1\ufe0f\u20e3", "🏳\ufe0f\u200d🌈"):
        assert clean(emoji) == emoji and is_clean(emoji)
    assert clean("a\u200d💻") == "a💻" and clean("💻\u200d") == "💻"


def test_strip_unsafe_never_breaks_json() -> None:
    import json

    value = {"k\x9b\u202e": "v\x9b\"\u200b,}"}  # a CSI introducer before a quote
    text = strip_unsafe(json.dumps(value, ensure_ascii=False))
    assert json.loads(text) == {"k": 'v",}'}
