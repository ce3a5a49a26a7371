"""One attempt to deliver one message to one service, through apprise (imported here only).

apprise says little beyond True/False; the reason of a failure is what it logged while trying,
captured and cut to one line, every piece of the URL removed from it. The service is named by its
URL's scheme only (`supervisor.redact`: an ntfy topic or a webhook path is the secret,
which apprise's privacy form keeps), so a record or a screen never shows a secret.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from supervisor.redact import in_text, notify_url
from supervisor.safetext import clean


@dataclass(frozen=True, slots=True)
class Attempt:
    ok: bool
    reason: str | None


def _plugin(url: str) -> Any:
    import apprise

    return apprise.Apprise.instantiate(url, suppress_exceptions=True) or None


def service_of(url: str) -> str | None:
    """The service's URL without its secrets (its scheme), or None when apprise cannot parse
    `url`."""
    if _plugin(url) is None:
        return None
    return clean(notify_url(url), keep_newlines=False, limit=60)


def service_names(urls: list[str]) -> list[str]:
    """How each configured URL is named in records and on screens: its service, numbered in
    the config's order when there are several (so two ntfy topics stay apart)."""
    names = [service_of(url) or "?" for url in urls]
    return names if len(names) < 2 else [f"{n} #{i}" for i, n in enumerate(names, 1)]


def send_one(url: str, title: str, body: str) -> Attempt:
    """Send `title`/`body` to the one service of `url`; never raises."""
    import apprise

    plugin = _plugin(url)
    if plugin is None:
        return Attempt(False, "apprise cannot parse this URL")
    notifier = apprise.Apprise()
    notifier.add(plugin)
    try:
        with apprise.LogCapture(level=logging.WARNING, fmt="%(message)s") as captured:
            ok = bool(notifier.notify(body=body, title=title))
            logged = captured.getvalue()
    except Exception as exc:  # a plugin bug must not end the deliverer
        return Attempt(False, clean(in_text(f"{type(exc).__name__}: {exc}", url),
                                    keep_newlines=False, limit=300))
    if ok:
        return Attempt(True, None)
    lines = [line.strip() for line in logged.splitlines() if line.strip()]
    reason = " / ".join(lines[-2:]) if lines else "the service refused the message"
    return Attempt(False, clean(in_text(reason, url), keep_newlines=False, limit=300))
