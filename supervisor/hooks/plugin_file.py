"""Install the supervisor's plugin file into an agent that has plugins instead of command hooks
(OpenCode, Kilo, Cline: docs/opencode.md, docs/cline.md).

Such an agent loads every JavaScript file of its plugin folder. The supervisor's plugin is one
file there, wholly ours, made at install from `plugin_client.js` (sending a step to the resident
hook server over its socket, or running the hook client when it cannot: bounded, failing open,
one step of a session at a time) and the agent's own part shipped in
its target's package; the hook client's command line and the timeouts are written into it. It
is recognised by its first line (`MARKER`), so installing again refreshes it, `uninstall`
removes exactly it, and a file of the same name that is not ours is never overwritten nor
removed.
"""

import json
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supervisor.hooks.settings_file import (
    OTHER_TIMEOUT_S,
    InstallError,
    Plan,
    _write_atomic,
    hook_argv,
)

MARKER = "// Agent Supervisor:"
"""The first line of every plugin file the supervisor writes starts with this."""
_HOOK_LINE = "const HOOK = "
"""How `plugin_client.js` starts the line holding the hook client's command line."""
CLIENT = Path(__file__).with_name("plugin_client.js")
"""The part every plugin shares; it starts with `MARKER`."""


@dataclass(frozen=True, slots=True)
class PluginFile:
    """Where one agent loads plugins from, and the supervisor's plugin for it."""

    target: str
    user_path: Callable[[], Path]
    """The plugin file in the user's plugin folder."""
    project_path: Callable[[Path], Path]
    """The plugin file in a project's plugin folder."""
    template: Path
    """The agent's part of the plugin (it follows `CLIENT`, whose `ask(payload, seconds)` and
    `inOrder(session, run)` it uses); `__HOOK__` (the Python hook client), `__SERVER__` (what
    finds the resident server: target, version, interpreter, root), `__HOLD_S__`, `__OTHER_S__`,
    `__LIMIT_S__` (`hook_limit_s`, 0 for none) and `__TARGET__` are filled in."""
    notes: tuple[str, ...] = field(default=())
    http_events: frozenset[str] = frozenset()
    """No HTTP transport: the plugin talks to the resident server over its socket."""
    hook_limit_s: float | None = None
    """The agent's own bound on one plugin hook call, past which it fails the whole run (Cline:
    3 s); None when it waits for a plugin as long as it takes. The plugin answers before it:
    its waits are cut to fit, and a hold for the operator ends with the call refused as on hold
    (`policy.hook_settings`)."""

    def render(self, hold_timeout_s: int, root: Path | None) -> str:
        """The plugin file's text for these timeouts and store root."""
        text = CLIENT.read_text(encoding="utf-8") + "\n" + self.template.read_text(
            encoding="utf-8")
        from supervisor import __version__
        from supervisor.hooks.installed import interpreter

        hook = hook_argv(self.target, root)
        server = {"target": self.target, "version": __version__,
                  "python": interpreter(hook[0]) or hook[0],  # the server key names the client's
                  "root": str(root) if root is not None else None}
        values = {
            "__HOOK__": json.dumps(hook),
            "__SERVER__": json.dumps(server),
            "__HOLD_S__": str(int(hold_timeout_s)),
            "__OTHER_S__": str(OTHER_TIMEOUT_S),
            "__LIMIT_S__": json.dumps(self.hook_limit_s or 0),
            "__TARGET__": self.target,
        }
        for name, value in values.items():
            text = text.replace(name, value)
        return text


def is_ours(text: str | None) -> bool:
    return text is not None and text.startswith(MARKER)


def installed_hook(path: Path) -> list[tuple[str, dict[str, Any]]] | None:
    """Our plugin at `path` as `supervisor doctor` checks a settings file's entries: one entry,
    ("plugin", the hook client's command line the plugin runs when it cannot reach the
    server); None when there is no file; [] for a file not ours, or one whose command cannot be
    read."""
    try:
        text = _read(path)
    except InstallError as exc:
        raise OSError(str(exc)) from exc
    if text is None:
        return None
    if not is_ours(text):
        return []
    for line in text.splitlines():
        if line.startswith(_HOOK_LINE):
            try:
                argv = json.loads(line.removeprefix(_HOOK_LINE).rstrip(";"))
            except ValueError:
                return []
            if isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv):
                return [("plugin", {"type": "command", "command": shlex.join(argv)})]
    return []


def plan_install(spec: PluginFile, path: Path, hold_timeout_s: int,
                 root: Path | None) -> Plan:
    """Our plugin at `path` (refreshed when it is there); refused over a file not ours."""
    old = _read(path)
    if old is not None and not is_ours(old):
        raise InstallError(f"{path} exists and is not the supervisor's plugin; move it away "
                           "and run again (it was left untouched)")
    return Plan(path, old, spec.render(hold_timeout_s, root))


def plan_uninstall(spec: PluginFile, path: Path) -> Plan:
    """No plugin at `path` when it is ours; a file not ours is left as it is."""
    old = _read(path)
    return Plan(path, old, None if is_ours(old) else old)


def apply(plan: Plan) -> None:
    """Write (or remove) the plugin file; the file is ours alone, so no backup is kept."""
    if not plan.changed:
        return
    if plan.new_text is None:
        plan.path.unlink()
        return
    plan.path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(plan.path, plan.new_text.encode("utf-8"), 0o644)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"cannot read {path}: {exc}") from exc


def within(base: Path, *parts: str) -> Path:
    """`base/parts...` with `base` expanded and made absolute."""
    return Path(os.path.abspath(Path(base).expanduser())).joinpath(*parts)
