"""What a recorded run shows of its files: line-numbered views and edits, followed through time.

A recorded run has no copy of the workspace. What it has: the file views the agent asked for
(`cat -n`-style output of an editor's `view`, OpenHands' `read` and `open_file`, SWE-agent's
`open`, Claude Code's `Read`), the snippets editors print after a successful edit, and the edits
themselves (`supervisor.engine.edits`). `SeenFiles` replays those in order and keeps, per
file, the lines the run has shown so far at their current line numbers:

- a view sets the lines it shows (and the file's length when it shows the whole file);
- a successful replacement whose search text lies in the known lines is applied there (later
  lines shift by the difference in line count); an insertion shifts the lines below it; a
  whole-file write makes every line known;
- any other successful change of the file (a replacement outside the known lines, a shell
  command naming the file, a command that moves, deletes or rewrites files) makes its lines
  unknown until the next view.

Limits, said plainly: a script that writes the file without naming it (`python fix.py`) goes
unnoticed, so a reconstruction can be stale until the next view; only views that number their
lines are read (a plain `cat` is not); an output cut by the recorder (64 KiB) or by the tool
(`<response clipped>`) shows only its lines. `known_blocks` returns what is known as runs of
consecutive lines, so a caller never mistakes a gap for content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from supervisor.engine import tools
from supervisor.engine.edits import Edit, edits_of

_STYLES: tuple[re.Pattern[str], ...] = (
    re.compile(r"^ *(\d+)\t(.*)$"),   # cat -n (editors' view, OpenHands read)
    re.compile(r"^ *(\d+)→(.*)$"),    # Claude Code Read
    re.compile(r"^(\d+)\|(.*)$"),     # OpenHands open_file / edit_file_by_replace
    re.compile(r"^(\d+):(.*)$"),      # SWE-agent open / goto / scroll
)
_FILE_HEADER = re.compile(r"^\[File: (.+?) \((\d+) lines total")
_EDITED_HEADER = re.compile(r"^The file (.+?) has been (?:edited|updated)")
_CAT_HEADER = re.compile(r"result of running `cat -n` on (?:a snippet of )?(.+?):\s*$")
_VIEW_TOOLS = frozenset({"read", "Read", "view", "open", "goto", "scroll_up", "scroll_down",
                         "run_ipython", "str_replace_editor", "edit", "view_file",
                         "read_file", "str_replace_based_edit_tool", "edit_file_by_replace"})
_EDIT_TOOLS = frozenset({"edit", "str_replace_editor", "str_replace_based_edit_tool", "Edit",
                         "MultiEdit", "Write", "replace", "write_file", "insert", "append"})
_WRITING_COMMAND = re.compile(
    r"\b(?:sed\s+-i|perl\s+-[a-z]*i|mv|cp|rm|git\s+(?:checkout|restore|reset|stash|apply|am|"
    r"merge|rebase|revert|cherry-pick|pull)|patch|tee|truncate|dd|rsync|tar|unzip)\b"
    r"|>{1,2}\s*[^\s&|;>]")
_CLIPPED = "<response clipped>"


@dataclass
class FileKnowledge:
    """The lines of one file the run has shown, by current line number (1-based)."""

    lines: dict[int, str] = field(default_factory=dict)
    total: int | None = None
    """The file's line count, when a view showed all of it or said it."""

    def blocks(self) -> list[tuple[int, list[str]]]:
        """The known lines as runs of consecutive lines: (first line number, lines)."""
        out: list[tuple[int, list[str]]] = []
        for number in sorted(self.lines):
            if out and out[-1][0] + len(out[-1][1]) == number:
                out[-1][1].append(self.lines[number])
            else:
                out.append((number, [self.lines[number]]))
        return out

    def complete(self) -> bool:
        return self.total is not None and len(self.lines) == self.total and all(
            n in self.lines for n in range(1, self.total + 1))


