"""The Redis layout: key names, session names (`host/id`), cursors, and the ACL that fits it.

With the default prefix `sv`:

| key | type | written by | what |
|---|---|---|---|
| `sv:hosts` | set | relays | the hosts that ever shipped a session |
| `sv:host:<host>` | hash | its relay | session id -> its position: `gen next seq ctl0` |
| `sv:ev:<host>/<id>` | stream | its relay | the session's `events.jsonl`, an entry per line |
| `sv:ctl:<host>/<id>` | stream | operators | decisions for the session (its `control.jsonl`) |
| `sv:activity` | stream | both | `s`=`host/id`, `k`=`e`/`c`/`g`: which session moved |
| `sv:mem:<digest>` | stream | relays | failure memory: `r` a record, `o` its host (`memory_sync`) |
| `sv:memprojects` | hash | relays | project digest -> the project's name |
| `sv:budget:<day>:<name>` | hash | relays | a fleet budget's day, per host (`budget_sync`) |

An entry of an event stream has `o` (the line's byte offset in the agent's file) and `l` (the
line as written), or `b` (why the line is unusable: too long), `l` (its first bytes) and `z`
(its size), or `r` (the file was truncated or replaced: generation `r` starts here). The
position of a session says which generation of its file was shipped up to which byte offset
(`next`), the last `seq` shipped, and the control stream's id when the session was registered
(`ctl0`: decisions before it were for an earlier session of that name).

A dashboard follows every session with one blocking read of `sv:activity` (entries name the
session, they carry no event: what a session says is only ever read from its own stream, which
only its host's relay may write). Trimmed entries of `sv:activity` are covered by a periodic
re-scan.
"""

from __future__ import annotations

from dataclasses import dataclass

from supervisor.store.errors import InvalidSessionId
from supervisor.store.paths import SESSION_ID_RE

ACTIVITY_MAXLEN = 100_000
"""About how many activity entries are kept (trimmed approximately, so it costs nothing)."""
PREVIEW_BYTES = 4096
"""What a stream holds of a line too long to be an event (its size travels with it): what a
relay ships of one, and what an operator's reader keeps of an entry too large to read."""
SEQ_BITS = 20
"""A cursor packs a stream id `ms-n` as `ms << 20 | n` (one int, 8 bytes in the history index)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """Key names under one prefix."""

    prefix: str

    @property
    def hosts(self) -> str:
        return f"{self.prefix}:hosts"

    @property
    def activity(self) -> str:
        return f"{self.prefix}:activity"

    def host(self, host: str) -> str:
        return f"{self.prefix}:host:{host}"

    def events(self, name: str) -> str:
        """The event stream of session `host/id`."""
        return f"{self.prefix}:ev:{name}"

    def control(self, name: str) -> str:
        """The control stream of session `host/id`."""
        return f"{self.prefix}:ctl:{name}"

    def acl_rules(self, role: str, host: str | None = None) -> str:
        """The key and command rules of a least-privilege ACL user (after `on >PASSWORD`):

        - `relay` (of one host): writes only its host's event streams, position hash and the
          activity stream; reads only its host's control streams. It may add to the host
          registry (`SADD`) but has no `DEL` (nor `SREM`): it cannot remove another host, nor
          the registry; a session that vanished is emptied with `XTRIM`. An activity entry
          saying a session is gone is believed only when that session's host hash (which only
          its relay may write) no longer has it. It shares the failure memory and the fleet's
          budgets with every other relay (`sv:mem:*`, `sv:budget:*`);
        - `operator`: reads every event stream and position; writes control streams (and the
          activity stream, so other dashboards see its decisions); reads and adds to the
          failure memory (`supervisor memory --store`: `forget`, `off`/`on`; `forget --all`
          trims a project's stream).

        Writing a stream (XADD) needs read-write key access in Redis (its optional trimming),
        so both roles may also read the activity stream: session names, nothing more."""
        p = self.prefix
        common = ("+ping +client|setname +evalsha +eval +script|load "
                  "+script|exists +xadd +xread +xrange +xrevrange +xlen +exists")
        if role == "relay":
            if host is None:
                raise ValueError("a relay's ACL is for one host")
            check_part(host, "host")
            return (f"resetkeys ~{p}:ev:{host}/* ~{p}:host:{host} ~{p}:activity ~{p}:hosts "
                    f"~{p}:mem:* ~{p}:memprojects ~{p}:budget:* "
                    f"%R~{p}:ctl:{host}/* resetchannels -@all {common} "
                    "+hget +hgetall +hset +hdel +sadd +xtrim +expire")
        if role == "operator":
            return (f"resetkeys %R~{p}:ev:* %R~{p}:host:* %R~{p}:hosts ~{p}:ctl:* "
                    f"~{p}:activity ~{p}:mem:* ~{p}:memprojects resetchannels -@all {common} "
                    "+hget +hgetall +hexists +hkeys +smembers +hset +xtrim")
        raise ValueError(f"unknown role {role!r} (relay, operator)")


def check_part(text: str, what: str) -> str:
    """A host name or session id: `[A-Za-z0-9][A-Za-z0-9._-]{0,127}`."""
    if not isinstance(text, str) or not SESSION_ID_RE.fullmatch(text):
        raise InvalidSessionId(
            f"invalid {what} {text!r}: use 1-128 letters, digits, '.', '_' or '-', starting "
            "with a letter or digit")
    return text


def split_name(name: str) -> tuple[str, str]:
    """`host/id` as its two validated parts."""
    host, sep, sid = name.partition("/") if isinstance(name, str) else ("", "", "")
    if not sep:
        raise InvalidSessionId(
            f"invalid session name {str(name)[:80]!r}: sessions in Redis are named HOST/ID "
            "(see `supervisor sessions --store URL`)")
    return check_part(host, "host name"), check_part(sid, "session id")


def session_name(host: str, session_id: str) -> str:
    return f"{host}/{session_id}"


def pack(entry_id: bytes | str) -> int:
    """A stream id (`ms-n`) as a cursor."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    ms, _, n = text.partition("-")
    seq = int(n or 0)
    if seq >> SEQ_BITS:
        raise ValueError(f"stream id {text} has a sequence part too large for a cursor")
    return (int(ms) << SEQ_BITS) | seq


def arrival(cursor: int) -> float:
    """When the entry at `cursor` reached Redis (epoch seconds): XADD `*` ids begin with the
    server's clock in milliseconds, whatever the clock of the host that wrote the line."""
    return (cursor >> SEQ_BITS) / 1000


def unpack(cursor: int) -> str:
    """A cursor as the stream id it packs."""
    return f"{cursor >> SEQ_BITS}-{cursor & ((1 << SEQ_BITS) - 1)}"
