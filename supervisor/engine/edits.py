"""What an edit call does to which file: the text it looks for, what it writes instead.

Agents edit files through many tool shapes; the guard needs the search text of a failed edit
(to show where it really is) and the analysis of recorded runs needs every edit's effect (to
follow a file's content virtually). This module reads them all from a call's tool name and
arguments, as the agent recorded them:

- Claude Code `Edit`, Gemini CLI `replace`: `file_path`, `old_string`, `new_string`,
  `replace_all`; Claude Code `MultiEdit`: `file_path`, `edits[]` of those;
- Claude Code `Write`, Gemini CLI `write_file`: `file_path`, `content`;
- OpenCode and Kilo `edit` and `write`: those of `Edit` and `Write` (the hook target records
  their camelCase arguments under these names);
- Cline `editor`: `path`, `old_text`, `new_text` (no `old_text`: the file is created with
  `new_text`; `insert_line`: `new_text` goes before that line);
- `str_replace_editor` (SWE-agent, OpenHands `edit`, Anthropic's text editor tools): `path`
  and `command` `str_replace` (`old_str`, `new_str`), `insert` (`insert_line`, `new_str`) or
  `create` (`file_text`);
- SWE-agent `edit`: `start_line`, `end_line`, `replacement_text`, `path` (0.x); `search`,
  `replace`, `replace-all` (1.x, on the open file: `path` is "");
- OpenHands `run_ipython`: `edit_file_by_replace(file_name, to_replace, new_content)` and
  `create_file(filename)` calls with literal arguments in `code`;
- Codex `apply_patch`: `*** Update File:` hunks (context and `-` lines are the search text,
  context and `+` lines the new text), `*** Add File:`; as a tool (the patch in `input` or
  `patch`; OpenCode's in `patchText`), or as the shell command Codex runs it as
  (`apply_patch <<'EOF' ... EOF`).

Pure and cheap: a dict in, a list of `Edit` out; unknown tools give none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from supervisor.engine import tools

EditKind = Literal["replace", "insert", "lines", "write"]

MAX_CODE_CHARS = 200_000
"""An IPython cell longer than this is not parsed for edits."""


@dataclass(frozen=True, slots=True)
class Edit:
    """One change a call asks for.

    `replace`: `search` is replaced by `text` (every occurrence when `replace_all`);
    `insert`: `text` goes after line `line` (0: at the top); `lines`: lines `line` to `end`
    are replaced by `text`; `write`: `text` is the whole file. `patch`: a hunk of Codex's
    `apply_patch`, which finds its lines ignoring the whitespace around them and reports no
    result to hooks when run as a shell command (so the guard checks it before it runs)."""

    kind: EditKind
    path: str
    text: str
    search: str | None = None
    line: int | None = None
    replace_all: bool = False
    end: int | None = None
    patch: bool = False


_EDITOR_TOOLS = frozenset({"str_replace_editor", "edit", "str_replace_based_edit_tool",
                           "text_editor", "edit_file"})
_REPLACE_TOOLS = frozenset({"Edit", "replace", "edit_file_by_replace"})
_WRITE_TOOLS = frozenset({"Write", "write_file", "create_file"})
_PATCH_TOOLS = frozenset({"apply_patch", "applypatch"})
_HEREDOC = re.compile(r"^\s*(?:cd\s+\S+\s*&&\s*)?apply_patch\s*<<-?\s*(['\"]?)(\w+)\1[^\n]*\n")


def edits_of(tool: str, args: Any) -> list[Edit]:
    """Every change the call `tool(args)` asks for, in order; [] for anything else."""
    if not isinstance(args, dict):
        return []
    try:
        if tool in _REPLACE_TOOLS or (tool == "edit" and "old_string" in args):
            return _replace(args)
        if tool == "MultiEdit":
            return _multi(args)
        if tool in _WRITE_TOOLS or (tool == "write" and "content" in args):
            return _write(args)
        if tool in _EDITOR_TOOLS:
            return _editor(args)
        if tool == "editor":
            return _cline_editor(args)
        if tool in _PATCH_TOOLS:
            return _patch(_text(args.get("input")) or _text(args.get("patch"))
                          or _text(args.get("patchText")) or "")
        if tool == "run_ipython":
            return _ipython(_text(args.get("code")) or "")
        if tool in tools.vocabulary().shell:
            return _patch(_shell_patch(_text(tools.vocabulary().command_of(args)) or ""))
    except (TypeError, ValueError, RecursionError):
        return []
    return []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _first_text(args: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first of `keys` whose value is text."""
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return None


