"""Notification URLs without their secrets, in one place (every reader and writer, the web view).

An apprise URL is a credential as a whole: an ntfy topic or a webhook path is the secret, and for
some services the host part is the token itself (`tgram://BOT_TOKEN/CHAT_ID`). apprise's own
privacy form masks passwords and tokens it knows of, not a topic nor a path, so no part of such a
URL but its scheme is kept (`ntfy://…`). Applied structurally: the `notification` event's
`service` and `reason` are redacted when they are read (so lines written before this are
covered too), and the notifier redacts, in what apprise said, every piece of the URL it sent to.
"""

from __future__ import annotations

import re

HIDDEN = "…"
_URL = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]{0,31})://[^\s'\"<>()\[\]{},;]*")
_PIECES = re.compile(r"[/?&@#=,;:]")
_SHORTEST_SECRET = 4


def notify_url(url: str) -> str:
    """The URL's scheme only: `ntfy://ntfy.sh/my-topic` → `ntfy://…`. Idempotent."""
    scheme, sep, _ = url.partition("://")
    return f"{scheme}://{HIDDEN}" if sep and scheme.isascii() else HIDDEN


def in_text(text: str, url: str | None = None) -> str:
    """`text` with every URL in it reduced to its scheme, and, given the `url` it is about,
    every piece of that URL (path segments, user, password, host, query values) removed too,
    however it is quoted."""
    if url:
        _, _, rest = url.partition("://")
        pieces = {p for p in _PIECES.split(rest) if len(p) >= _SHORTEST_SECRET}
        for piece in sorted(pieces, key=len, reverse=True):
            text = text.replace(piece, HIDDEN)
    return _URL.sub(lambda m: f"{m.group(1)}://{HIDDEN}", text)
