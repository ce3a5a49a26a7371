"""redis-py's replies as the store's client receives them, typed.

redis-py annotates its replies for every way a client can be made: strings are `bytes | str`
(bytes unless `decode_responses`), a stream entry's id and fields may be None (XCLAIM of an
entry deleted meanwhile), and XREAD answers a list (RESP2) or a dict (RESP3). The store's client
(`RedisTarget.client`) leaves responses undecoded and speaks RESP2, and reads streams only with
XRANGE, XREVRANGE (both also through the `scripts.RANGE` script) and XREAD: these helpers
narrow the annotations to that, in one place, so the backend and the relay never guess what a
reply holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the client stays off the import path of whoever merely types against it
    import redis
    from redis.typing import KeyT, StreamIdT, StreamRangeResponse, XReadResponse

Fields = dict[bytes | str, bytes | str]
"""A stream entry's fields (bytes, for the store's client)."""
Entry = tuple[bytes | str, Fields]
"""A stream entry: its id (`ms-n`) and its fields."""
StreamNews = tuple[bytes | str, list[Entry]]
"""One stream of an XREAD reply: its key and its new entries."""


def text(value: bytes | str, errors: str = "strict") -> str:
    """A key, member, stream id or field value of a reply as text (UTF-8)."""
    return value.decode("utf-8", errors) if isinstance(value, bytes) else value


def raw(value: bytes | str) -> bytes:
    """A field value of a reply as the bytes that were written."""
    return value if isinstance(value, bytes) else value.encode("utf-8")


def entries(reply: StreamRangeResponse | None) -> list[Entry]:
    """The entries of an XRANGE or XREVRANGE reply (never None there: that is XCLAIM's)."""
    return [(entry_id, fields) for entry_id, fields in reply or ()
            if entry_id is not None and fields is not None]


def paged(reply: object) -> tuple[bool, list[Entry]]:
    """A page read by `scripts.RANGE`: whether it ended on its bytes (more may follow before
    its count), and its entries as XRANGE's (the script answers fields as a flat list)."""
    if not isinstance(reply, list) or len(reply) != 2 or not isinstance(reply[1], list):
        raise TypeError("RANGE answered something else than {more, entries}")
    more, found = reply
    out: list[Entry] = []
    for entry_id, flat in found:
        out.append((entry_id, dict(zip(flat[::2], flat[1::2], strict=True))))
    return bool(more), out


def xread(client: redis.Redis, after: Mapping[str, str], *, count: int,
          block: int | None) -> list[StreamNews]:
    """XREAD of the streams `after` names, each from the id after which to read; [] when
    nothing came within `block` milliseconds (None: do not wait)."""
    ids: dict[KeyT, StreamIdT] = {key: last for key, last in after.items()}
    reply: XReadResponse = client.xread(ids, count=count, block=block)
    if isinstance(reply, dict):
        raise TypeError("XREAD answered in RESP3: the store's client speaks RESP2")
    return [(key, entries(found)) for key, found in reply]
