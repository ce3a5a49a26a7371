"""What the agent is told when an edit fails: where its text is, and whether the file changed.

Built from facts only: the file as the guard read it just now (`FileRead`), the closest match
of the search text in it (`supervisor.engine.closest`), and the versions of the file this
session saw (`FileVersion`: when the agent read it, what each of its edits left). Every
sentence states something one of those shows; where the facts do not decide (a change the
session did not make could come from another process or from a script the agent ran), the
text says what is known and no more. Bounded: `HINT_CHARS` in all, the file region included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from supervisor.engine.closest import Match, closest_match
from supervisor.engine.edits import EditFailure
from supervisor.engine.filestate import FileRead

HINT_CHARS = 1200
"""The longest hint, the file region included."""
_CHANGED_LINES = 6
_QUOTE = 60
_CUT_ROW = 100


@dataclass(frozen=True, slots=True)
class FileVersion:
    """A version of a file this session saw: at event `seq`, with content `digest` (xxh3-64 of
    the bytes, as `FileRead.digest`) and, when kept, its `text`; `tool` is the call that left
    it (an edit of the session) or "" (a read)."""

    seq: int
    digest: str
    text: str | None = None
    tool: str = ""


def failed_edit_hint(
    path: str, search: str, failure: EditFailure, file: FileRead, *,
    read: FileVersion | None = None, writes: tuple[FileVersion, ...] = (),
    budget: int = HINT_CHARS,
) -> str:
    """The hint for an edit of `path` whose `search` text was not found (or was ambiguous):
    whether the file changed since the agent read it, then where the text is."""
    name = path
    if not file.ok:
        return _unreadable(name, file)
    note = change_note(name, file, read, writes, budget=budget // 4)
    match = closest_match(file.text or "", search)
    body = explain_match(name, match, failure, budget=budget - len(note) - 1)
    return _fit(f"{note}\n{body}".strip() if note else body, budget)


def with_hint(message: str | None, hint: str | None) -> str | None:
    """A refusal's message followed by the edit hint (each bounded on its own)."""
    if not hint:
        return message
    return f"{message}\n{hint}" if message else hint


def change_note(
    path: str, now: FileRead, read: FileVersion | None, writes: tuple[FileVersion, ...] = (),
    *, budget: int = HINT_CHARS // 4,
) -> str:
    """Whether `path` changed since the agent last read it (`read`), by whom when the session's
    own edits (`writes`) explain it, and the changed lines when the read's text was kept.
    "" when there is no read on record or the file cannot be compared now."""
    if read is None or now.digest is None:
        return ""
    if now.digest == read.digest:
        return f"{path} has not changed since you last read it."
    after = [w for w in writes if w.seq > read.seq]
    if after and after[-1].digest == now.digest:
        tools = ", ".join(dict.fromkeys(w.tool for w in after if w.tool))
        edits = "edit" if len(after) == 1 else f"{len(after)} edits"
        who = f"by your own {edits} since then{f' ({tools})' if tools else ''}"
    else:
        who = ("not by an edit of this session the supervisor saw (another process, or a "
               "command of yours that wrote it)")
    head = f"{path} changed since you last read it, {who}."
    if read.text is None or now.text is None:
        return head
    lines = changed_lines(read.text, now.text)
    if not lines:
        return head
    out = head + " Changed lines:"
    for line in lines:
        if len(out) + len(line) + 1 > budget:
            out += "\n  …"
            break
        out += "\n" + line
    return out


def changed_lines(before: str, after: str, limit: int = _CHANGED_LINES) -> list[str]:
    """The lines that differ between two versions, numbered as in `after`, at most `limit`."""
    import difflib  # lazy: only a changed file needs it, not every hook call

    old, new = before.split("\n"), after.split("\n")
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            was = old[i1 + k] if i1 + k < i2 else None
            now = new[j1 + k] if j1 + k < j2 else None
            if now is not None and was is not None:
                out.append(f"  line {j1 + k + 1} now `{_q(now)}` (was `{_q(was)}`)")
            elif now is not None:
                out.append(f"  line {j1 + k + 1} added: `{_q(now)}`")
            else:
                out.append(f"  removed after line {j1}: `{_q(was or '')}`")
            if len(out) >= limit:
                return out
    return out


def explain_match(path: str, match: Match, failure: EditFailure = "not_found", *,
                  budget: int = HINT_CHARS) -> str:
    """The closest match in words, with the region of the file (bounded by `budget`)."""
    head = _headline(path, match, failure)
    if not match.shown:
        return head
    intro = "\nThe file there (the line numbers and │ are not part of it):"
    region = _region(match, budget - len(head) - len(intro) - len(_ADVICE[match.kind]) - 2)
    if not region:
        return _fit(head, budget)
    return _fit(f"{head}{intro}\n{region}\n{_ADVICE[match.kind]}".rstrip(), budget)


_ADVICE = {
    "found": "Retry the edit with this text.",
    "ambiguous": "Add a neighbouring line that differs so the text matches once, or replace "
                 "every occurrence if that is what you want.",
    "line_numbers": "Use the text without the line numbers.",
    "escaped": "Use real line breaks (and tabs) in the text, not backslash escapes.",
    "whitespace": "Copy these lines exactly, whitespace included.",
    "indentation": "Copy these lines exactly, indentation included.",
    "changed": "Base the edit on these lines as they are now.",
    "none": "", "too_large": "", "empty": "",
}


