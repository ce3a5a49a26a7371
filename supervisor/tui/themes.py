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
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from textual.color import Color, ColorParseError
from textual.theme import Theme

from supervisor.resources import data_dir
from supervisor.userconfig import config_dir

DEFAULT_THEME = "supervisor-dark"
_COLOR_FIELDS = (
    "primary", "secondary", "accent", "warning", "error", "success", "foreground",
    "background", "surface", "panel", "boost",
)


class ThemeFile(BaseModel):
    """The validated content of one theme file."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
    dark: bool = True
    primary: str
    secondary: str | None = None
    accent: str | None = None
    warning: str | None = None
    error: str | None = None
    success: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    boost: str | None = None
    luminosity_spread: float = 0.15
    text_alpha: float = 0.95
    variables: dict[str, str] = Field(default_factory=dict)

    @field_validator(*_COLOR_FIELDS)
    @classmethod
    def _colour(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                Color.parse(value)
            except ColorParseError as exc:
                raise ValueError(f"not a colour: {value!r}") from exc
        return value

    def to_theme(self) -> Theme:
        return Theme(**self.model_dump())


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
    try:
        return ThemeFile.model_validate(data).to_theme()
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        raise ValueError(f"{where}: {first['msg']}") from exc


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