def _int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _path(args: dict[str, Any]) -> str | None:
    for key in tools.vocabulary().path_keys:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _replace(args: dict[str, Any]) -> list[Edit]:
    """A search-and-replace edit: Claude Code's `old_string`/`new_string`, Factory Droid's and
    Copilot CLI's `old_str`/`new_str`, and older `to_replace`/`new_content`."""
    path = _path(args)
    names = tools.vocabulary()
    search = _first_text(args, names.old_keys)
    new = _first_text(args, names.new_keys)
    if not path or search is None:
        return []
    return [Edit("replace", path, new or "", search, replace_all=args.get("replace_all") is True)]


def _cline_editor(args: dict[str, Any]) -> list[Edit]:
    path, new = _path(args), _text(args.get("new_text"))
    if not path or new is None:
        return []
    line = _int(args.get("insert_line"))
    if line is not None:
        return [Edit("insert", path, new, line=line - 1)]
    search = _text(args.get("old_text"))
    return [Edit("write", path, new)] if search is None else [Edit("replace", path, new, search)]


def _multi(args: dict[str, Any]) -> list[Edit]:
    path = _path(args)
    items = args.get("edits")
    if not path or not isinstance(items, list):
        return []
    out = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("old_string"), str):
            out.append(Edit("replace", path, _text(item.get("new_string")) or "",
                            item["old_string"], replace_all=item.get("replace_all") is True))
    return out


def _write(args: dict[str, Any]) -> list[Edit]:
    path = _path(args)
    content = _first_text(args, tools.vocabulary().content_keys)
    return [Edit("write", path, content)] if path and content is not None else []


def _editor(args: dict[str, Any]) -> list[Edit]:
    path = _path(args) or ""
    command = args.get("command")
    if command is None and path and _first_text(args, ("old_string", "old_str")) is not None:
        return _replace(args)  # Qwen Code's and Copilot CLI's `edit`: a plain replacement
    if not path and not isinstance(args.get("search"), str):
        return []
    if command is None and isinstance(args.get("search"), str):
        # SWE-agent 1.x windowed `edit`: the open file (no path argument; see SeenFiles)
        return [Edit("replace", path, _text(args.get("replace")) or "", args["search"],
                     replace_all=args.get("replace-all") is True)]
    if command is None and "replacement_text" in args:
        start, end = _int(args.get("start_line")), _int(args.get("end_line"))
        text = _text(args.get("replacement_text"))
        if start is not None and end is not None and text is not None:
            return [Edit("lines", path, text, line=start, end=end)]
        return []
    if command == "str_replace":
        search = _text(args.get("old_str"))
        return [Edit("replace", path, _text(args.get("new_str")) or "", search)] \
            if search is not None else []
    if command == "insert":
        line = _int(args.get("insert_line"))
        text = _text(args.get("new_str"))
        if line is not None and text is not None:
            return [Edit("insert", path, text, line=line)]
        return []
    if command == "create":
        text = _text(args.get("file_text"))
        return [Edit("write", path, text)] if text is not None else []
    return []


def _shell_patch(command: str) -> str:
    """The patch of a shell command that runs `apply_patch` (Codex applies its patches so:
    `apply_patch <<'EOF' ... EOF`, or the patch as one quoted argument); "" for any other."""
    if "apply_patch" not in command[:200]:
        return ""
    heredoc = _HEREDOC.match(command)
    if heredoc:
        body = command[heredoc.end():]
        end = re.search(rf"^{re.escape(heredoc.group(2))}\s*$", body, re.M)
        return body[: end.start()] if end else body
    import shlex  # lazy: a quoted patch argument is rare

    try:
        words = shlex.split(command)
    except ValueError:
        return ""
    if len(words) == 2 and words[0] == "apply_patch":
        return words[1]
    return ""


