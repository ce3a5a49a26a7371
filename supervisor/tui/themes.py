"""Load theme files (TOML) into Textual `Theme` objects.

Themes ship in the package's `themes/` folder; users add their own in `$SUPERVISOR_CONFIG/themes`
(else the platform's config dir, e.g. `~/.config/agent-supervisor/themes`). A user theme with the
name of a shipped one replaces it. A file that cannot be read or validated is reported (the app
shows the message) and skipped, so a bad file never stops the dashboard.

File format (every colour a CSS colour string; only `name` and `primary` are required):

    name = "supervisor-dark"
    dark = true
    primary = "#4ea1ff"
    secondary = "#8c7aff"
    ...
    [variables]          # optional Textual design variables
    "footer-key-foreground" = "#4ea1ff"
"""

import contextlib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

from supervisor.resources import data_dir
from supervisor.userconfig import config_dir

DEFAULT_THEME = "supervisor-dark"
_COLOR_FIELDS = (
    "primary", "secondary", "accent", "warning", "error", "success", "foreground",
    "background", "surface", "panel", "boost",
)


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_DEFAULTS: dict[str, Any] = {"dark": True, "luminosity_spread": 0.15, "text_alpha": 0.95}
"""What a theme file may leave out beside the colours (Textual's own defaults)."""


def theme_from(data: dict[str, Any]) -> Theme:
    """A theme from one file's table, checked field by field; `ValueError` with the first
    problem as `field: reason`. Plain checks rather than a pydantic model: the themes are read
    before the dashboard's first screen, which pydantic would delay by a third of a second."""
    for name in ("name", "primary"):
        if name not in data:
            raise ValueError(f"{name}: Field required")
    if not isinstance(data["name"], str):
        raise ValueError("name: Input should be a valid string")
    if not _NAME.match(data["name"]):
        raise ValueError(f"name: String should match pattern '{_NAME.pattern}'")
    fields: dict[str, Any] = {**_DEFAULTS, "name": data["name"]}
    for name in _COLOR_FIELDS:
        value = data.get(name)
        if value is not None:
            fields[name] = _colour(name, value)
    if not isinstance(data.get("dark", True), bool):
        raise ValueError("dark: Input should be a valid boolean")
    for name in ("luminosity_spread", "text_alpha"):
        value = data.get(name, fields[name])
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{name}: Input should be a valid number")
        fields[name] = float(value)
    fields["dark"] = data.get("dark", True)
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise ValueError("variables: Input should be a valid dictionary")
    for key, value in variables.items():
        if not isinstance(value, str):
            raise ValueError(f"variables.{key}: Input should be a valid string")
    fields["variables"] = dict(variables)
    for name in data:
        if name not in fields and name not in _COLOR_FIELDS:
            raise ValueError(f"{name}: Extra inputs are not permitted")
    return Theme(**fields)


def _colour(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name}: Input should be a valid string")
    try:
        Color.parse(value)
    except ColorParseError:
        raise ValueError(f"{name}: not a colour: {value!r}") from None
    return value


@dataclass(slots=True)
class LoadedThemes:
    themes: dict[str, Theme] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    """One readable message per file that was skipped."""


def user_themes_dir() -> Path:
    """`$SUPERVISOR_CONFIG/themes`, else the platform's user config dir + `themes`."""
    return config_dir() / "themes"


def load_theme_file(path: Path) -> Theme:
    """Read and validate one file; raises `ValueError` with a one-line reason."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"invalid TOML: {exc}") from exc
    return theme_from(data)


def load_themes(*folders: Path) -> LoadedThemes:
    """Every `*.toml` theme in `folders` (later folders override earlier ones by name)."""
    out = LoadedThemes()
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                theme = load_theme_file(path)
            except ValueError as exc:
                out.errors.append(f"theme file {path}: {exc}")
                continue
            out.themes[theme.name] = theme
    return out


def default_folders() -> list[Path]:
    """The shipped themes, then the user's (which override by name)."""
    folders = []
    with contextlib.suppress(FileNotFoundError):
        folders.append(data_dir("themes"))
    folders.append(user_themes_dir())
    return folders
