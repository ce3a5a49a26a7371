"""Whether anything answers at the collector's address, asked before the first export.

The OTLP exporters retry a refused connection with backoff until their timeout (10 s a
request by default), and wait as long for one that is never answered, printing nothing
meanwhile: an operator who ran `supervisor otel` with no collector listening stared at a
silent terminal for a quarter of a minute. One TCP connection, bounded by `PROBE_S`, tells
the two apart at once: a refusal is known in a millisecond (nothing is sent, and the command
says so), and a connection with no answer is said before the exporter's wait begins.
"""

import os
import socket
import urllib.request
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

PROBE_S = 1.0
"""How long the probe waits for the connection to be accepted."""

Outcome = Literal["answers", "refused", "silent", "unknown"]


@dataclass(frozen=True, slots=True)
class Reach:
    """What the probe found: `answers` (something accepted the connection), `refused` (the
    host said no one listens there), `silent` (no answer within `PROBE_S`: a firewall that
    drops, a host that is down), or `unknown` (not asked: a proxy carries the requests, or the
    name does not resolve, which the exporter reports in its own words)."""

    outcome: Outcome
    reason: str = ""


def probe(endpoint: str, timeout: float = PROBE_S) -> Reach:
    """One TCP connection to `endpoint`'s host and port (an http(s) URL, as checked by
    `sdk.check_endpoints`), closed at once."""
    parts = urlsplit(endpoint.strip())
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        return Reach("unknown", "requests go through a proxy")
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return Reach("answers")
    except ConnectionRefusedError as exc:
        return Reach("refused", (exc.strerror or "connection refused").lower())
    except TimeoutError:
        return Reach("silent", f"no answer within {timeout:g} s")
    except socket.gaierror as exc:
        return Reach("unknown", str(exc.strerror or exc))
    except OSError as exc:  # unreachable network or host: as good as a refusal, and as fast
        if exc.errno is None:
            return Reach("unknown", str(exc))
        return Reach("refused", (exc.strerror or os.strerror(exc.errno)).lower())


def request_timeout_s() -> float:
    """How long the exporter waits for one request (`OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, else
    `OTEL_EXPORTER_OTLP_TIMEOUT`, in seconds; 10 by default, as the exporters read them)."""
    for var in ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"):
        value = os.environ.get(var)
        if value:
            try:
                seconds = float(value)
            except ValueError:
                continue
            if seconds > 0:
                return seconds
    return 10.0
