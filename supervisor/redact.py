"""Mask secrets in text the supervisor keeps beyond a session: the one redaction.

A session's own event log holds whatever the agent saw (it is private to the user, see
`store.paths`); what is kept *beyond* it (the failure memory of a project, read by every later
session and by every host of a fleet) keeps only short excerpts, and those pass through `redact`
first: credentials in URLs, `Authorization` headers and bearer tokens, `key=value` and
`--password value` pairs whose name says secret, private-key blocks, and tokens whose shape
names their issuer (GitHub, GitLab, Slack, AWS, OpenAI/Anthropic-style `sk-`, JWTs). Each is
replaced by `<redacted>`, its name (when it has one) kept so the text still reads.

Stdlib only, so every layer may use it.
"""

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
