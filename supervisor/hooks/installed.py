"""Our installed hook entries, and whether their command still resolves (stdlib only).

`supervisor install` writes an absolute path into each entry; remove or move that environment
and the agent runs a hook that is not there. Two readers ask: `supervisor doctor` (every
settings file it knows, then it also runs the interpreter) and the silence check
(`supervisor.store.silence`), which, for a session already seen working unsupervised, names the
entry of the agent's project settings whose command no longer resolves. That check stats files
only (no process is started) and reads only the project's settings file, inside the session's
work tree: the agent's user settings live in the agent's own home, which the process that
shows the session (a dashboard, possibly another user or another machine) cannot tell apart
from its own.
"""

import json
import os
import shlex
from pathlib import Path
from typing import Any

SETTINGS_MAX_BYTES = 1 << 20
"""A project settings file larger than this is not read by the silence check."""


def our_entries(spec: Any, path: Path) -> list[tuple[str, dict[str, Any]]] | None:
    """(event, hook entry) of each of our entries in a settings file; None: no such file.
    `OSError` or `ValueError` when it cannot be read or is not JSON."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    hooks = data.get("hooks") if isinstance(data, dict) else None
    found = []
    for event, groups in (hooks.items() if isinstance(hooks, dict) else ()):
        for group in groups if isinstance(groups, list) else ():
            for hook in (group.get("hooks") or []) if isinstance(group, dict) else ():
                if spec.is_our_hook(hook):
                    found.append((str(event), hook))
    return found


def unresolved(command: object) -> tuple[str | None, str]:
    """(why the hook command does not resolve, None when it does; its program). Stats only."""
    try:
        argv = shlex.split(str(command))
    except ValueError as exc:
        return f"the command cannot be parsed ({exc})", ""
    if argv[:1] == ["exec"]:  # (`Settings.exec_command`: the shell's place taken)
        argv = argv[1:]
    program = argv[0] if argv else ""
    if not os.path.isabs(program):
        return None, program  # not one of ours: written by hand, found on PATH
    if not (os.path.isfile(program) and os.access(program, os.X_OK)):
        return (f"{program} does not exist any more (was its environment removed or "
                "moved?)"), program
    if interpreter(program) is None:
        return f"{program} names an interpreter that does not exist", program
    from supervisor.hooks.native import fallback_of

    fallback = fallback_of(program)  # the native client: its Python client must be there too
    if fallback is not None and not (os.path.isfile(fallback) and os.access(fallback, os.X_OK)):
        return (f"{program} falls back to {fallback}, which does not exist any more (was its "
                "environment removed or moved?)"), program
    return None, program


def interpreter(program: str) -> str | None:
    """The Python that runs `program`: itself, or the one its `#!` line names."""
    if os.path.basename(program).startswith("python"):
        return program
    try:
        with open(program, "rb") as f:
            first = f.readline(400).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return program
    words = first[2:].split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env" and len(words) > 1:
        return words[1]
    return words[0] if os.path.isfile(words[0]) else None


def broken_project_hook(agent: str | None, cwd: str | None) -> str | None:
    """Which of our hook commands in the project settings of `agent` (a hook target's name,
    as its `session_start` records it) at `cwd` no longer resolves, or None (none, no such
    file, not a hook agent, or the file cannot be read: nothing to go by)."""
    from supervisor.hooks.settings_file import Settings
    from supervisor.hooks.targets import TARGETS, load

    name = (agent or "").split(":", 1)[0]  # "claude-code:Explore": a subagent's session
    if name not in TARGETS or not cwd or not os.path.isabs(cwd):
        return None
    spec = load(name).settings
    if not isinstance(spec, Settings):
        return None  # a plugin folder, not a settings file
    path = spec.project_path(Path(cwd))
    try:
        if path.stat().st_size > SETTINGS_MAX_BYTES:
            return None
        entries = our_entries(spec, path)
    except (OSError, ValueError):
        return None
    for event, hook in entries or ():
        if hook.get("type") == "http":
            continue  # its server being down is not a command that stopped resolving
        problem, _ = unresolved(hook.get(spec.command_key))
        if problem is not None:
            return f"the command of its {event} hook no longer resolves: {problem}; in {path}"
    return None
