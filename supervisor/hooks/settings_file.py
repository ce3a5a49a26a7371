"""Merge the supervisor's hook entries into an agent's JSON settings file, and take them out again.

Claude Code (`settings.json`), Codex (`hooks.json`) and Gemini CLI (`settings.json`) keep their
command hooks in one shape: `{"hooks": {EVENT: [{"matcher": "*", "hooks": [{"type": "command",
"command": ..., "timeout": N}]}]}}`. A target describes its file with `Settings` (where it is,
which events, the timeout unit); this module does the rest for every target.

The user's settings are precious: unknown keys, other hooks and their order are kept; a file that
is not valid JSON is refused with a clear error and never overwritten; every write keeps a backup
of the previous content beside the file. Our entries are recognised by their command
(`... supervisor hook TARGET ...`, `supervisor-hook TARGET`, `-m supervisor.hooks.client TARGET`,
and the older `-m supervisor.hookclient TARGET`), so the installer is idempotent and `uninstall`
removes exactly what `install` added. Agents validate their settings, so no extra marker keys are
written into the hook objects.
"""

import contextlib
import difflib
import json
import os
import re
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supervisor.protocol.bounded import JSONTooDeep, loads

HOLD_MARGIN_S = 30
"""Added to the policy's hold time for the `timeout` of the entries that may hold a call for the
operator: the hook answers by itself well before the agent would give up on it (a timed-out
PreToolUse hook lets the call through)."""
OTHER_TIMEOUT_S = 60
"""`timeout` of the entries for every other event; those hooks never wait for an operator."""
BACKUP_INFIX = ".bak-"


@dataclass(frozen=True, slots=True)
class Settings:
    """Where one agent keeps its hooks, and which entries the supervisor puts there."""

    target: str
    """The target's command-line name, written into (and recognised in) the hook command."""
    user_path: Callable[[], Path]
    project_path: Callable[[Path], Path]
    events: tuple[tuple[str, bool], ...]
    """(event name, takes a tool-name matcher), in the order they are written."""
    held: frozenset[str] = frozenset({"PreToolUse"})
    """Events whose hook may hold a call for the operator: their entry gets the long timeout."""
    timeout_unit_s: float = 1.0
    """Seconds per unit of the file's `timeout` (Gemini CLI counts milliseconds: 0.001)."""
    notes: tuple[str, ...] = field(default=())
    """Told to the user after an install (what the agent needs besides the file)."""
    timeout_caps_s: tuple[tuple[str, float], ...] = ()
    """(event, seconds): events whose hook timeout the agent caps (Codex: SessionEnd and
    Interrupt at 3 s); their entries are written with the cap, so the agent has nothing to warn
    about."""
    http_events: frozenset[str] = frozenset()
    """Events the agent can send to an HTTP hook (`--transport http`); none: command only."""
    project_private_path: Callable[[Path], Path] | None = None
    """Where a project install writes entries that hold a secret (the HTTP token): a file of
    the project that is not meant to be committed (Claude Code: `.claude/settings.local.json`).
    None: the agent has none, so an HTTP install for a project is refused (the token would go
    into the shared settings, which teams commit)."""
    flat: bool = False
    """The event's list holds the hook entries themselves, with no matcher groups (GitHub
    Copilot CLI: `{"hooks": {"preToolUse": [{"type": "command", "bash": ...}]}}`)."""
    command_key: str = "command"
    """The key of an entry's command (Copilot CLI: `bash`)."""
    timeout_key: str = "timeout"
    """The key of an entry's timeout (Copilot CLI: `timeoutSec`)."""
    project_keys: tuple[tuple[str, Any], ...] = ()
    """Keys a project's file needs beside `hooks` (Copilot CLI's repository hooks:
    `version: 1`): written by a project install, and a file left with only them after an
    uninstall counts as empty."""
    exec_command: bool = False
    """The agent runs each entry with `sh -c`, and that shell (dash) starts the command as its
    child and waits for it: the entry then begins with `exec`, so the hook client takes the
    shell's place (one process less per hook: Factory Droid). Bash already does that with a
    lone command (Copilot CLI, Qwen Code)."""

    def is_ours(self, command: object) -> bool:
        """True for a hook command that runs our hook for this target."""
        return isinstance(command, str) and bool(_ours(self.target).search(command))

    def is_our_hook(self, hook: object) -> bool:
        """True for a hook entry of ours: our command, or an HTTP hook to our server."""
        if not isinstance(hook, dict):
            return False
        if hook.get("type") == "http":
            from supervisor.hooks.http_transport import is_our_url

            return is_our_url(hook.get("url"), self.target)
        return self.is_ours(hook.get(self.command_key))


def _ours(target: str) -> "re.Pattern[str]":
    return re.compile(
        r"(?:^|[\s/\\'\"])(?:supervisor(?:\.exe)?['\"]?\s+hook|supervisor-hook(?:\.exe)?['\"]?"
        r"|-m\s+supervisor\.(?:hookclient|hooks\.client))\s+" + re.escape(target) + r"(?:\s|$)"
    )


