"""Which local user is at the other end of a TCP connection: the one check the HTTP hook
transport and `supervisor web` share (docs/security.md, "Another local user").

A Unix socket has its peer's credentials (`SO_PEERCRED`); a TCP connection does not, but on
Linux the kernel lists every TCP socket with its owner's uid in `/proc/net/tcp` (IPv4) and
`/proc/net/tcp6` (IPv6). A caller on this machine has a socket whose local address is the
connection's client end and whose remote address is the server end: its `uid` column is the
caller's user. A caller on another machine has no such line. Stdlib only.
"""

from __future__ import annotations

import ipaddress
import socket

TABLES = ("/proc/net/tcp", "/proc/net/tcp6")

LOCAL_PEER_UNKNOWN = -1
"""`peer_uid`'s answer when no socket of this machine is the connection's other end."""


def peer_uid(client: tuple[str, int] | object, server: tuple[str, int] | object
             ) -> int | None:
    """The uid owning the TCP socket at `client` connected to `server`, from `/proc/net/tcp`
    and `/proc/net/tcp6`; `LOCAL_PEER_UNKNOWN` (-1) when the tables have no such socket (a
    caller on another machine, or one already gone), None where it cannot be known (no
    /proc: other systems).

    An IPv4 caller of a dual-stack (`::`) server is seen by the server as `::ffff:a.b.c.d`
    while its own socket is listed in `/proc/net/tcp` with the plain IPv4 addresses: both
    forms are looked up."""
    try:
        client_host, client_port = client[0], int(client[1])  # type: ignore[index]
        server_host, server_port = server[0], int(server[1])  # type: ignore[index]
        wanted = {(f"{_hex(c)}:{client_port:04X}", f"{_hex(s)}:{server_port:04X}")
                  for c in _forms(client_host) for s in _forms(server_host)}
    except (ValueError, TypeError, IndexError):
        return None
    readable = False
    for path in TABLES:
        try:
            with open(path, encoding="ascii") as table:
                readable = True
                for line in table:
                    fields = line.split()
                    if len(fields) > 7 and (fields[1], fields[2]) in wanted:
                        return int(fields[7])
        except OSError:
            continue
        except ValueError:
            return None
    return LOCAL_PEER_UNKNOWN if readable else None


def can_tell() -> bool:
    """Whether this system lists its TCP sockets' owners (Linux)."""
    try:
        with open(TABLES[0], "rb"):
            return True
    except OSError:
        return False


def _forms(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """`host` and, for an IPv4-mapped IPv6 address, its IPv4 form (and the other way)."""
    address = ipaddress.ip_address(host.split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return [address, address.ipv4_mapped]
    if isinstance(address, ipaddress.IPv4Address):
        return [address, ipaddress.IPv6Address(f"::ffff:{address}")]
    return [address]


def _hex(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """An address as `/proc/net/tcp{,6}` writes it: each 32-bit word in host byte order."""
    packed = address.packed
    words = [packed[i:i + 4] for i in range(0, len(packed), 4)]
    little = socket.htonl(1) != 1
    return "".join(int.from_bytes(w, "big").to_bytes(4, "little" if little else "big")
                   .hex().upper() for w in words)