def _headline(path: str, m: Match, failure: EditFailure) -> str:
    span = f"line {m.start}" if m.start == m.end else f"lines {m.start}-{m.end}"
    cleaned = ""
    if "line_numbers" in m.cleaned and m.kind != "line_numbers":
        cleaned += " (after removing the line-number prefixes your text has)"
    if "escaped" in m.cleaned and m.kind != "escaped":
        cleaned += " (after turning the \\n in your text into line breaks)"
    if m.kind == "found":
        return (f"The text you searched for is in {path} now, at {span}"
                + (": the edit failed for another reason, or the file changed since it ran."
                   if failure == "not_found" else "."))
    if m.kind == "ambiguous":
        lines = _and([str(n) for n in m.occurrences[:10]]) + (
            " and more" if len(m.occurrences) > 10 else "")
        return (f"The text you searched for occurs {len(m.occurrences)} times in {path}, at "
                f"lines {lines}.")
    if m.kind == "line_numbers":
        shown = m.detail.replace("\t", "\\t") or "316|"
        return (f"Your search text includes line-number prefixes copied from a file view "
                f"(like `{shown}`); they are not part of the file. Without them the text is in "
                f"{path} at {span}.")
    if m.kind == "escaped":
        return (f"Your search text has the two characters \\n (backslash, n) where {path} has "
                f"line breaks; with real line breaks the text is at {span}.")
    if m.kind == "whitespace":
        return (f"The text is in {path} at {span}{cleaned}, but differs in whitespace "
                f"({m.detail}).")
    if m.kind == "indentation":
        return f"The text is in {path} at {span}{cleaned}, but indented differently: {m.detail}."
    if m.kind == "changed":
        return (f"The text you searched for is not in {path}. The closest text is at "
                f"{span}{cleaned} ({round(math.sqrt(m.score) * 100)}% alike); "
                f"{_differences(m)}.")
    if m.kind == "too_large":
        return (f"The text you searched for is not in {path}, which has {m.total_lines:,} "
                "lines: too many to search for the closest text. Search it for a distinctive "
                "line (grep -n) instead of guessing.")
    if m.kind == "empty":
        return "Your search text is blank: give the exact lines to replace."
    return (f"Nothing in {path} ({m.total_lines:,} lines) resembles the text you searched for. "
            "It is not in this file: search the workspace for a distinctive name in it "
            "(grep -rn) before editing again.")


def _differences(m: Match) -> str:
    parts = []
    for d in m.differences[:3]:
        if d.search_text is None:
            parts.append(f"line {d.line} `{_q(d.file_text or '')}` is in the file but not in "
                         "your text")
        elif d.file_text is None:
            parts.append(f"your line `{_q(d.search_text)}` is not in the file there")
        else:
            parts.append(f"line {d.line} is `{_q(d.file_text)}` in the file, "
                         f"`{_q(d.search_text)}` in your text")
    more = len(m.differences) - 3
    if more > 0:
        parts.append(f"{more} more line{'s' if more > 1 else ''} differ")
    return "; ".join(parts) if parts else "the lines differ"


def _region(m: Match, budget: int) -> str:
    """The shown lines, numbered, within `budget`. When they do not all fit, long lines are
    cut (marked …), then context lines go (after the region first), then lines from the end:
    the lines that match or differ are the last to go."""
    width = len(str(m.shown[-1][0]))
    rows = [(n, f"{n:>{width + 2}} │ {text}".rstrip()) for n, text in m.shown]
    if _size(rows) > budget:
        rows = [(n, r if len(r) <= _CUT_ROW else r[: _CUT_ROW - 1] + "…") for n, r in rows]
    while _size(rows) > budget and rows[-1][0] > m.end >= rows[0][0]:
        rows.pop()
    while _size(rows) > budget and rows[0][0] < m.start <= rows[-1][0]:
        rows.pop(0)
    return "\n".join(_fill([r for _, r in rows], budget))


def _size(rows: list[tuple[int, str]]) -> int:
    return sum(len(r) + 1 for _, r in rows)


def _fill(rows: list[str], budget: int) -> list[str]:
    out: list[str] = []
    used = 0
    for row in rows:
        if used + len(row) + 1 > budget:
            break
        out.append(row)
        used += len(row) + 1
    return out


def _unreadable(path: str, file: FileRead) -> str:
    if file.status == "missing":
        return (f"{path} does not exist. Check the path (list the directory or search for the "
                "file name) before editing again.")
    if file.status == "too_large":
        return (f"The edit of {path} failed; the file is too large to show the closest text "
                f"({file.detail}). Search it for a distinctive line (grep -n) instead.")
    if file.status == "binary":
        return (f"The edit of {path} failed; the file is {file.detail}, so a text edit cannot "
                "apply to it.")
    return f"The edit of {path} failed, and the supervisor could not read the file ({file.detail})."


def _fit(text: str, budget: int) -> str:
    """The text within `budget` characters (the parts are sized to fit; this is the backstop)."""
    return text if len(text) <= budget else text[: max(budget - 1, 0)] + "…"


def _q(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _QUOTE else text[: _QUOTE - 1] + "…"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]

