"""One attempt to deliver one message to one service, through apprise (imported here only).

apprise says little beyond True/False; the reason of a failure is what it logged while trying,
captured and cut to one line. The service is named by apprise's privacy form of its URL (tokens
masked), so a record or a screen never shows a secret.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from supervisor.safetext import clean


@dataclass(frozen=True, slots=True)
class Attempt:
    ok: bool
    reason: str | None


def _plugin(url: str) -> Any:
    import apprise

    return apprise.Apprise.instantiate(url, suppress_exceptions=True) or None


def service_of(url: str) -> str | None:
    """The service's URL with its secrets masked, or None when apprise cannot parse `url`."""
    plugin = _plugin(url)
    if plugin is None:
        return None
    try:
        return clean(str(plugin.url(privacy=True)).partition("?")[0], keep_newlines=False,
                     limit=200)
    except Exception:  # a plugin that cannot print itself still sends
        return clean(str(getattr(plugin, "service_name", "?")), keep_newlines=False, limit=60)


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
        return Attempt(False, clean(f"{type(exc).__name__}: {exc}", keep_newlines=False,
                                    limit=300))
    if ok:
        return Attempt(True, None)
    lines = [line.strip() for line in logged.splitlines() if line.strip()]
    reason = " / ".join(lines[-2:]) if lines else "the service refused the message"
    return Attempt(False, clean(reason, keep_newlines=False, limit=300))
