"""Whether a text may hold a case-blind pattern's match, by a look for its words.

A case-blind (`re.I`) pattern whose alternatives begin differently is tried at every position
of the text: `failures`' look for a tool's refusal anywhere in the first 4 KiB of a result cost
about 170 µs of every replayed step, the look for a status report saying "still running" about
120 µs of every run or read. Each such pattern lists words one of which every match holds; a
text holding none of them is not searched, which is most results.
"""


def may_hold(text: str, words: tuple[str, ...]) -> bool:
    """False when `text` surely holds none of `words` (lower case), case ignored as `re.I`
    ignores it. Only an ASCII text is answered False: its lower case is what `re.I` compares,
    while other letters fold in ways `str.lower` does not (`re.I` reads `ſ` as `s`, and
    `str.lower` makes two letters of `İ`), so any other text is left to the pattern."""
    if not text.isascii():
        return True
    low = text.lower()
    return any(word in low for word in words)
