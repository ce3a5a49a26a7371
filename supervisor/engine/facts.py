"""A tool call's facts, read once: what every station of a call asks of its tool and arguments.

A call passes several stations before it runs: the store protection (which files it names or
edits), the `tool_call` event (the state on disk of the file it reads, the digests of the files
it may write), the edit guidance (the search texts of its edits), the engine's step (category,
path, plan, the file it shows, the scripts it runs) and the hints of a refused edit. Each of them
used to read the arguments again: the edits parsed three times, the shell line split into
commands up to five times, the workspace plan made twice. `facts_of` reads them once, through
the tool vocabulary (`tools`) and the policy, and every station takes the `CallFacts`.

Pure and cheap like the parts it calls; a call whose arguments are odd (not an object, a plan
that cannot be made) gets facts that say nothing rather than an exception, as the stations did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from supervisor.engine import tools, workspace
from supervisor.engine.categories import classify, file_path, is_file_read, native_tool
from supervisor.engine.edits import Edit, edits_of
from supervisor.engine.policy import Policy
from supervisor.engine.shell import Command, parse

_ODD_INPUT = (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError)


@dataclass(frozen=True, slots=True)
class CallFacts:
    """What one call is and does, as far as its tool and arguments say (see the module
    docstring). Stations read it and never change it."""

    tool: str
    """The tool as the engine reads it (an ACP adapter's `mcp__acp__Edit` is `Edit`)."""
    args: dict[str, Any]
    """Its arguments (an empty object when they were not one)."""
    category: str
    """`read`, `mutate`, `run`, `poll` or `other` (`categories.classify`)."""
    path: str | None
    """The file its arguments name (`categories.file_path`); for an edit without a path
    argument, the one file its edits name (`apply_patch`'s `*** Update File:` header), so
    its failures are grouped per file as every other editor's are."""
    is_read: bool
    """A file read the file cache may answer (`categories.is_file_read`)."""
    line: str | None
    """The shell line, for a shell tool (`tools.ToolVocabulary.line_of`); None otherwise."""
    commands: tuple[Command, ...]
    """The shell line's simple commands (`shell.commands`), parsed once."""
    run: tuple[str, ...]
    """The run the shell line makes: its words without the output filters it ends with
    (`shell.run_words`: `pytest 2>&1 | tail -20` runs `pytest`); () for any other tool."""
    edits: tuple[Edit, ...]
    """The changes it asks for (`edits.edits_of`)."""
    plan: list[list[workspace.Effect]]
    """What it would do to files, for a `mutate` or `run` call (`workspace.plan`); [] else."""

    @property
    def read_path(self) -> str | None:
        """The file it reads that the file cache may answer, or None."""
        return self.path if self.is_read else None

    @property
    def edited_paths(self) -> list[str]:
        """The files its edits name, in order, once each."""
        return list(dict.fromkeys(e.path for e in self.edits if e.path))


def facts_of(tool: str, args: Any, policy: Policy,
             shell_tools: frozenset[str] | None = None) -> CallFacts:
    """The facts of the call `tool(args)` under `policy` (`shell_tools`: the policy's, when the
    caller has them as a set already)."""
    tool = native_tool(tool)
    args = args if isinstance(args, dict) else {}
    shells = shell_tools if shell_tools is not None else frozenset(policy["shell_tools"])
    line = tools.vocabulary().line_of(args) if tool in shells else None
    parsed, run = parse(line) if line else ([], [])
    cmds = tuple(parsed)
    category = classify(tool, args, policy, shell=(line, cmds) if line is not None else None)
    edits = tuple(edits_of(tool, args))
    plan: list[list[workspace.Effect]] = []
    if category in ("mutate", "run"):
        try:
            plan = workspace.plan(tool, args, shells, parsed=(line, cmds, edits))
        except _ODD_INPUT:
            plan = []
    path = file_path(tool, args, policy)
    if path is None and line is None and category == "mutate" and edits and all(
            e.path == edits[0].path for e in edits):
        path = edits[0].path  # a patch names its one file in its header, not in an argument
    return CallFacts(tool, args, category, path, is_file_read(tool, args, policy), line, cmds,
                     tuple(run), edits, plan)
