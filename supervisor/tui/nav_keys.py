"""The dashboard's navigation keys, by name: the defaults, and the operator's own from
`$SUPERVISOR_CONFIG/config.toml`:

    [keys.navigation]   # name -> its key (a character, or a key name: "f2", "ctrl+o", "escape")
    open = "o"
    help = "f1"

The screens bind each of these with `key(name)` when they are imported, so their help lines,
footers and burst rules follow a changed key. `configure` (run by `supervisor.tui.keys` before
the screens are imported, with the decision keys) checks the table first and changes nothing
when a line is wrong: a name that is not one of `NAVIGATION`, a key that is not a key, a key the
terminal or the palette takes. Two bindings of one screen on one key fail as the screens bind
them (`decision_keys.distinct`), and a key of the whole app that a main screen uses for
something else fails `app_clashes`: both said, with the key, before the dashboard starts.
"""

from __future__ import annotations

from typing import Any

NAVIGATION: dict[str, tuple[str, str]] = {
    # everywhere
    "quit": ("q", "quit (asks while escalations wait)"),
    "help": ("question_mark", "every key"),
    "theme": ("t", "the next theme"),
    "oldest_escalation": ("ctrl+e", "the oldest escalation, from any screen"),
    # the sessions screen
    "open": ("enter", "open the highlighted session (the table's enter opens it too)"),
    "filter": ("slash", "filter the sessions"),
    "sort": ("s", "the next sort column"),
    "reverse_sort": ("S", "reverse the sort"),
    "hide_ended": ("h", "hide or show the sessions that are over"),
    # the sessions and session screens
    "answer": ("e", "answer the oldest escalation (on a session: its own)"),
    # the session screen
    "back": ("escape", "back to the sessions"),
    "search": ("slash", "search the history"),
    "filter_history": ("f", "filter the history"),
    "next_match": ("n", "the next match"),
    "previous_match": ("N", "the previous match"),
    "heartbeats": ("h", "fold or show the heartbeats"),
    "side_bar": ("w", "hide or show the side bar"),
    "follow": ("end", "follow new events"),
    # the escalation prompt
    "next_pending": ("n", "the next pending escalation"),
}
"""Name -> (default key, what it does): every navigation key an operator may change."""

RESERVED = {"ctrl+c": "copies (and quits Textual apps)", "ctrl+q": "quits Textual apps",
            "ctrl+p": "opens the command palette"}
"""Keys taken before any screen sees them."""

_keys: dict[str, str] = {name: default for name, (default, _) in NAVIGATION.items()}


def key(name: str) -> str:
    """The key bound to navigation `name` (the operator's, else the default)."""
    return _keys[name]


def normalized(value: Any) -> str | None:
    """A key as Textual names it (`/` -> `slash`, `F2` -> `f2`), or None when it is not a key
    a terminal can send alone."""
    from textual.keys import Keys, _character_to_key

    if not isinstance(value, str) or not value:
        return None
    if len(value) == 1:
        return _character_to_key(value) if value.isprintable() and value != " " else None
    name = value.strip().lower()
    names = {k.value for k in Keys} | {"space", "question_mark", "slash"}
    return name if name in names else None


def configure(table: dict[str, Any]) -> list[str]:
    """Take the `[keys.navigation]` table: the problems found, one a line (then nothing is
    changed)."""
    problems: list[str] = []
    wanted: dict[str, str] = {}
    for name, value in table.items():
        if name not in NAVIGATION:
            problems.append(f"[keys.navigation] has no action {name!r} (one of "
                            f"{', '.join(NAVIGATION)})")
            continue
        found = normalized(value)
        if found is None:
            problems.append(f"[keys.navigation] {name} = {value!r} is not a key (a character, "
                            "or a name such as \"f2\", \"ctrl+o\", \"escape\")")
        elif found in RESERVED:
            problems.append(f"[keys.navigation] {name} = {value!r}: {found} "
                            f"{RESERVED[found]}")
        else:
            wanted[name] = found
    if not problems:
        _keys.update(wanted)
    return problems


def as_built() -> bool:
    """Every navigation key is its default (no `[keys.navigation]` taken)."""
    return all(_keys.get(name) == default for name, (default, _) in NAVIGATION.items())


def reset() -> None:
    """The defaults again (tests)."""
    _keys.update({name: default for name, (default, _) in NAVIGATION.items()})


APP_WIDE = ("quit", "help", "theme", "oldest_escalation")
"""Bound by the app itself, on every screen: a main screen's binding on the same key would
shadow it there."""


def app_clashes(screens: dict[str, list[Any]]) -> list[str]:
    """Each app-wide key (`APP_WIDE`) that a main screen binds to something else; `screens`
    maps a screen's name to its bindings (and its panels')."""
    problems = []
    for name in APP_WIDE:
        wanted = _keys[name]
        for where, bindings in screens.items():
            for binding in bindings:
                keys = [k.strip() for k in getattr(binding, "key", "").split(",")]
                if wanted in keys:
                    problems.append(f"[keys.navigation] {name} = {wanted!r}: {where} binds "
                                    f"{wanted!r} to {binding.action!r}: choose another key")
    return problems