class SeenFiles:
    """Follow a run's files through its events (see the module docstring)."""

    def __init__(self) -> None:
        self.files: dict[str, FileKnowledge] = {}
        self.open_file: str | None = None
        """The file SWE-agent's windowed tools work on (the last `[File: ...]` header)."""
        self.confirmed = 0
        self.contradicted = 0
        """Known lines a later view showed the same / different: how far to trust the rest."""

    def get(self, path: str) -> FileKnowledge:
        return self.files.get(_key(path)) or FileKnowledge()

    def known_blocks(self, path: str) -> list[tuple[int, list[str]]]:
        return self.get(path).blocks()

    def edits(self, call: dict[str, Any]) -> list[Edit]:
        """The edits of a `tool_call`, an edit of "the open file" named by its path."""
        args = _object(call.get("args"))
        out = []
        for edit in edits_of(str(call.get("tool") or ""), args):
            if not edit.path:
                if not self.open_file:
                    continue
                edit = replace(edit, path=self.open_file)
            out.append(edit)
        return out

    def observe(self, call: dict[str, Any], result: dict[str, Any],
                edits: list[Edit] | None = None) -> None:
        """Apply one tool call and its result (protocol `tool_call` / `tool_result` dicts);
        `edits`: `self.edits(call)`, when the caller read them already (the call is parsed
        once)."""
        tool = str(call.get("tool") or "")
        args = _object(call.get("args"))
        ok = result.get("ok") is True
        raw_output = result.get("output")
        output = raw_output if isinstance(raw_output, str) else ""
        edits = self.edits(call) if edits is None else edits
        if ok and edits:
            for edit in edits:
                self._apply(edit)
        elif ok and tool in tools.vocabulary().shell:
            self._shell(tools.vocabulary().line_of(args) or "")
        elif ok and tool in _EDIT_TOOLS and _call_path(args) and not _is_view(args):
            self.files.pop(_key(_call_path(args) or ""), None)  # a change we cannot follow
        if ok and (tool in _VIEW_TOOLS or edits):
            self._view(output, _call_path(args), full_request=_whole_view(tool, args))

    # -- edits -----------------------------------------------------------------------------

    def _apply(self, edit: Edit) -> None:
        key = _key(edit.path)
        known = self.files.setdefault(key, FileKnowledge())
        if edit.kind == "write":
            lines = _split(edit.text)
            known.lines = {i + 1: line for i, line in enumerate(lines)}
            known.total = len(lines)
        elif edit.kind == "insert":
            self._insert(known, edit.line or 0, _split(edit.text))
        elif edit.kind == "lines":
            self._lines(known, edit.line or 1, edit.end or 0, _split(edit.text))
        elif not self._replace(known, edit):
            self.files[key] = FileKnowledge()

    @staticmethod
    def _insert(known: FileKnowledge, after: int, new: list[str]) -> None:
        shifted = {(n + len(new) if n > after else n): t for n, t in known.lines.items()}
        for i, line in enumerate(new):
            shifted[after + 1 + i] = line
        known.lines = shifted
        if known.total is not None:
            known.total += len(new)

    @staticmethod
    def _lines(known: FileKnowledge, start: int, end: int, new: list[str]) -> None:
        end = max(end, start - 1)
        delta = len(new) - (end - start + 1)
        rebuilt = {n: t for n, t in known.lines.items() if n < start}
        rebuilt.update({start + i: t for i, t in enumerate(new)})
        rebuilt.update({n + delta: t for n, t in known.lines.items() if n > end})
        known.lines = rebuilt
        if known.total is not None:
            known.total += delta

    @staticmethod
    def _replace(known: FileKnowledge, edit: Edit) -> bool:
        """Apply a replacement inside a known block; False when it is not (uniquely) there."""
        search = edit.search or ""
        hits = []
        for first, lines in known.blocks():
            text = "\n".join(lines)
            at = text.find(search)
            while at >= 0:
                hits.append((first, lines, text, at))
                at = text.find(search, at + 1)
        if not search or not hits or (len(hits) > 1 and not edit.replace_all):
            return False
        if len(hits) > 1:
            return False  # replace_all across blocks: line shifts interleave; not followed
        first, lines, text, at = hits[0]
        new_text = text[:at] + edit.text + text[at + len(search):]
        new_lines = new_text.split("\n")
        delta = len(new_lines) - len(lines)
        last = first + len(lines) - 1
        rebuilt = {n: t for n, t in known.lines.items() if n < first}
        rebuilt.update({first + i: t for i, t in enumerate(new_lines)})
        rebuilt.update({n + delta: t for n, t in known.lines.items() if n > last})
        known.lines = rebuilt
        if known.total is not None:
            known.total += delta
        return True

    def _shell(self, command: str) -> None:
        """A shell command that names a followed file, or writes files at all, makes the files
        it may have changed unknown."""
        writes = bool(_WRITING_COMMAND.search(command))
        for key in list(self.files):
            name = key.rsplit("/", 1)[-1]
            if (name and name in command) or (writes and _any_path_word(command, key)):
                del self.files[key]

    # -- views -----------------------------------------------------------------------------

    def _view(self, output: str, call_path: str | None, full_request: bool) -> None:
        if not output:
            return
        head = output[:600]
        path, total = _header(head)
        if (path and head.startswith("[File: ")) or (path and "\n[File: " in head):
            self.open_file = path
        path = path or call_path
        if not path:
            return
        rows = _numbered(output)
        if rows and rows[-1][1] == "" and "a snippet of" in head:
            rows.pop()  # editors number the empty string after the snippet's last newline
        if not rows:
            return
        known = self.files.setdefault(_key(path), FileKnowledge())
        clipped = _CLIPPED in output or bool(output.endswith("…"))
        for number, text in rows:
            before = known.lines.get(number)
            if before is not None:
                if before == text:
                    self.confirmed += 1
                else:
                    self.contradicted += 1
            known.lines[number] = text
        if total is not None:
            known.total = total
            for number in [n for n in known.lines if n > total]:
                del known.lines[number]
        elif full_request and not clipped and rows[0][0] == 1:
            known.total = rows[-1][0]
            for number in [n for n in known.lines if n > known.total]:
                del known.lines[number]


