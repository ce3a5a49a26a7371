"""The operator's keys, from `$SUPERVISOR_CONFIG/config.toml`:

    [keys]              # action -> its key on the escalation prompt
    approve = "o"
    [keys.commands]     # action -> its key as a command on the sessions and session screens
    pause = "Z"
    [keys.navigation]   # name -> its key: open, back, filter, help, ... (`tui.nav_keys`)
    open = "o"

The keys are the decision kinds' own (`key`, `command_key`), so everything the dashboard derives
from the registry follows: the bindings, the prompt's and the help's labels, and the burst rule
(a remapped approve is as deliberate as `a` was). `configure` checks the table before anything
changes — an unknown action, a key that is not one letter, two kinds on one key (the registry's
own check, `registry.registered`) — and changes nothing when a line is wrong. It runs before
the dashboard's screens are imported (their bindings are made from the registry then, and each
screen refuses a key its own bindings already use: `decision_keys.distinct`, `n` on the prompt).
The navigation keys are checked and taken by `supervisor.tui.nav_keys` in the same pass, and
an app-wide key (quit, help, ...) that a main screen binds to something else is refused after the
import (`nav_keys.app_clashes`); with the built-in keys, which the tests check against every
screen, the screens opened later are not imported for it (`load_app`). The other keys (the
forms', the pickers') are the dashboard's own, listed by `?`.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from supervisor.protocol.decisions import KINDS, escalation_options, session_commands
from supervisor.protocol.decisions.registry import BUILT_IN_KEYS, registered
from supervisor.tui import nav_keys

if TYPE_CHECKING:
    from supervisor.tui.app import SupervisorApp


def configure(path: Path) -> list[str]:
    """Apply the `[keys]` of the config file at `path` to the registry; the problems found
    (nothing is applied when there is one). A missing file or table changes nothing."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return [f"{path}: {exc}"]
    table = data.get("keys", {})
    if not isinstance(table, dict):
        return [f"{path}: [keys] must be a table (action = \"key\")"]
    commands = table.get("commands", {})
    navigation = table.get("navigation", {})
    answers = {k: v for k, v in table.items() if k not in ("commands", "navigation")}
    for name, sub in (("commands", commands), ("navigation", navigation)):
        if not isinstance(sub, dict):
            return [f"{path}: [keys.{name}] must be a table (action = \"key\")"]
    problems = (_unknown(path, "[keys]", answers, escalation_options())
                + _unknown(path, "[keys.commands]", commands, session_commands()))
    if problems:
        return problems
    changed = {name: copy.copy(kind) for name, kind in KINDS.items()}
    for what, wanted in (("key", answers), ("command_key", commands)):
        for name, key in wanted.items():
            setattr(changed[name], what, key)
    try:
        registered(tuple(changed.values()))  # a malformed key, two kinds on one key
    except ValueError as exc:
        return [f"{path}: [keys]: {exc}"]
    problems = [f"{path}: {problem}" for problem in nav_keys.configure(navigation)]
    if problems:
        return problems
    for name, kind in changed.items():
        KINDS[name].key, KINDS[name].command_key = kind.key, kind.command_key  # type: ignore[misc]
    return []


def load_app() -> type[SupervisorApp]:
    """The dashboard's app class, its screens made with the operator's keys: `configure` with
    the config file, then the import, whose screens check their keys as they bind them
    (`decision_keys.distinct`). `ValueError` with every problem (one a line) when a key is
    wrong: the dashboard does not start with keys the operator did not mean.

    The screens opened later (a session's, an escalation's) are imported for that check only
    when a key is not the built-in one (`as_built`): the built-in keys are checked against
    every screen by the tests, and the start is spared their import (a tenth of a second)."""
    from supervisor.userconfig import config_file

    path = config_file()
    problems = configure(path)
    if problems:
        raise ValueError("\n".join(problems))
    try:
        from supervisor.tui.app import SupervisorApp  # heavy: after the keys

        if as_built():
            return SupervisorApp
        screens = main_screens()  # imports the screens the app opens later, checking theirs
    except ValueError as exc:  # a screen's own key (`decision_keys.distinct`, as it binds)
        raise ValueError(f"{path}: [keys]: {exc}: choose another key") from None
    problems = nav_keys.app_clashes(screens)
    if problems:
        raise ValueError("\n".join(f"{path}: {problem}" for problem in problems))
    return SupervisorApp


def as_built() -> bool:
    """Every decision and navigation key is the built-in one: no `[keys]` taken, no kind
    registered after the registry was built."""
    return (nav_keys.as_built() and {name: (kind.key, kind.command_key)
                                     for name, kind in KINDS.items()} == BUILT_IN_KEYS)


def main_screens() -> dict[str, list[Any]]:
    """The screens an app-wide key must not be taken on, with their bindings: their own, their
    decision keys' (`RegistryKeys`) and their widgets' and panels'."""
    from supervisor.tui.panels import PANELS
    from supervisor.tui.screens.escalation import EscalationScreen
    from supervisor.tui.screens.session import SessionScreen
    from supervisor.tui.screens.sessions import SessionsScreen
    from supervisor.tui.widgets.escalation_queue import EscalationQueue
    from supervisor.tui.widgets.history_view import HistoryView
    from supervisor.tui.widgets.session_table import SessionTable

    return {"the sessions screen": [*SessionsScreen.BINDINGS,
                                    *SessionsScreen.checked_bindings(), *SessionTable.BINDINGS,
                                    *EscalationQueue.BINDINGS],
            "the session screen": [*SessionScreen.BINDINGS, *SessionScreen.checked_bindings(),
                                   *HistoryView.BINDINGS,
                                   *(b for panel in PANELS for b in panel.BINDINGS)],
            "the escalation prompt": [*EscalationScreen.BINDINGS,
                                      *EscalationScreen.checked_bindings()]}


def _unknown(path: Path, table: str, wanted: dict[str, Any], known: tuple[str, ...]
             ) -> list[str]:
    return [f"{path}: {table} has no action {name!r} (one of {', '.join(known)})"
            for name in wanted if name not in known]
