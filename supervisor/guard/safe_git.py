"""Git run safely against a work tree an agent can write (docs/security.md, "The operator's git").

An agent writes its work tree, so everything git would read from there is the agent's: a `.git`
file or directory (and so the config, hooks and `info/` git finds through it), `.gitattributes`
(which names filter and diff drivers), nested repositories (whose config a recursive status
reads). Git runs programs from its config (`core.fsmonitor`, `diff.external`, hooks, textconv,
filters), so git run by the supervisor, as the operator, in such a tree ran the agent's code.

Every git command the supervisor runs against such a tree is built here, so the rules hold in
one place:

- the git dir and the work tree are always explicit (`--git-dir`/`--work-tree`, from the run's
  record or the session's own shadow repository), never found from the tree; so the config git
  reads never comes from it;
- the programs a config or a tree could name are switched off on the command line, which wins
  over every config file: no fsmonitor, no hooks, no external diff, no textconv, no recursion
  into nested repositories (whose own config would then apply);
- no `GIT_*` variable of the environment is inherited (a hook inherits `GIT_DIR`,
  `GIT_EXTERNAL_DIFF`, `GIT_CONFIG_PARAMETERS`, ... from whatever ran the agent); with
  `own_config`, neither the system nor the user's global configuration is read either (the
  checkpoint store, whose repository is entirely ours).

Filters (`filter.<name>.clean`, ...) are named by `.gitattributes` in the tree but must be defined
in a config: with the git dir explicit, only the operator's own config can define one.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

HARDENED: tuple[str, ...] = (
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "diff.external=",
    "-c", "diff.ignoreSubmodules=all",
    "-c", "submodule.recurse=false",
    "-c", "status.submoduleSummary=false",
)
"""Switches that win over every config file (git passes them on to any git it starts)."""

_DIFF_COMMANDS = frozenset({"diff", "diff-tree", "diff-index", "diff-files", "log", "show"})
_NO_DRIVERS = ("--no-ext-diff", "--no-textconv")


def argv(*args: str, git_dir: Path | str | None = None,
         work_tree: Path | str | None = None) -> list[str]:
    """The command line of `git args...`: explicit places, hardened, and for a command that
    diffs, without external diff drivers or textconv."""
    cmd = ["git", *HARDENED]
    if git_dir is not None:
        cmd.append(f"--git-dir={git_dir}")
    if work_tree is not None:
        cmd.append(f"--work-tree={work_tree}")
    if args and args[0] in _DIFF_COMMANDS:
        return [*cmd, args[0], *_NO_DRIVERS, *args[1:]]
    return [*cmd, *args]


def subcommand(cmd: Sequence[str]) -> str:
    """The git command a command line of `argv` runs (`diff`, `add`, ...), for messages."""
    words = iter(cmd[1:])
    for word in words:
        if word == "-c":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return cmd[-1] if cmd else "git"


def environment(*, own_config: bool = False,
                extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for git: no inherited `GIT_*` variable, no prompt, no optional lock
    (a read never rewrites the index); with `own_config`, no system nor global config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["LC_ALL"] = "C"
    if own_config:
        env["GIT_CONFIG_NOSYSTEM"] = "1"
        env["GIT_CONFIG_GLOBAL"] = os.devnull
    if extra:
        env.update(extra)
    return env


def run(args: Sequence[str], *, cwd: Path | str, git_dir: Path | str | None = None,
        work_tree: Path | str | None = None, input: str | None = None,
        timeout: float | None = 120) -> subprocess.CompletedProcess[str]:
    """Run git hardened; its output as text. Without `git_dir`, git finds the repository from
    `cwd`: only for a repository the agent does not write (the operator's own checkout).
    Raises what `subprocess.run` raises (git missing, a timeout)."""
    return subprocess.run(argv(*args, git_dir=git_dir, work_tree=work_tree), cwd=cwd,
                          input=input, capture_output=True, text=True, errors="replace",
                          env=environment(), timeout=timeout,
                          stdin=None if input is not None else subprocess.DEVNULL)
