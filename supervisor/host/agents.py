"""How `supervisor run AGENT` starts each hook target's CLI with the supervisor's hooks wired
for that run only: nothing global is written, and the run's files go when its agent exits.

The agents are the hook registry's targets (`supervisor.hooks.targets`), under their registry
names and a short alias (`claude` for `claude-code`). A target is started the way its CLI takes
settings for one invocation:

- Claude Code: `--settings FILE`, a settings layer of its own that Claude Code merges over the
  user's and the project's (their files are not touched);
- Codex CLI: `-c hooks.EVENT=[...]` config overrides and `--dangerously-bypass-hook-trust` (the
  per-run hooks cannot be trusted beforehand; Codex says so on every run);
- Gemini CLI: `GEMINI_CLI_HOME` pointing at a run's own home whose `.gemini/settings.json` is
  the user's settings with the hooks merged in, every other entry of the user's `~/.gemini`
  linked (its system settings would do, but Gemini reads them only from root-owned directories).

A target with no launcher here can still be supervised: `supervisor install` it and start it
with `supervisor run --cmd`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supervisor.hooks.targets import load, names
from supervisor.host import HostError


@dataclass(frozen=True, slots=True)
class Wiring:
    """What a run adds to the agent's command line (before the user's arguments) and env."""

    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Launcher:
    executable: str
    """The CLI's command name, looked up on the caller's PATH."""
    wire: Callable[[Any, str, Path], Wiring]
    """(target, the settings document with our hooks as JSON text, the run's private dir)."""
    base: Callable[[Any], Path | None] = lambda target: None
    """The settings file our hooks are merged into (None: a document of hooks only)."""


def _claude(target: Any, document: str, private: Path) -> Wiring:
    path = private / "claude-settings.json"
    path.write_text(document, encoding="utf-8")
    return Wiring(args=["--settings", str(path)])


def _codex(target: Any, document: str, private: Path) -> Wiring:
    hooks = json.loads(document)["hooks"]
    args = []
    for event, entries in hooks.items():
        args += ["-c", f"hooks.{event}={_toml(entries)}"]
    return Wiring(args=[*args, "--dangerously-bypass-hook-trust"])


def _gemini(target: Any, document: str, private: Path) -> Wiring:
    home = private / "gemini-home"
    mine = home / ".gemini"
    mine.mkdir(parents=True)
    real = target.settings.user_path().parent
    if real.is_dir():  # everything but the settings stays the user's own (auth, history, trust)
        for entry in real.iterdir():
            if entry.name != "settings.json":
                (mine / entry.name).symlink_to(entry)
    (mine / "settings.json").write_text(document, encoding="utf-8")
    return Wiring(env={"GEMINI_CLI_HOME": str(home)})


def _user_settings(target: Any) -> Path | None:
    return Path(target.settings.user_path())


LAUNCHERS: dict[str, Launcher] = {
    # hook target name: how its CLI is started
    "claude-code": Launcher("claude", _claude),
    "codex": Launcher("codex", _codex),
    "gemini": Launcher("gemini", _gemini, _user_settings),
}
ALIASES = {"claude": "claude-code"}
"""Short names people type; each must name a registry target."""


def agent_names() -> list[str]:
    """Every AGENT `supervisor run` takes: the registry's targets and their aliases."""
    targets = names()
    return [*targets, *(a for a, t in ALIASES.items() if t in targets)]


def resolve(agent: str) -> tuple[Any, Launcher]:
    """(the hook target, its launcher) of an AGENT; `HostError` with the known names."""
    name = ALIASES.get(agent, agent)
    if name not in names():
        raise HostError(f"unknown agent {agent!r} (known: {', '.join(agent_names())}; "
                        "or --cmd COMMAND)")
    launcher = LAUNCHERS.get(name)
    target = load(name)
    if launcher is None:
        raise HostError(f"supervisor run cannot start {target.label} yet: install its hooks "
                        f"(supervisor install {name}) and use --cmd")
    return target, launcher


def hooks_document(target: Any, launcher: Launcher, root: Path) -> str:
    """The settings (JSON text) with the supervisor's hook entries for `target`, recording
    into `root`: merged into the launcher's base file when there is one."""
    from supervisor.hooks import settings_file as installer
    from supervisor.hooks.policy import PolicyError, hold_seconds, load_policy

    try:
        policy, _source = load_policy(root)
    except PolicyError as exc:
        raise HostError(str(exc)) from exc
    timeout = math.ceil(hold_seconds(policy)) + installer.HOLD_MARGIN_S
    base = launcher.base(target) or root / "host" / "nonexistent-settings.json"

    def command(seconds: float) -> str:
        return installer.hook_command(target.name, seconds, root)

    try:
        plan = installer.plan_install(target.settings, base, command, timeout)
    except installer.InstallError as exc:
        raise HostError(str(exc)) from exc
    return plan.new_text or "{}"


def _toml(value: Any) -> str:
    """`value` (JSON data) as a TOML inline value, for a `-c key=value` override."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)  # strings (JSON escapes are TOML's) and numbers
