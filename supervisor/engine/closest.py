"""Where a failed edit's search text is: the closest region of the file, and how it differs.

The most common loop of coding agents is an edit whose search text is not in the file (a
`str_replace` whose `old_str` "did not appear verbatim", Claude Code's "String to replace not
found"). The agent is told only that it failed; it re-reads the file or guesses again. Here the
file's current text and the search text give the answer in one step: the region that best
matches (with line numbers and a few lines of context) and what differs:

- `found` / `ambiguous`: the text is in the file (once / several times: every occurrence's line);
- `line_numbers`: the search text carries line-number prefixes copied from a file view
  (`   316\\t`, `316|`, `316→`); without them it is in the file;
- `escaped`: the search text has the two characters `\\n` (or `\\t`) where the file has a line
  break (a tab); with real ones it is in the file;
- `whitespace` / `indentation`: the same lines apart from spaces inside or at the end of lines
  and blank lines / apart from the leading indentation (tabs against spaces, another level);
- `changed`: a similar region whose lines differ: lines of the file the search text lacks,
  lines of the search text the file lacks, and lines that differ (each named);
- `none`: nothing similar in the file; `too_large`: the file has too many lines to search;
  `empty`: the search text is blank.

The alignment works on lines: every line is compared with whitespace runs collapsed, with
rapidfuzz's normalised Indel similarity. Distinctive search lines vote for where the text
starts (each similar file line votes for its offset); the best few offsets are aligned line by
line (a monotone alignment within a band, so inserted or missing lines are found) and the
alignment with the highest similarity wins. Everything is bounded: the file's lines
(`MAX_FILE_LINES`), the search text, the votes per line and the alignment band. A 5,000-line
file takes about 10 ms, a 1 MiB one (the guard's read bound) about 50 ms, within 2x of the bare
rapidfuzz scan of its lines (`benchmarks/run.py guidance`).

Pure: text in, a `Match` out; the guard reads the file (bounded) and passes its text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

MatchKind = Literal[
    "found", "ambiguous", "line_numbers", "escaped", "whitespace", "indentation", "changed",
    "none", "too_large", "empty",
]
CleanStep = Literal["escaped", "line_numbers"]
"""What `_clean` took out of a search text (each is also the `MatchKind` it leads to)."""

MAX_FILE_LINES = 50_000
"""Files with more lines are not searched (`too_large`)."""
MAX_SEARCH_LINES = 400
MAX_SEARCH_CHARS = 40_000
"""Longer search texts are cut before matching (an edit that long is rare and slow to align)."""
CONTEXT_LINES = 2
"""Lines of context shown before and after the region."""
SHOWN_LINES = 16
"""At most this many lines are shown (a longer region shows the part around its first
difference)."""
LINE_CHARS = 200
"""Each shown line is cut to this many characters."""
MAX_OCCURRENCES = 50
"""Exact occurrences counted at most (their line numbers are listed)."""
SIMILAR = 0.5
"""Least similarity (0-1) of the best region for it to count as similar at all: the sum of each
paired line's similarity squared, over the number of search lines (an unpaired search line
counts 0) plus half a line for each line of the region the search text lacks. Squaring makes
one exact line worth more than two half-alike ones, and a missing line costs less than a wrong
one, so the right lines with one the agent left out beat a region of look-alikes
(`DEF(tilde);` for `DEF(idseqsingle);`)."""
_EXTRA_LINE = 0.5
_LINE_MATCH = 0.5
"""Least similarity of two lines for the alignment to pair them."""
_VOTE_CUTOFF = 55
_VOTE_LINES = 8
_HITS_PER_LINE = 64
_OFFSETS_TRIED = 6
_DISTINCT_TRIED = 3

_PREFIX = re.compile(r"^ *(\d{1,7})(?:\t|→)|^(\d{1,7})[|:]")
"""A line-number prefix of a file view: `cat -n` (`   316\\t`), Claude Code's Read (`316→`),
OpenHands' open_file (`316|`), SWE-agent's open (`316:`). Prefixes count only when their
numbers follow one another line by line, as a view prints them."""


@dataclass(frozen=True, slots=True)
class LineDifference:
    """One line where the region and the search text differ.

    `line` is the file's line number (None for a line of the search text the file lacks);
    `file_text` is None for a line only the search text has, `search_text` None for a line only
    the file has."""

    line: int | None
    file_text: str | None
    search_text: str | None


@dataclass(frozen=True, slots=True)
class Match:
    """The closest region of a file to a search text, and how it differs (module docstring).

    `start`/`end` are the region's first and last line (1-based, 0 when there is none);
    `shown` the lines to show the agent, context included, as (line number, text) with long
    lines cut; `occurrences` the first line of each exact occurrence (of the cleaned text, for
    `line_numbers`/`escaped`); `score` the similarity 0-1; `detail` a short phrase of what
    differs (indentation, spacing; for `line_numbers` the first prefix removed); `cleaned`
    what was removed from the search text before
    matching (`line_numbers`, `escaped`) even when it still differs otherwise."""

    kind: MatchKind
    total_lines: int = 0
    start: int = 0
    end: int = 0
    score: float = 0.0
    occurrences: tuple[int, ...] = ()
    shown: tuple[tuple[int, str], ...] = ()
    differences: tuple[LineDifference, ...] = ()
    detail: str = ""
    cleaned: tuple[str, ...] = ()

    @property
    def region_text(self) -> str:
        """The shown lines as text (what the agent sees of the file)."""
        return "\n".join(text for _, text in self.shown)


def closest_match(
    text: str, search: str, *, first_line: int = 1, context: int = CONTEXT_LINES,
    max_shown: int = SHOWN_LINES,
) -> Match:
    """The region of `text` closest to `search`, and how they differ.

    `first_line` is the line number of `text`'s first line (when the caller passes a slice of a
    file). Never raises on odd input: any text and search give a `Match`."""
    lines = _split(text)
    total = len(lines)
    if total > MAX_FILE_LINES:
        return Match("too_large", total)
    search = search[:MAX_SEARCH_CHARS]
    if not search.strip():
        return Match("empty", total)
    doc = _Doc(text, lines, first_line, context, max_shown)

    found = doc.occurrences(search)
    if found:
        return doc.exact("found" if len(found) == 1 else "ambiguous", found, search)
    cleaned, steps, prefix = _clean(search)
    if steps:
        found = doc.occurrences(cleaned)
        if found:
            return doc.exact(steps[-1], found, cleaned, steps, prefix)
    s_lines = _trim_blank(_split(cleaned)[:MAX_SEARCH_LINES])
    if not s_lines:
        return Match("empty", total)
    # equal apart from whitespace only if the text without whitespace holds the search text
    # without it (one pass in C rules most failures out before any line is compared)
    if _squash("\n".join(s_lines)) in doc.squashed:
        loose = doc.whitespace_match(s_lines)
        if loose is not None:
            return doc.loose(loose, s_lines, steps)
    return doc.fuzzy(s_lines, steps)


# -- internals ---------------------------------------------------------------------------------


def _split(text: str) -> list[str]:
    """Lines as an editor numbers them: split on \\n only, a final newline ends the last line,
    a \\r before the \\n is not part of the line."""
    lines = text.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _trim_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _norm(line: str) -> str:
    return " ".join(line.split())


_NO_SPACE = str.maketrans("", "", " \t\r\n\f\v")


def _squash(line: str) -> str:
    """A text without (ASCII) whitespace: two texts equal this way differ in whitespace only.
    `str.translate` in C: cheap even for a whole 1 MiB file."""
    return line.translate(_NO_SPACE)


def _clean(search: str) -> tuple[str, tuple[CleanStep, ...], str]:
    """The search text without what agents wrongly put into it: literal `\\n`/`\\t` escapes
    (the JSON of a tool call escaped twice) and line-number prefixes copied from a view.
    Returns the cleaned text, what was cleaned, and the first prefix removed."""
    steps: list[CleanStep] = []
    prefix = ""
    if "\\n" in search and search.count("\\n") > search.count("\n"):
        search = search.replace("\\n", "\n").replace("\\t", "\t")
        steps.append("escaped")
    lines = search.split("\n")
    found = [_PREFIX.match(line) for line in lines]
    numbers = [int(m.group(1) or m.group(2)) if m else None for m in found]
    marked = [n is not None for n in numbers]
    rest = marked[1:] if len(marked) > 1 else marked  # the first line often starts after one
    seq = [n for n in numbers if n is not None]
    consecutive = all(b - a == 1 for a, b in pairwise(seq))
    if seq and consecutive and sum(rest) >= max(1, (len(rest) + 1) // 2):
        prefix = next(m.group(0) for m in found if m)
        search = "\n".join(line[m.end():] if m else line
                           for line, m in zip(lines, found, strict=True))
        steps.append("line_numbers")
    return search, tuple(steps), prefix


@dataclass(slots=True)
class _Loose:
    """A whitespace-insensitive match: file line index of each search line (None: blank)."""

    rows: list[int | None]
    count: int


class _Doc:
    """The file being searched, with what every strategy needs."""

    def __init__(self, text: str, lines: list[str], first_line: int, context: int,
                 max_shown: int) -> None:
        self.text = text
        self.lines = lines
        self.first = first_line
        self.context = max(0, context)
        self.max_shown = max(1, max_shown)
        self._norm: list[str] | None = None
        self._starts: list[int] | None = None

    @property
    def squashed(self) -> str:
        """The whole text without whitespace."""
        return _squash(self.text)

    @property
    def norm(self) -> list[str]:
        if self._norm is None:
            self._norm = [_norm(line) for line in self.lines]
        return self._norm

    # -- exact -----------------------------------------------------------------------------

    def occurrences(self, needle: str) -> list[int]:
        """0-based line index of each exact occurrence (overlapping ones too), bounded."""
        if not needle:
            return []
        found: list[int] = []
        at = self.text.find(needle)
        while at >= 0 and len(found) < MAX_OCCURRENCES:
            found.append(self._line_of(at))
            at = self.text.find(needle, at + 1)
        return found

    def _line_of(self, offset: int) -> int:
        if self._starts is None:
            starts = [0]
            at = self.text.find("\n")
            while at >= 0:
                starts.append(at + 1)
                at = self.text.find("\n", at + 1)
            self._starts = starts
        return min(bisect_right(self._starts, offset) - 1, max(len(self.lines) - 1, 0))

    def exact(self, kind: MatchKind, found: list[int], needle: str,
              steps: tuple[str, ...] = (), prefix: str = "") -> Match:
        span = needle.count("\n") - (1 if needle.endswith("\n") else 0)
        start, end = found[0], min(found[0] + max(span, 0), len(self.lines) - 1)
        if kind == "ambiguous":
            shown = self._shown_occurrences(found)
        else:
            shown = self._shown(start, end, start)
        return Match(kind, len(self.lines), start + self.first, end + self.first, 1.0,
                     tuple(i + self.first for i in dict.fromkeys(found)), shown, (),
                     prefix if kind == "line_numbers" else "", steps)

    # -- whitespace-insensitive ------------------------------------------------------------

    def whitespace_match(self, s_lines: list[str]) -> _Loose | None:
        """The first place where the search lines equal file lines apart from whitespace (all
        of it: `f(a, b)` and `f( a,b )` are equal here; blank lines skipped on both sides; the
        first search line may be the end of a file line and the last one the start of one, as
        in an exact substring match)."""
        want = [(i, _squash(line)) for i, line in enumerate(s_lines) if line.strip()]
        if not want:
            return None
        have = [(j, _squash(line)) for j, line in enumerate(self.lines) if line.strip()]
        k = len(want)
        rows: list[int | None] | None = None
        count = 0
        for p in range(len(have) - k + 1):
            if not _fits(have[p][1], want[0][1], k == 1, "first"):
                continue
            if all(_fits(have[p + q][1], want[q][1], False,
                         "last" if q == k - 1 else "middle") for q in range(1, k)):
                count += 1
                if rows is None:
                    rows = [None] * len(s_lines)
                    for q, (i, _) in enumerate(want):
                        rows[i] = have[p + q][0]
        return _Loose(rows, count) if rows is not None else None

    def loose(self, loose: _Loose, s_lines: list[str], steps: tuple[str, ...]) -> Match:
        pairs = [(i, j) for i, j in enumerate(loose.rows) if j is not None]
        start, end = pairs[0][1], pairs[-1][1]
        indent, spacing, first_diff = [], [], None
        last = len(s_lines) - 1
        for i, j in pairs:
            mine, theirs = s_lines[i], self.lines[j]
            if (i == 0 and theirs.endswith(mine)) or (i == last and theirs.startswith(mine)):
                continue
            if mine == theirs:
                continue
            if mine.lstrip() == theirs.lstrip():
                indent.append((i, j))
            else:
                spacing.append((i, j))
            first_diff = j if first_diff is None else first_diff
        blank_file = sum(1 for j in range(start, end + 1) if not self.lines[j].strip())
        blank_mine = sum(1 for line in s_lines if not line.strip())
        if not indent and not spacing and blank_file == blank_mine:
            # equal but for what `_trim_blank` removed or a \r: the tool's own matching differs
            spacing.append((0, start))
        kind: MatchKind = "indentation" if indent and not spacing else "whitespace"
        if kind == "indentation":
            i, j = indent[0]
            detail = _indent_detail(_lead(s_lines[i]), _lead(self.lines[j]), j + self.first)
        else:
            detail = _spacing_detail(bool(spacing), blank_file != blank_mine)
        diffs = tuple(LineDifference(j + self.first, self.lines[j], s_lines[i])
                      for i, j in (indent + spacing)[:3])
        return Match(kind, len(self.lines), start + self.first, end + self.first, 1.0,
                     (), self._shown(start, end, first_diff if first_diff is not None else start),
                     diffs, detail, steps)

    # -- fuzzy -----------------------------------------------------------------------------

    def fuzzy(self, s_lines: list[str], steps: tuple[str, ...]) -> Match:
        from rapidfuzz import fuzz, process  # lazy: the hook pays for it only on a failed edit

        f_norm = self.norm
        s_norm = [_norm(line) for line in s_lines]
        votes: dict[int, float] = {}
        rare: list[tuple[int, int]] = []  # (how many lines it is like, offset of its best)
        for i in _vote_lines(s_norm):
            hits = process.extract(s_norm[i], f_norm, scorer=fuzz.ratio, limit=_HITS_PER_LINE,
                                   score_cutoff=_VOTE_CUTOFF)
            for _choice, score, j in hits:
                votes[j - i] = votes.get(j - i, 0.0) + score
            if hits:
                rare.append((len(hits), hits[0][2] - i))
        if not votes:
            return Match("none", len(self.lines))
        best: tuple[float, list[tuple[int, int, float]]] | None = None
        tried = sorted(votes, key=lambda o: (-votes[o], o))[:_OFFSETS_TRIED]
        # where the most distinctive lines match best is always tried: common lines (`}`,
        # `DONE();`) outvote it when a line of the search text is missing
        tried += [o for _, o in sorted(rare)[:_DISTINCT_TRIED] if o not in tried]
        for offset in tried:
            got = _align(s_norm, f_norm, offset, fuzz.ratio)
            if got and (best is None or got[0] > best[0]):
                best = got
        if best is None or best[0] < SIMILAR:
            return Match("none", len(self.lines), score=best[0] if best else 0.0)
        score, pairs = best
        start, end = pairs[0][1], pairs[-1][1]
        paired_s = {i for i, _, _ in pairs}
        paired_f = {j: (i, sim) for i, j, sim in pairs}
        diffs: list[LineDifference] = []
        first_diff: int | None = None
        for j in range(start, end + 1):
            got_pair = paired_f.get(j)
            if got_pair is None:
                if self.lines[j].strip():
                    diffs.append(LineDifference(j + self.first, self.lines[j], None))
                    first_diff = j if first_diff is None else first_diff
                continue
            i, _sim = got_pair
            if s_norm[i] != f_norm[j] and not _partial_ok(i, len(s_lines), f_norm[j], s_norm[i]):
                diffs.append(LineDifference(j + self.first, self.lines[j], s_lines[i]))
                first_diff = j if first_diff is None else first_diff
        for i, line in enumerate(s_lines):
            if i not in paired_s and line.strip():
                diffs.append(LineDifference(None, None, line))
                if first_diff is None:
                    first_diff = _near(pairs, i)
        return Match("changed", len(self.lines), start + self.first, end + self.first,
                     round(score, 3), (),
                     self._shown(start, end, first_diff if first_diff is not None else start),
                     tuple(diffs), "", steps)

    # -- what is shown ---------------------------------------------------------------------

    def _shown(self, start: int, end: int, focus: int) -> tuple[tuple[int, str], ...]:
        """The region with context, at most `max_shown` lines; a longer one is shown from a
        little before `focus` (its first difference)."""
        lo = max(0, start - self.context)
        hi = min(len(self.lines) - 1, end + self.context)
        if hi - lo + 1 > self.max_shown:
            lo = max(lo, min(focus - self.max_shown // 4, hi - self.max_shown + 1))
            hi = lo + self.max_shown - 1
        return tuple((j + self.first, _cut(self.lines[j])) for j in range(lo, hi + 1))

    def _shown_occurrences(self, found: list[int]) -> tuple[tuple[int, str], ...]:
        """A line before and the first line of each occurrence (the first few), so the agent
        sees what tells them apart."""
        rows: dict[int, str] = {}
        for j in found:
            for k in (j - 1, j):
                if 0 <= k < len(self.lines) and len(rows) < self.max_shown:
                    rows[k] = _cut(self.lines[k])
        return tuple((k + self.first, rows[k]) for k in sorted(rows))


def _fits(have: str, want: str, single: bool, where: str) -> bool:
    if single:
        return want in have
    if where == "first":
        return have.endswith(want)
    if where == "last":
        return have.startswith(want)
    return have == want


def _partial_ok(i: int, count: int, have: str, want: str) -> bool:
    """The first search line may end a file line, the last one start it (a substring edit)."""
    return (i == 0 and have.endswith(want)) or (i == count - 1 and have.startswith(want))


def _lead(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _vote_lines(s_norm: list[str]) -> list[int]:
    """The search lines that vote for the region's position: the longest (most distinctive)
    non-blank ones, at most `_VOTE_LINES`."""
    ranked = sorted((i for i, n in enumerate(s_norm) if len(n) >= 4),
                    key=lambda i: (-len(s_norm[i]), i))
    if not ranked:
        ranked = [i for i, n in enumerate(s_norm) if n]
    return ranked[:_VOTE_LINES]


def _align(s_norm: list[str], f_norm: list[str], offset: int, ratio: object
           ) -> tuple[float, list[tuple[int, int, float]]] | None:
    """The best monotone pairing of search lines with file lines near `offset` (search line i
    near file line i + offset, within a band): (score 0-1, [(i, j, line similarity squared)]);
    see `SIMILAR` for the score."""
    n, m = len(s_norm), len(f_norm)
    band = max(4, min(20, n // 5))
    lo = max(0, offset - band)
    hi = min(m, offset + n + band)
    if lo >= hi:
        return None
    width = hi - lo
    sim_cache: dict[tuple[int, int], float] = {}

    def sim(i: int, j: int) -> float:
        key = (i, j)
        got = sim_cache.get(key)
        if got is None:
            a, b = s_norm[i], f_norm[j]
            if not a or not b:
                got = 1.0 if a == b else 0.0
            elif a == b:
                got = 1.0
            else:
                got = (ratio(a, b) / 100.0) ** 2  # type: ignore[operator]
                if i in (0, n - 1) and len(a) < len(b) and _partial_ok(i, n, b, a):
                    got = 1.0
            sim_cache[key] = got
        return got

    # score[i][k]: the best total for search lines < i and file lines < lo + k
    prev = [0.0] * (width + 1)
    back: list[list[int]] = []
    for i in range(n):
        cur = [0.0] * (width + 1)
        move = [0] * (width + 1)  # 0: skip file line, 1: skip search line, 2: pair
        centre = i + offset
        for k in range(1, width + 1):
            j = lo + k - 1
            best, how = cur[k - 1], 0
            if prev[k] > best:
                best, how = prev[k], 1
            if abs(j - centre) <= band:
                s = sim(i, j)
                if s >= _LINE_MATCH ** 2 and prev[k - 1] + s > best:
                    best, how = prev[k - 1] + s, 2
            cur[k], move[k] = best, how
        if prev[0] > cur[0]:
            cur[0] = prev[0]
            move[0] = 1
        else:
            move[0] = 1
        back.append(move)
        prev = cur
    pairs: list[tuple[int, int, float]] = []
    i, k = n - 1, width
    while i >= 0 and k >= 0:
        how = back[i][k]
        if how == 2:
            pairs.append((i, lo + k - 1, sim(i, lo + k - 1)))
            i, k = i - 1, k - 1
        elif how == 1 or k == 0:
            i -= 1
        else:
            k -= 1
    if not pairs:
        return None
    pairs.reverse()
    total = sum(p[2] for p in pairs)
    extra = pairs[-1][1] - pairs[0][1] + 1 - len(pairs)
    return total / (n + _EXTRA_LINE * extra), pairs


def _near(pairs: list[tuple[int, int, float]], i: int) -> int:
    """The file line near which an unpaired search line `i` belongs."""
    before = [j for k, j, _ in pairs if k < i]
    return before[-1] if before else pairs[0][1]


def _cut(line: str) -> str:
    if len(line) <= LINE_CHARS:
        return line
    return f"{line[:LINE_CHARS]}…[+{len(line) - LINE_CHARS} chars]"


def _indent_detail(mine: str, theirs: str, line: int) -> str:
    """What differs in the indentation, on the first line where it does."""
    if ("\t" in theirs) != ("\t" in mine):
        return ("the file indents with tabs, your text with spaces" if "\t" in theirs
                else "the file indents with spaces, your text with tabs")
    return (f"line {line} is indented by {_width(theirs)} in the file and by {_width(mine)} "
            "in your text")


def _spacing_detail(inside: bool, blanks: bool) -> str:
    parts = []
    if inside:
        parts.append("spaces inside or at the end of lines")
    if blanks:
        parts.append("blank lines")
    return " and ".join(parts) or "whitespace"


def _width(lead: str) -> str:
    if not lead:
        return "nothing"
    tabs = lead.count("\t")
    spaces = len(lead) - tabs
    parts = []
    if spaces:
        parts.append(f"{spaces} space{'s' if spaces != 1 else ''}")
    if tabs:
        parts.append(f"{tabs} tab{'s' if tabs != 1 else ''}")
    return " and ".join(parts)