class InstallError(Exception):
    """The settings cannot be changed safely; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Plan:
    """What a write would do: the file, its text before, its text after (None: no file)."""

    path: Path
    old_text: str | None
    new_text: str | None

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text

    def diff(self) -> str:
        """A unified diff of the change, for `--dry-run`."""
        old = (self.old_text or "").splitlines(keepends=True)
        new = (self.new_text or "").splitlines(keepends=True)
        name = str(self.path)
        return "".join(
            difflib.unified_diff(old, new, fromfile=f"{name} (now)", tofile=f"{name} (after)")
        )


def hook_command(target: str, timeout_s: float, root: Path | None = None) -> str:
    """The shell command the agent runs: an absolute path, so it works without PATH.

    The native client (`supervisor.hooks.native`, built with the machine's C compiler) when it
    can be built, relaying to the resident hook server with no interpreter start; else the Python
    client `hook_argv` names, which the native one also falls back to (docs/hooks.md).
    `--timeout` tells the hook its budget, so a hold answers with the fallback before the agent
    gives up on it.
    """
    from supervisor.hooks import native
    from supervisor.hooks.targets import load

    python = hook_argv(target)[:-1]
    fast = native.client(python)
    parts = [*([str(fast)] if fast else python), target, "--timeout", str(int(timeout_s))]
    if root is not None:
        parts += ["--root", str(root)]
    spec = load(target).settings
    first = ["exec"] if os.name == "posix" and getattr(spec, "exec_command", False) else []
    return " ".join([*first, *(shlex.quote(p) for p in parts)])


def hook_argv(target: str, root: Path | None = None) -> list[str]:
    """The hook client's command line without `--timeout` (see `hook_command`); a plugin that
    runs the client itself (`plugin_file`) adds the timeout per step."""
    script = Path(sys.executable).with_name("supervisor-hook")
    if script.is_file() and os.access(script, os.X_OK):
        parts = [str(script), target]
    else:
        parts = [sys.executable, "-m", "supervisor.hooks.client", target]
    return parts + (["--root", str(root)] if root is not None else [])


def plan_install(
    spec: Settings, path: Path, command: Callable[[float], str], hold_timeout_s: int,
    http: Any = None, project: bool = False,
) -> Plan:
    """The settings with our entries merged in (updated in place when already there).
    `command(timeout_s)` is the hook command for an entry with that timeout (it tells the hook
    its budget); `hold_timeout_s` is the timeout of the entries that may hold a call
    (`spec.held`), `OTHER_TIMEOUT_S` that of the others. With
    `http` (an `http_transport.HttpConfig`), the events of `spec.http_events` get HTTP entries
    to the resident server instead of the command."""
    old_text = _read_text(path)
    data = _parse(path, old_text)
    if project:
        for key, value in spec.project_keys:
            data.setdefault(key, value)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(
            f"{path}: 'hooks' is not an object; fix it by hand (file left untouched)"
        )
    wanted = {name: matcher for name, matcher in spec.events}
    for name in list(hooks):
        if name not in wanted:
            _remove_ours(spec, hooks, name)
    for name, takes_matcher in spec.events:
        seconds: float = hold_timeout_s if name in spec.held else OTHER_TIMEOUT_S
        seconds = min(seconds, dict(spec.timeout_caps_s).get(name, seconds))
        timeout = round(seconds / spec.timeout_unit_s)
        entry: dict[str, Any] = {"type": "command", spec.command_key: command(seconds),
                                 spec.timeout_key: timeout}
        if http is not None and name in spec.http_events:
            from supervisor.hooks.http_transport import TOKEN_HEADER

            entry = {"type": "http", "url": http.url(spec.target, seconds), "timeout": timeout,
                     "headers": {TOKEN_HEADER: http.token}}
        groups = hooks.setdefault(name, [])
        if not isinstance(groups, list):
            raise InstallError(
                f"{path}: hooks.{name} is not a list; fix it by hand (file left untouched)"
            )
        if spec.flat:
            if not _update_ours(spec, [{"hooks": groups}], entry):
                groups.append(entry)
        elif not _update_ours(spec, groups, entry):
            group: dict[str, Any] = {"matcher": "*"} if takes_matcher else {}
            group["hooks"] = [entry]
            groups.append(group)
    return Plan(path, old_text, _dump(data))


def plan_uninstall(spec: Settings, path: Path) -> Plan:
    """The settings without our entries; the exact original bytes when a backup matches."""
    old_text = _read_text(path)
    if old_text is None:
        return Plan(path, None, None)
    data = _parse(path, old_text)
    hooks = data.get("hooks")
    removed = False
    if isinstance(hooks, dict):
        for name in list(hooks):
            removed |= _remove_ours(spec, hooks, name)
        if removed and not hooks:
            del data["hooks"]
            if set(data) <= {key for key, _ in spec.project_keys}:
                data = {}  # only what a project install added is left
    if not removed:
        return Plan(path, old_text, old_text)
    return Plan(path, old_text, _original_text(path, data))


def require_in_project(path: Path, project: Path) -> Path:
    """`path` (a project's settings file), when it really lies inside `project`: every link on
    the way followed. `InstallError` otherwise: a project's files are the agent's (or its
    repository's) to write, and `apply` writes through a link (a dotfile manager's, for the
    user's own file), so a project's `.claude/settings.json` linked to the user's own settings
    had a project install add hooks there, and an uninstall take them out of every session."""
    real, top = os.path.realpath(path), os.path.realpath(project)
    if os.path.commonpath([real, top]) != top:
        raise InstallError(f"{path} leads outside the project (to {real}): refusing to write "
                           "through it; remove the link, or install for the user (--user)")
    return path


def apply(plan: Plan) -> Path | None:
    """Write the planned content atomically; return the backup of the previous content.

    A settings file that is a symbolic link (a dotfile manager's) is written through the link:
    the file it points to gets the new content, the link stays a link. Backups lie beside the
    link, where `_original_text` looks for them."""
    if not plan.changed:
        return None
    backup = None
    mode = 0o600
    if plan.old_text is not None:
        mode = plan.path.stat().st_mode & 0o777
        backup = _backup_path(plan.path)
        _write_atomic(backup, plan.path.read_bytes(), 0o600)  # it may hold a token
    if _holds_token(plan.new_text):
        mode = 0o600  # another user who reads the token can call the HTTP hooks
    linked = plan.path.is_symlink()
    if plan.new_text is None and not linked:
        plan.path.unlink()
        return backup
    target = Path(os.path.realpath(plan.path)) if linked else plan.path
    text = plan.new_text if plan.new_text is not None else _dump({})  # a link is never removed
    target.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(target, text.encode("utf-8"), mode)
    return backup


def _holds_token(text: str | None) -> bool:
    """Whether settings text holds an HTTP hook entry, whose token is a secret: such a file is
    written 0600, whatever its mode was (`~/.claude/settings.json` is often 0644)."""
    from supervisor.hooks.http_transport import TOKEN_HEADER

    return text is not None and f'"{TOKEN_HEADER}"' in text


def _read_text(path: Path) -> str | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstallError(f"{path}: not UTF-8 text ({exc}); file left untouched") from exc


def _parse(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = loads(text.removeprefix("\ufeff"), constants=True)
    except JSONTooDeep as exc:
        raise InstallError(f"{path}: {exc}; file left untouched") from exc
    except json.JSONDecodeError as exc:
        raise InstallError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "comments are not allowed in settings.json. Fix the file and run again "
            "(it was left untouched)"
        ) from exc
    if not isinstance(data, dict):
        raise InstallError(f"{path}: the top level is not a JSON object; file left untouched")
    return data


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _update_ours(spec: Settings, groups: list[Any], entry: dict[str, Any]) -> bool:
    """Refresh our entry where it already is; drop duplicates of it. False if none was there."""
    found = False
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list):
            continue
        for index, hook in enumerate(list(inner)):
            if not spec.is_our_hook(hook):
                continue
            if found:
                inner.remove(hook)
            else:  # the user's own keys stay, unless the transport changed
                same = hook.get("type", "command") == entry["type"]
                inner[index] = {**hook, **entry} if same else entry
                found = True
    groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
    return found


def _remove_ours(spec: Settings, hooks: dict[str, Any], name: str) -> bool:
    """Remove our entries from one event; drop groups and the event emptied by that."""
    groups = hooks.get(name)
    if not isinstance(groups, list):
        return False
    if spec.flat:
        kept = [h for h in groups if not spec.is_our_hook(h)]
        if len(kept) == len(groups):
            return False
        if kept:
            hooks[name] = kept
        else:
            del hooks[name]
        return True
    removed = False
    kept_groups = []
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(inner, list):
            kept = [h for h in inner if not spec.is_our_hook(h)]
            if len(kept) != len(inner):
                removed = True
                if not kept:
                    continue
                group = {**group, "hooks": kept}
        kept_groups.append(group)
    if removed:
        if kept_groups:
            hooks[name] = kept_groups
        else:
            del hooks[name]
    return removed


def _original_text(path: Path, data: dict[str, Any]) -> str | None:
    """The newest backup whose content equals `data`, byte for byte as it was; else a dump.

    This is what makes install-then-uninstall give back the user's file exactly, formatting
    included. No file at all when the result is empty and no backup exists (we created it).
    """
    backups = sorted(path.parent.glob(path.name + BACKUP_INFIX + "*"), reverse=True)
    for backup in backups:
        try:
            text = backup.read_bytes().decode("utf-8")
            if _parse(backup, text) == data:
                return text
        except (OSError, UnicodeDecodeError, InstallError):
            continue
    if not data and not backups:
        return None
    return _dump(data)


def _backup_path(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.name}{BACKUP_INFIX}{stamp}")
    counter = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}{BACKUP_INFIX}{stamp}-{counter}")
        counter += 1
    return candidate


def _write_atomic(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
