"""Where the Redis store is and how to log in: the URL, its credentials, TLS, and refusals.

    redis://[USER[:PASSWORD]@]HOST[:PORT][/DB][?prefix=NAME]
    rediss://USER@HOST[:PORT][/DB][?ca=FILE&cert=FILE&key=FILE&prefix=NAME]     (TLS)

The password comes from, in order: `--password-file FILE`, the URL, the file named by
`$SUPERVISOR_STORE_PASSWORD_FILE`, then `$SUPERVISOR_STORE_PASSWORD`. It is never printed:
`RedisTarget.describe()` leaves it out, and error messages from the client are scrubbed of it.
A Redis that is not on this machine (not a loopback address) is refused without a password
unless `--insecure` is given: anyone who can write a session's control stream steers its agent.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlsplit

from supervisor.store.errors import StoreError

if TYPE_CHECKING:
    import redis

    from supervisor.store.open import StoreOptions

ENV_PASSWORD = "SUPERVISOR_STORE_PASSWORD"
ENV_PASSWORD_FILE = "SUPERVISOR_STORE_PASSWORD_FILE"
DEFAULT_PORT = 6379
DEFAULT_PREFIX = "sv"
PREFIX_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""Key prefixes are used in ACL key patterns: no glob characters."""
_QUERY = {"prefix", "ca", "cert", "key"}
CONNECT_TIMEOUT_S = 5.0
SOCKET_TIMEOUT_S = 15.0
"""Longer than any blocking read we issue (those block for at most a second or two)."""


@dataclass(frozen=True, slots=True)
class RedisTarget:
    """One Redis store: where it is, who we are there, and the key prefix of our keys."""

    host: str
    port: int = DEFAULT_PORT
    db: int = 0
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    tls: bool = False
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    prefix: str = DEFAULT_PREFIX

    @property
    def loopback(self) -> bool:
        """Whether the server is on this machine (a loopback address or `localhost`)."""
        if self.host.lower() in ("localhost", "localhost."):
            return True
        try:
            return ipaddress.ip_address(self.host.strip("[]")).is_loopback
        except ValueError:
            return False

    def describe(self) -> str:
        """The URL without its password (and with the prefix only when it is not the default)."""
        user = f"{self.username}@" if self.username else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        prefix = f"?prefix={self.prefix}" if self.prefix != DEFAULT_PREFIX else ""
        scheme = "rediss" if self.tls else "redis"
        return f"{scheme}://{user}{host}:{self.port}/{self.db}{prefix}"

    def identity(self) -> str:
        """What names this store in a relay's state: server, database and prefix (no user)."""
        return f"{self.host}:{self.port}/{self.db}/{self.prefix}"

    def client(self, *, socket_timeout: float | None = SOCKET_TIMEOUT_S) -> redis.Redis:
        """A new client (a pool of connections, made lazily) for this target. It retries a
        failed command once at once (a pooled connection the server closed), no more: the relay
        and the follower back off themselves, and report the outage while it lasts."""
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        kwargs: dict[str, Any] = dict(
            host=self.host.strip("[]"), port=self.port, db=self.db, username=self.username,
            password=self.password, socket_connect_timeout=CONNECT_TIMEOUT_S,
            socket_timeout=socket_timeout, socket_keepalive=True, health_check_interval=30,
            client_name="agent-supervisor", retry=Retry(NoBackoff(), 1),
        )
        if self.tls:
            kwargs.update(ssl=True, ssl_ca_certs=self.ca_file, ssl_certfile=self.cert_file,
                          ssl_keyfile=self.key_file, ssl_cert_reqs="required")
        return redis.Redis(**kwargs)

    def scrub(self, text: str) -> str:
        """`text` with the password (if any) blotted out."""
        if self.password:
            text = text.replace(self.password, "***")
        return text


def parse_url(url: str, options: StoreOptions) -> RedisTarget:
    """The target a `redis://` or `rediss://` URL names; `StoreError` with the reason if the URL
    is unusable or the connection would be unauthenticated to another machine."""
    try:
        parts = urlsplit(url)
        port = parts.port or DEFAULT_PORT
    except ValueError as exc:
        raise StoreError(f"bad store URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("redis", "rediss"):
        raise StoreError(f"not a Redis URL: {scheme}://")
    if not parts.hostname:
        raise StoreError("a Redis store URL needs a host: redis://HOST[:PORT][/DB]")
    db_text = parts.path.strip("/") or "0"
    if not db_text.isdigit():
        raise StoreError(f"the Redis database must be a number, not {db_text!r}")
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = sorted(set(query) - _QUERY)
    if unknown:
        raise StoreError(f"unknown store URL option(s) {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(_QUERY))})")
    prefix = query.get("prefix") or DEFAULT_PREFIX
    if not PREFIX_RE.fullmatch(prefix):
        raise StoreError(f"invalid key prefix {prefix!r}: letters, digits, '.', '_' or '-'")
    tls = scheme == "rediss"
    if not tls and any(query.get(k) for k in ("ca", "cert", "key")):
        raise StoreError("ca=, cert= and key= need TLS: use rediss://")
    target = RedisTarget(
        host=parts.hostname, port=port, db=int(db_text),
        username=unquote(parts.username) if parts.username else None,
        password=_password(parts.password, options), tls=tls,
        ca_file=query.get("ca") or None, cert_file=query.get("cert") or None,
        key_file=query.get("key") or None, prefix=prefix,
    )
    if not target.loopback and not target.password and not options.insecure:
        raise StoreError(
            f"refusing an unauthenticated connection to {target.describe()}: anyone who can "
            "write to it steers your agents. Give a user and password (in the URL, with "
            f"--password-file, or ${ENV_PASSWORD_FILE} / ${ENV_PASSWORD}), or --insecure")
    return target


def _password(in_url: str | None, options: StoreOptions) -> str | None:
    if options.password_file:
        return _read_password(options.password_file)
    if in_url:
        return unquote(in_url)
    env_file = os.environ.get(ENV_PASSWORD_FILE)
    if env_file:
        return _read_password(env_file)
    return os.environ.get(ENV_PASSWORD) or None


def _read_password(path: str) -> str:
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise StoreError(f"cannot read the password file {path}: {reason}") from None
    password = text.strip("\r\n")
    if not password:
        raise StoreError(f"the password file {path} is empty")
    return password


def store_error(target: RedisTarget, exc: BaseException) -> StoreError:
    """A Redis client error as one line for people: what failed, where, never the password."""
    import redis

    detail = str(exc).strip().rstrip(".") or type(exc).__name__
    if isinstance(exc, redis.AuthenticationError):
        detail = f"authentication failed ({detail})"
    elif isinstance(exc, redis.exceptions.NoPermissionError):
        detail = f"not allowed by the server's ACL ({detail})"
    elif isinstance(exc, redis.exceptions.OutOfMemoryError):
        detail = f"the server is out of memory (OOM: {detail})"
    elif isinstance(exc, (redis.ConnectionError, redis.TimeoutError)):
        detail = f"cannot reach the server ({detail})"
    return StoreError(target.scrub(f"{target.describe()}: {detail}"))