def _header(head: str) -> tuple[str | None, int | None]:
    """(the file a view or edit output names in its first lines, its line count if said)."""
    for line in head.split("\n")[:3]:
        line = line.strip()
        found = _FILE_HEADER.search(line)
        if found:
            return found.group(1).strip(), int(found.group(2))
        found = _EDITED_HEADER.search(line)
        if found:
            return found.group(1).strip(), None
        found = _CAT_HEADER.search(line)
        if found and found.group(1) != "the edited file":
            return found.group(1).strip(), None
    return None, None


def _numbered(output: str) -> list[tuple[int, str]]:
    """The numbered lines of a view, in the style most of its lines use, consecutive."""
    lines = output.split("\n")
    best: list[tuple[int, str]] = []
    for style in _STYLES:
        rows = []
        for line in lines:
            found = style.match(line.rstrip("\r"))
            if found:
                rows.append((int(found.group(1)), found.group(2)))
        if len(rows) > len(best):
            best = rows
    out: list[tuple[int, str]] = []
    for number, text in best:  # numbers only grow; a gap between them stays unknown
        if out and number <= out[-1][0]:
            break
        out.append((number, text))
    return out


def _object(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one (recorded calls are not always regular)."""
    return value if isinstance(value, dict) else {}


def _is_view(args: dict[str, Any]) -> bool:
    return args.get("command") == "view"


def _call_path(args: dict[str, Any]) -> str | None:
    for key in ("path", "file_path", "file_name", "filename", "absolute_path"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _whole_view(tool: str, args: dict[str, Any]) -> bool:
    """True when the call asked for the whole file (no range, offset or limit)."""
    if tool in ("open", "goto", "scroll_up", "scroll_down", "run_ipython"):
        return False
    rng = args.get("view_range")
    if isinstance(rng, list) and rng and rng not in ([1, -1], [0, -1]):
        return False
    return not args.get("offset") and not args.get("limit")


def _any_path_word(command: str, key: str) -> bool:
    """True when the command names the file's directory (a broad command over it)."""
    parent = key.rsplit("/", 1)[0]
    return bool(parent) and parent in command


def _split(text: str) -> list[str]:
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def _key(path: str) -> str:
    """Paths as one file: no `./`, no trailing slash (absolute and relative names of the same
    file are not unified: a recorded run rarely mixes them for one file)."""
    path = path.strip()
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/")
