"""Secrets out of text, in one place: what the supervisor keeps beyond a session, and
notification URLs wherever they are shown.

`redact(text)`: a session's own event log holds whatever the agent saw (it is private to the
user, see `store.paths`); what is kept *beyond* it (the failure memory of a project, read by
every later session and by every host of a fleet) keeps only short excerpts, and those pass
through `redact` first: credentials in URLs, `Authorization` headers and bearer tokens,
`key=value` and `--password value` pairs whose name says secret, private-key blocks, and tokens
whose shape names their issuer (GitHub, GitLab, Slack, AWS, OpenAI/Anthropic-style `sk-`, JWTs).
Each is replaced by `<redacted>`, its name (when it has one) kept so the text still reads.

`notify_url(url)` and `in_text(text, url)`: an apprise URL is a credential as a whole: an ntfy
topic or a webhook path is the secret, and for some services the host part is the token itself
(`tgram://BOT_TOKEN/CHAT_ID`). apprise's own privacy form masks passwords and tokens it knows
of, not a topic nor a path, so no part of such a URL but its scheme is kept (`ntfy://…`).
Applied structurally: the `notification` event's `service` and `reason` are redacted when they
are read (`protocol.models`, so lines written before this are covered too), and the notifier
redacts, in what apprise said, every piece of the URL it sent to.

Stdlib only, so every layer may use it (the protocol layer's models too).
"""

from __future__ import annotations

import re

MASK = "<redacted>"
_SECRET_NAME = (r"(?:[A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey"
                r"|access[_-]?key|private[_-]?key|credentials?|auth)[A-Za-z0-9_.-]*)")
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
                re.S), MASK),
    # scheme://user:password@host
    (re.compile(r"\b([a-z][a-z0-9+.-]*://)[^\s/@:'\"]+:[^\s/@'\"]+@", re.I), rf"\1{MASK}@"),
    (re.compile(r"\b(authorization|proxy-authorization)(\s*[:=]\s*)(?:(bearer|basic|token)\s+)?"
                r"[^\s'\",;]+", re.I),
     rf"\1\2\3 {MASK}"),
    (re.compile(r"\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}", re.I), rf"\1 {MASK}"),
    # NAME=value, NAME: value, "NAME": "value"
    (re.compile(rf"\b({_SECRET_NAME})(['\"]?\s*[:=]\s*['\"]?)(?!<redacted>|bearer\b|basic\b)"
                rf"[^\s'\",;&]+", re.I),
     rf"\1\2{MASK}"),
    # --password value, --token=value
    (re.compile(rf"(--{_SECRET_NAME})(=|\s+)[^\s'\"]+", re.I), rf"\1\2{MASK}"),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
                r"|glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}"
                r"|(?:AKIA|ASIA)[A-Z0-9]{16}|sk-[A-Za-z0-9_-]{16,}"
                r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"), MASK),
]


def redact(text: str) -> str:
    """`text` with every secret it visibly holds replaced by `<redacted>` (see the module
    docstring for what counts)."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


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