_PATCH_FILE = re.compile(r"^\*\*\* (Update|Add) File: (.+?)\s*$")


def _patch(patch: str) -> list[Edit]:
    """Codex's patch format: each hunk of an updated file replaces its context and `-` lines
    with its context and `+` lines; an added file is written whole."""
    out: list[Edit] = []
    path: str | None = None
    mode = ""
    old: list[str] = []
    new: list[str] = []

    def flush() -> None:
        if path and mode == "Update" and old:
            out.append(Edit("replace", path, "\n".join(new), "\n".join(old), patch=True))
        elif path and mode == "Add":
            out.append(Edit("write", path, "\n".join(new) + ("\n" if new else "")))
        old.clear()
        new.clear()

    for line in patch.split("\n"):
        head = _PATCH_FILE.match(line)
        if head or line.startswith("*** "):
            flush()
            mode, path = (head.group(1), head.group(2)) if head else ("", None)
            continue
        if line.startswith("@@"):
            if mode == "Update":
                flush()
            continue
        if mode == "Add" and line.startswith("+"):
            new.append(line[1:])
        elif mode == "Update" and line[:1] in (" ", "-", "+"):
            if line[0] != "+":
                old.append(line[1:])
            if line[0] != "-":
                new.append(line[1:])
    flush()
    return out


def _ipython(code: str) -> list[Edit]:
    """OpenHands' IPython helpers: `edit_file_by_replace(...)` and `create_file(...)` calls
    with literal arguments (anything computed at run time is not knowable here)."""
    if "edit_file_by_replace" not in code and "create_file" not in code:
        return []
    if len(code) > MAX_CODE_CHARS:
        return []
    import ast  # lazy: only IPython cells need it

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    out: list[Edit] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        name = node.func.id
        if name == "edit_file_by_replace":
            got = _literal_args(node, ("file_name", "to_replace", "new_content"))
            if got is not None:
                out += _replace(got)
        elif name == "create_file":
            got = _literal_args(node, ("filename", "content"))
            if got is not None:
                out += _write({"filename": got.get("filename"),
                               "content": got.get("content", "")})
    return out


def _literal_args(node: Any, names: tuple[str, ...]) -> dict[str, Any] | None:
    """The literal arguments of an `ast.Call`, by name (None if one is not a literal)."""
    import ast

    out: dict[str, Any] = {}
    try:
        for name, arg in zip(names, node.args, strict=False):
            out[name] = ast.literal_eval(arg)
        for kw in node.keywords:
            if kw.arg:
                out[kw.arg] = ast.literal_eval(kw.value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return out


EditFailure = Literal["not_found", "ambiguous"]

_NOT_FOUND = re.compile(
    r"did not appear verbatim|(?:string|text) to replace (?:was )?not found|"
    r"no (?:exact )?match found|"
    r"search string not found|could not find .{0,80}to replace|\b0 occurrences found|"
    r"could not find an? (?:exact )?match for .{0,20}old_str|"
    r"failed to (?:exactly )?match|SearchReplaceNoExactMatch|failed to find expected lines|"
    r"old_str(?:ing)?.{0,40}(?:was )?not found|could not find oldString in the file|"
    r"no replacement performed: text not found|"
    r"could not find (?:the exact text|edits\[\d+\]) in ",
    re.I | re.S)
_AMBIGUOUS = re.compile(
    r"multiple occurrences of old_str|found \d+ matches of the string to replace|"
    r"old_str(?:ing)?.{0,80}is not unique|expected 1 occurrences? but found \d+|"
    r"found multiple matches for oldString|"
    r"no replacement performed: multiple occurrences of text|"
    r"found \d+ occurrences of (?:the text|edits\[\d+\]) in ", re.I | re.S)


def edit_failure(output: str | None, error: str | None = None) -> EditFailure | None:
    """Why a replacement failed, from the tool's own words: its search text is not in the file
    (`not_found`) or occurs more than once (`ambiguous`); None for any other outcome. Only the
    start of the output is read: tools say it first."""
    text = f"{error or ''}\n{(output or '')[:2000]}"
    if _AMBIGUOUS.search(text):
        return "ambiguous"
    if _NOT_FOUND.search(text):
        return "not_found"
    return None
