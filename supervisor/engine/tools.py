"""The agents' tool vocabulary: which tool is a shell, an editor, an edit, a write, a read, a
poll or a code cell, and which argument holds the command, the path or the text.

One home for what every station asks of a tool name (the policy's defaults, `categories`,
`workspace`, `edits`, the analysis' `seen_files`), so a name cannot be a shell in one station and
an unknown tool in the next (until this module, `exec_command` was a shell to `edits` and a `run`
to `categories`).

The engine's own vocabulary (`ENGINE`) holds the names shared across agents and frameworks.
Each hook target and each importer *contributes* its agent's names with `contribute` when its
module is imported; the engine never imports them (layers: docs/architecture.md). A
contribution is checked when it is made, as pluggy checks a hook implementation when it is
registered: a malformed name, or a name another contributor gave another role or other
argument keys, raises `VocabularyError` at import time naming both contributors, rather than
one station quietly reading the tool differently. A contribution that repeats what is known
is fine (a target and an importer of the same agent both name its tools).

The vocabulary is read when it is used (`vocabulary()`, and `Policy` builds its defaults from
it), never copied at import time, so the order in which contributors and the engine are
imported does not matter.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

Role = Literal["shell", "editor", "edit", "write", "read", "poll", "code"]
ROLES: tuple[Role, ...] = ("shell", "editor", "edit", "write", "read", "poll", "code")
"""What a tool is: `shell` runs its command argument as a shell line; `editor` takes a
`command` sub-action (`view`, `str_replace`, `create`, ...); `edit` changes part of a file
(search and replace, a patch); `write` writes a whole file; `read` shows a file's content
(`tool:sub` for an editor's read-only sub-action); `poll` waits on or looks at something
running; `code` runs its `code` argument in an interpreter."""
KEYS = ("command_keys", "path_keys", "old_keys", "new_keys", "content_keys", "noise_keys",
        "input_keys")
"""The argument keys: which holds the shell command, the file's path, the text searched for,
its replacement, a whole file's content, which say nothing about what a call does (left
out of its fingerprint), and which hold text a poll tool types into the process it polls
(Codex's `write_stdin {"chars": ...}`: empty, it only waits for output; with text, it acts)."""


class VocabularyError(ValueError):
    """A contribution that is malformed or collides with one made before."""


@dataclass(frozen=True, slots=True)
class ToolVocabulary:
    """Tool names by role and argument keys by meaning, each in order of preference."""

    shell: tuple[str, ...] = ()
    editor: tuple[str, ...] = ()
    edit: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    read: tuple[str, ...] = ()
    poll: tuple[str, ...] = ()
    code: tuple[str, ...] = ()
    command_keys: tuple[str, ...] = ()
    path_keys: tuple[str, ...] = ()
    old_keys: tuple[str, ...] = ()
    new_keys: tuple[str, ...] = ()
    content_keys: tuple[str, ...] = ()
    noise_keys: tuple[str, ...] = ()
    input_keys: tuple[str, ...] = ()

    def role(self, tool: str) -> Role | None:
        """The role of `tool`, None for a tool the vocabulary does not know."""
        for role in ROLES:
            if tool in getattr(self, role):
                return role
        return None

    def command_of(self, args: Any) -> str | list[Any] | None:
        """The shell command a shell tool's arguments hold (a line, or Codex's argv list), by
        the first command key that holds one."""
        if isinstance(args, dict):
            for key in self.command_keys:
                value = args.get(key)
                if isinstance(value, str | list):
                    return value
        return None

    def types_input(self, args: Any) -> bool:
        """Whether a call's arguments type text into a running process (an input key holds a
        non-empty string): a poll tool called so acts, it does not only wait."""
        return isinstance(args, dict) and any(
            isinstance(args.get(key), str) and args[key] != "" for key in self.input_keys)

    def line_of(self, args: Any) -> str | None:
        """The shell command as one line: an argv list's script when it is `bash -lc
        <script>` (Codex), else its words joined."""
        command = self.command_of(args)
        if isinstance(command, list):
            words = [str(c) for c in command]
            if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and (
                    words[1] in ("-c", "-lc")):
                return words[2]
            return " ".join(words)
        return command

    def merged(self, other: ToolVocabulary) -> ToolVocabulary:
        """This vocabulary with `other`'s names and keys appended (first seen keeps its place)."""
        return ToolVocabulary(**{
            f.name: tuple(dict.fromkeys(getattr(self, f.name) + getattr(other, f.name)))
            for f in fields(self)})


ENGINE = ToolVocabulary(
    shell=("Bash", "bash", "execute_bash", "run", "shell", "shell_command",
           "run_shell_command", "exec_command", "local_shell"),
    editor=("str_replace_editor", "str_replace_based_edit_tool", "edit_file"),
    edit=("Edit", "MultiEdit", "edit", "replace", "apply_patch", "applypatch",
          "edit_file_by_replace", "text_editor", "NotebookEdit"),
    write=("Write", "write", "write_file", "create_file", "create"),
    read=("Read", "read", "read_file", "str_replace_editor:view",
          "str_replace_based_edit_tool:view"),
    poll=("BashOutput", "KillShell", "KillBash", "TaskOutput", "AgentOutputTool", "wait",
          "sleep", "read_background_output", "list_background_processes"),
    code=("run_ipython", "execute_ipython_cell", "ipython", "python"),
    command_keys=("command", "cmd"),
    path_keys=("file_path", "path", "absolute_path", "notebook_path", "filename", "file",
               "file_name"),
    old_keys=("old_string", "old_str", "to_replace"),
    new_keys=("new_string", "new_str", "new_content"),
    content_keys=("content", "file_text"),
    noise_keys=("description", "timeout", "thought", "security_risk", "is_input"),
)
"""The names shared across agents and frameworks (Claude Code's, OpenHands' and SWE-agent's,
the generic `bash`/`read`/`write`), and the names of agents that came before contributions."""

_CONTRIBUTIONS: dict[str, ToolVocabulary] = {"engine": ENGINE}
_merged: ToolVocabulary | None = ENGINE


def contribute(contributor: str, names: ToolVocabulary) -> None:
    """Add an agent's tool names (`contributor`: its target's or importer's name). Raises
    `VocabularyError` for a malformed name or a collision with an earlier contribution, naming
    both; contributing the same thing twice is a no-op."""
    global _merged
    _verify(contributor, names)
    known = _CONTRIBUTIONS.get(contributor)
    _CONTRIBUTIONS[contributor] = names if known is None else known.merged(names)
    _merged = None


def vocabulary() -> ToolVocabulary:
    """Every contribution made so far, merged (the engine's own first)."""
    global _merged
    if _merged is None:
        merged = ToolVocabulary()
        for names in _CONTRIBUTIONS.values():
            merged = merged.merged(names)
        _merged = merged
    return _merged


def contributors() -> tuple[str, ...]:
    """Who has contributed, in order (`engine` first)."""
    return tuple(_CONTRIBUTIONS)


def _verify(contributor: str, names: ToolVocabulary) -> None:
    if not isinstance(contributor, str) or not contributor.strip():
        raise VocabularyError(f"a tool vocabulary contributor needs a name, not {contributor!r}")
    for f in fields(names):
        values = getattr(names, f.name)
        if not isinstance(values, tuple):
            raise VocabularyError(f"{contributor}: {f.name} must be a tuple of names, "
                                  f"not {type(values).__name__}")
        for value in values:
            if not isinstance(value, str) or not value or value != value.strip() or any(
                    c.isspace() or not c.isprintable() for c in value):
                raise VocabularyError(f"{contributor}: {f.name} has a malformed name {value!r}")
    mine: dict[str, Role] = {}
    for role in ROLES:
        for tool in getattr(names, role):
            if mine.setdefault(tool, role) != role:
                raise VocabularyError(f"{contributor} names {tool!r} both {mine[tool]} and {role}")
    for other, theirs in _CONTRIBUTIONS.items():
        if other == contributor:
            continue
        for tool, role in mine.items():
            their_role = theirs.role(tool)
            if their_role is not None and their_role != role:
                raise VocabularyError(
                    f"{contributor} names {tool!r} a {role} tool; {other} named it a "
                    f"{their_role} tool")
        _verify_keys(contributor, names, other, theirs)


def _verify_keys(contributor: str, names: ToolVocabulary, other: str,
                 theirs: ToolVocabulary) -> None:
    """An argument key means one thing: the path key of one agent is no other's command key."""
    meaning = {key: kind for kind in KEYS for key in getattr(theirs, kind)}
    for kind in KEYS:
        for key in getattr(names, kind):
            if meaning.get(key, kind) != kind:
                raise VocabularyError(
                    f"{contributor} reads argument {key!r} as {kind}; {other} reads it as "
                    f"{meaning[key]}")
