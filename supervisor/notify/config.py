"""The `[notify]` table of the operator's `config.toml` (`supervisor.userconfig`).

    [notify]
    urls = ["ntfy://ntfy.sh/my-agents", "tgram://BOT_TOKEN/CHAT_ID"]
    link = "https://supervisor.example.org"   # where `supervisor web` is reachable (optional)
    burst_s = 2.0        # escalations within this many seconds share one message
    retries = 3          # further attempts after a failure, with back-off
    backoff_s = 2.0      # first back-off; doubled each time

Every problem is one line naming the file and line (`NotifyConfig.problems`); a URL apprise
cannot parse is left out and named, the others still work.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supervisor.userconfig import config_file

DEFAULTS: dict[str, Any] = {"burst_s": 2.0, "retries": 3, "backoff_s": 2.0}
MAX_RETRIES = 10
MAX_BACKOFF_S = 300.0


@dataclass(slots=True)
class NotifyConfig:
    urls: list[str] = field(default_factory=list)
    link: str | None = None
    burst_s: float = DEFAULTS["burst_s"]
    retries: int = DEFAULTS["retries"]
    backoff_s: float = DEFAULTS["backoff_s"]
    problems: list[str] = field(default_factory=list)
    """One line per thing that was wrong in the file and left out."""


def load(path: Path | None = None) -> NotifyConfig:
    """Read `[notify]` from `path` (default: the operator's config.toml). A missing file or
    table is no notifications, not an error."""
    path = path or config_file()
    config = NotifyConfig()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return config
    except (OSError, UnicodeDecodeError) as exc:
        config.problems.append(f"{path}: cannot read: {exc}")
        return config
    try:
        table = tomllib.loads(text).get("notify")
    except tomllib.TOMLDecodeError as exc:
        config.problems.append(f"{path}: invalid TOML: {exc}")
        return config
    if table is None:
        return config
    if not isinstance(table, dict):
        config.problems.append(f"{path}:{_line(text, '[notify]')}: [notify] must be a table")
        return config
    _read_urls(config, table.get("urls", []), path, text)
    link = table.get("link")
    if link is not None:
        if isinstance(link, str) and link.startswith(("http://", "https://")):
            config.link = link.rstrip("/")
        else:
            config.problems.append(f"{path}:{_line(text, 'link')}: [notify] link must be an "
                                   "http:// or https:// URL (where `supervisor web` is reached)")
    for name, limit in (("burst_s", 60.0), ("retries", MAX_RETRIES), ("backoff_s", MAX_BACKOFF_S)):
        value = table.get(name, DEFAULTS[name])
        ok = (isinstance(value, int | float) and not isinstance(value, bool)
              and 0 <= value <= limit and (name != "retries" or isinstance(value, int)))
        if ok:
            setattr(config, name, value)
        else:
            config.problems.append(f"{path}:{_line(text, name)}: [notify] {name} must be a "
                                   f"number from 0 to {limit:g}; using {DEFAULTS[name]}")
    unknown = sorted(set(table) - {"urls", "link", *DEFAULTS})
    for name in unknown:
        config.problems.append(f"{path}:{_line(text, name)}: [notify] has no setting {name!r}")
    return config


def _read_urls(config: NotifyConfig, urls: object, path: Path, text: str) -> None:
    if isinstance(urls, str):
        urls = [urls]
    if not isinstance(urls, list):
        config.problems.append(f"{path}:{_line(text, 'urls')}: [notify] urls must be a list "
                               "of apprise URLs")
        return
    for url in urls:
        where = f"{path}:{_line(text, url if isinstance(url, str) else 'urls')}"
        problem = url_problem(url)
        if problem:
            config.problems.append(f"{where}: {problem}")
        else:
            config.urls.append(url)


def url_problem(url: object) -> str | None:
    """Why apprise cannot use `url`, or None. The URL itself is never repeated (it may hold a
    token): only its scheme."""
    if not isinstance(url, str) or not url.strip():
        return "a notify URL must be a non-empty string"
    from supervisor.notify.send import service_of

    if service_of(url) is None:
        scheme = url.partition("://")[0] if "://" in url else "(no scheme)"
        return (f"apprise cannot parse this {scheme}:// URL (see "
                "https://github.com/caronc/apprise/wiki for the services and their URLs)")
    return None


def _line(text: str, needle: str) -> int:
    """The 1-based line of `text` where `needle` first appears (1 when it does not)."""
    index = text.find(needle)
    return 1 if index < 0 else text.count("\n", 0, index) + 1
