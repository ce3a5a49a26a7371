"""A connection reset costs the hook server's log no traceback (issue 41, low).

Every connection a caller reset mid-request printed a 1.4 KB traceback to the server's stderr
(its log), outside the rate-limited log of refused requests: a loop of resets grew the log
without bound. Now such an error is one rate-limited line. The real resident server."""

import socket
import struct
import time

import pytest

from tests.adversarial.test_adv_http_hooks import _log, _request, served

__all__ = ["served"]


def _reset(port: int, raw: bytes) -> None:
    conn = socket.create_connection(("127.0.0.1", port), timeout=5)
    conn.sendall(raw)
    time.sleep(0.02)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()  # RST, not FIN


@pytest.mark.slow
def test_resets_are_no_traceback(served) -> None:
    root, config, _ws = served
    before = len(_log(root).encode())
    raw = _request(config, b"{" + b" " * 200_000)[:4096]  # a body far longer than what comes
    for _ in range(100):
        _reset(config.port, raw)
    time.sleep(1.0)
    grown = _log(root)[before:]
    assert "Traceback" not in grown, grown[:2000]
    assert len(grown.encode()) < 2_000, len(grown.encode())
