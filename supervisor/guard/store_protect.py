"""Refuse the agent's tool calls that would change the supervisor's own store.

The agent runs as the operator's user, so its tools can write the store root like any of the
user's programs: `echo '{"type": "decision", "action": "reset", ...}' >> <root>/sessions/<sid>/
control.jsonl` after each refusal kept twelve identical failing calls from ever escalating, and
`supervisor reset` run from its shell does the same. `refusal` names what such a call does;
`Guard.pre_call` refuses it before the engine sees it (recorded as a refused `tool_call` and a
`block` verdict with the reason, so the operator sees it too).

Refused, with the reason:
- a call that writes, deletes or moves files (not a read) and names a path inside the store
  root: a file tool's path (resolved, links followed), or a shell command or code that names the
  root in any of its usual spellings (absolute, real path, `~/...`, `$HOME/...`) or holds a word
  that, resolved from the session's directory with links followed, leads inside it (a relative
  link the agent made earlier);
- any call naming the root's operator key (`store.provenance`), reads included;
- a shell command that runs the supervisor's operator commands (`supervisor answer`, `reset`,
  `abort`, `resume`, `rollback`, `pause`, `guide`, `install`, `uninstall`).

This is a tripwire, not a sandbox: a command can build a path at run time. The seal on
operator decisions (`store.provenance`) is what keeps a forged decision from being applied;
docs/security.md says what is and is not promised.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

from supervisor.engine.facts import CallFacts
from supervisor.engine.policy import Policy
from supervisor.store.provenance import KEY_FILE

_OPERATOR = re.compile(
    r"\bsupervisor\b[^;&|\n]*?\s(answer|reset|abort|resume|rollback|pause|guide|install|"
    r"uninstall)(?=\s|$|[;&|)])")
_TEXT_KEYS = ("command", "code", "cmd", "script", "input", "patch")
_WORD_SPLIT = re.compile(r"[\s'\"`<>|&;()=,]+")
_MAX_WORDS = 512
"""Words of a command resolved (links followed) from the session's directory, at most."""
_MAX_TEXT = 256 * 1024


def refusal(facts: CallFacts, root: Path, cwd: str | None, policy: Policy) -> str | None:
    """Why the call of `facts` must not run (it changes the supervisor's store), or None."""
    tool = facts.tool
    texts = _texts(facts.args)
    forms = _spellings(root)
    key_forms = [f"{form}/{KEY_FILE}" for form in forms]
    paths = _paths(facts)
    if any(key in text for text in texts for key in key_forms) or any(
            _name(path) == KEY_FILE and _inside(path, cwd, root) for path in paths):
        return (f"this call names the supervisor's operator key ({root}/{KEY_FILE}); the "
                "agent may not read or change it")
    if tool in policy["shell_tools"] or tool in policy["code_tools"]:
        for text in texts:
            found = _OPERATOR.search(text)
            if found:
                return (f"`supervisor {found.group(1)}` is an operator command; the agent may "
                        "not run it (ask the operator instead)")
    if facts.category == "read":
        return None
    for path in paths:
        if _inside(path, cwd, root):
            return (f"this call writes {path}, inside the supervisor's store ({root}); the "
                    "agent may not change the supervisor's files")
    if tool in policy["shell_tools"] or tool in policy["code_tools"]:
        for text in texts:
            for form in forms:
                if form in text:
                    return (f"this command names the supervisor's store ({root}) and may "
                            "change it; the agent may not change the supervisor's files")
        for text in texts:  # a name that leads there: a link made earlier (`ln -s ../store s`)
            for word in _WORD_SPLIT.split(text)[:_MAX_WORDS]:
                if word and not word.startswith("-") and _inside(word, cwd, root):
                    return (f"this command names {word}, which leads into the supervisor's "
                            f"store ({root}); the agent may not change the supervisor's files")
    return None


def _texts(args: dict[str, Any]) -> list[str]:
    out = []
    for key in _TEXT_KEYS:
        value = args.get(key) if isinstance(args, dict) else None
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        if isinstance(value, str):
            out.append(value[:_MAX_TEXT])
    return out


def _paths(facts: CallFacts) -> list[str]:
    """The files the call's edits and its path argument name."""
    paths = [e.path for e in facts.edits if e.path]
    if facts.path:
        paths.append(facts.path)
    return paths


def _name(path: str) -> str:
    """`Path(path).name` without making a `Path` (this runs for every path of every call)."""
    parts = [part for part in path.split("/") if part and part != "."]
    return parts[-1] if parts else ""


@functools.lru_cache(maxsize=16)
def _spellings(root: Path) -> tuple[str, ...]:
    """The ways a command may name the root (computed once per root: this runs on every tool
    call, and the root's real path and the user's home do not change under a session)."""
    forms = {str(root).rstrip("/"), os.path.realpath(root).rstrip("/")}
    home = os.path.expanduser("~").rstrip("/")
    for form in list(forms):
        if home and form.startswith(home + "/"):
            rest = form[len(home):]
            forms.update({"~" + rest, "$HOME" + rest, "${HOME}" + rest})
    return tuple(sorted(f for f in forms if f and f != "/"))


@functools.lru_cache(maxsize=16)
def _real(root: Path) -> str:
    """The root's real path, ending in one `/` (`/` itself for the file system's root)."""
    return os.path.realpath(root).rstrip("/") + "/"


def _inside(path: str, cwd: str | None, root: Path) -> bool:
    """Whether `path` (from `cwd`), every link followed, is the root or inside it. On strings,
    not `pathlib`: this runs for every path and every word of every shell command, and the
    `realpath` (one `lstat` a component) is the part that has to be paid."""
    try:
        where = os.path.expanduser(path)
        if not os.path.isabs(where):
            where = os.path.join(cwd or os.getcwd(), where)
        real = os.path.realpath(where)
        top = _real(root)
    except (OSError, ValueError):
        return False
    return (real + "/").startswith(top)
