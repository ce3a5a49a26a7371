"""What the hook platform remembers about a session between calls, beside the guard's state.

`<session>/hook.json`, read and written under `<session>/hook.lock` (an `flock`; several hook
calls of one session run at once): where the runtime stopped reading the agent's transcript,
the last assistant text it recorded (Stop's `last_assistant_message` repeats the transcript's),
the recent calls that went through PreToolUse (so PostToolBatch records only the others,
never a call twice), and, for agents that give a call no id (Gemini CLI), the ids given to calls
still waiting for their result, per tool and arguments, oldest first (`pair_call`,
`pair_result`), notes held back until a call's result for agents that take no context
before a call (`hold_note`), and the token counts already recorded from the agent's usage
record (`tally`), and the batch (the model answer) of calls the transcript showed before their
PreToolUse came (`issued`, `batch_of`). Bounded: the call ids kept are the last `CALLS_KEPT`,
the batches waiting for their calls the last `BATCHED_KEPT`.

The memory changes at nearly every call, so a save appends it as one JSON line instead of
replacing the file (a rename cost more than the rest of a resident server's step under I/O
load): the memory is the file's last whole line, and a save cut short by a kill leaves a part
line after it, which is skipped. The file is rewritten whole (atomically) when it passes
`FILE_LIMIT_BYTES`, and when the assistant's streamed text was dropped from the memory, so that
text does not stay behind in older lines.
"""

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from supervisor.hooks.usage import Tally, load_tally
from supervisor.protocol.bounded import loads
from supervisor.store import waits
from supervisor.store.paths import SessionFiles, write_private

MEMORY_FILE = "hook.json"
LOCK_FILE = "hook.lock"
CALLS_KEPT = 512
BATCHED_KEPT = 64
"""Calls read from the transcript whose PreToolUse has not come yet, kept with their batch (a
call the agent refused before its hook, for its input, never comes: the oldest go first)."""
DISPLAY_KEPT = 8
DISPLAY_BYTES = 256 * 1024
FILE_LIMIT_BYTES = 1024 * 1024
SESSIONS_KEPT = 256
"""Sessions whose memory a process keeps parsed (`remembered`)."""


@dataclass(slots=True)
class Memory:
    transcript: str | None = None
    """The transcript read so far (a different path starts over)."""
    offset: int = 0
    """Bytes of `transcript` already read."""
    mark: str | None = None
    """What identified those bytes when they were read (`transcript.mark`)."""
    last_text: str | None = None
    """The last assistant text recorded (a hash), so the same text is not recorded twice."""
    seen: list[str] = field(default_factory=list)
    """Call ids that went through PreToolUse, oldest first."""
    fresh: bool = True
    """True until the memory was saved once: the session is new to the hook platform."""
    waiting: dict[str, list[str]] = field(default_factory=dict)
    """Calls without an id of their own that await their result: pairing key -> ids, oldest
    first."""
    numbered: int = 0
    """Ids given so far (they are `<key>-<n>`, unique in the session)."""
    notes: dict[str, str] = field(default_factory=dict)
    """call id -> a note for the model held back until the call's result, for agents that
    take no context before a call runs (`Target.context_before_call`)."""
    display: dict[str, str] = field(default_factory=dict)
    """message id -> the assistant's text streamed so far (Claude Code's MessageDisplay), until
    the message's final flush."""
    displays: bool = False
    """The agent gives the assistant's text to a hook (MessageDisplay): its transcript is not
    read for it any more (the two would record the same text twice); usage still is."""
    tally: Tally = field(default_factory=Tally)
    """The token counts already recorded per key of the agent's usage record
    (`supervisor.hooks.usage`)."""
    model: str | None = None
    """The model the agent's record last named apart from its counts (Codex's turn context)."""
    usage_warned: bool = False
    """A usage line that could not be counted was reported (once per session)."""
    batched: dict[str, str] = field(default_factory=dict)
    """call id -> its batch (the id of the model answer that issued it), for calls the
    transcript showed whose PreToolUse has not come yet, oldest first."""
    unasked: str | None = None
    """The last call that went through PreToolUse before the transcript showed the answer that
    asked for it, while that answer is still unread (`ask`; `issued` clears it). Only the last:
    each PreToolUse waits for the one before it (or gives up on it) before it becomes it."""
    names_calls: bool = False
    """The transcript followed has shown the answer asking for a call of this session: it names
    the session's calls, so one missing there is an answer not written yet (a transcript that
    never names them, a subagent's, a changed format, is never waited on)."""

    def displayed(self, message_id: str, delta: str) -> None:
        """Keep a flush of a message's text (bounded: `DISPLAY_KEPT` messages, each cut at
        `DISPLAY_BYTES`)."""
        self.displays = True
        text = self.display.pop(message_id, "") + delta
        self.display[message_id] = text[:DISPLAY_BYTES]
        while len(self.display) > DISPLAY_KEPT:
            del self.display[next(iter(self.display))]

    def issued(self, call_ids: list[str], batch: str) -> None:
        """Calls one answer issued, as its transcript line shows them (`batch_of` takes them);
        not those whose PreToolUse came before the line (`seen`): none will take them."""
        for call_id in call_ids:
            if call_id not in self.seen:
                self.batched[call_id] = batch
            if call_id == self.unasked:
                self.unasked, self.names_calls = None, True
        while len(self.batched) > BATCHED_KEPT:
            del self.batched[next(iter(self.batched))]

    def ask(self, call_id: str, asked: bool) -> None:
        """A call went through PreToolUse; `asked`: the answer that asked for it was read."""
        if asked:
            self.names_calls = True
        self.unasked = None if asked else call_id

    def batch_of(self, call_id: str) -> str | None:
        """The batch of a call the transcript showed (None: not shown yet, or never)."""
        return self.batched.pop(call_id, None)

    def saw(self, call_id: str) -> bool:
        return call_id in self.seen

    def see(self, call_id: str) -> None:
        if call_id not in self.seen:
            self.seen.append(call_id)
            del self.seen[:-CALLS_KEPT]

    def pair_call(self, key: str) -> str:
        """A new id for a call the agent gave none, waiting for its result under `key`."""
        self.numbered += 1
        call_id = f"{key}-{self.numbered}"
        self.waiting.setdefault(key, []).append(call_id)
        while sum(len(ids) for ids in self.waiting.values()) > CALLS_KEPT:
            oldest = min(self.waiting, key=lambda k: _number(self.waiting[k][0]))
            self.waiting[oldest].pop(0)
            if not self.waiting[oldest]:
                del self.waiting[oldest]
        return call_id

    def pair_result(self, key: str) -> str | None:
        """The id of the oldest call under `key` still waiting for its result (None: none)."""
        ids = self.waiting.get(key)
        if not ids:
            return None
        call_id = ids.pop(0)
        if not ids:
            del self.waiting[key]
        return call_id

    def hold_note(self, call_id: str, text: str) -> None:
        self.notes[call_id] = text
        while len(self.notes) > CALLS_KEPT:
            del self.notes[next(iter(self.notes))]

    def take_note(self, call_id: str) -> str | None:
        return self.notes.pop(call_id, None)

    def unpair(self, key: str, call_id: str) -> None:
        """A call that will get no result (it was refused before it ran)."""
        ids = self.waiting.get(key, [])
        if call_id in ids:
            ids.remove(call_id)
        if not ids:
            self.waiting.pop(key, None)


def _number(call_id: str) -> int:
    """The `<n>` of an id `<key>-<n>` (0 for anything else)."""
    tail = call_id.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else 0


_Stamp = tuple[int, int, int] | None
_kept: dict[Path, tuple[_Stamp, Memory, tuple[object, ...]]] = {}
"""file -> (its stamp when last read or written here, the memory it holds, its `_values` as
saved): in the resident server, a session's memory is parsed again only when another process
changed it."""


@contextlib.contextmanager
def remembered(files: SessionFiles) -> Iterator[Memory]:
    """The session's memory, held under its lock; saved (atomically) when the block ends
    without an exception."""
    lock, path = files.file(LOCK_FILE), files.file(MEMORY_FILE)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        waits.flock(fd, "the session's hook memory")
        known = _kept.pop(path, None)  # put back only when the block ends well
        if known is not None and known[0] == _stamp(path):
            _, memory, before = known
        else:
            memory = _load(path)
            before = _values(memory)
        shown = set(memory.display)
        yield memory
        memory.fresh = False
        after = _values(memory)
        if after != before:  # (JSON of the whole memory only when it changed)
            _save(path, _dump(memory), whole=not shown <= set(memory.display))
        stamp = _stamp(path)
        if stamp is not None:
            if len(_kept) >= SESSIONS_KEPT:
                _kept.clear()
            _kept[path] = (stamp, memory, after)
    finally:
        os.close(fd)  # releases the lock


def peek(files: SessionFiles) -> Memory | None:
    """The session's memory as last saved, to read and not to change (None: none saved yet),
    without its lock: for a question a stale answer cannot make wrong, such as whether a call
    went through PreToolUse (`seen` only grows, so an older memory can only say no, and the
    caller then asks again under the lock). In the resident server, one `stat`: the memory
    kept parsed (`_kept`) when no other process changed the file since."""
    path = files.file(MEMORY_FILE)
    stamp = _stamp(path)
    if stamp is None:
        return None
    known = _kept.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    return _load(path)


def _stamp(path: Path) -> _Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _load(path: Path) -> Memory:
    try:
        data = _last_whole(path.read_bytes())
    except OSError:
        return Memory()  # none yet, or unreadable: start over (the worst is one text twice)
    if not isinstance(data, dict):
        return Memory()
    seen = data.get("seen")
    offset = data.get("offset")
    waiting = data.get("waiting")
    numbered = data.get("numbered")
    notes = data.get("notes")
    display = data.get("display")
    batched = data.get("batched")
    unasked = data.get("unasked")
    return Memory(
        transcript=data.get("transcript") if isinstance(data.get("transcript"), str) else None,
        offset=offset if isinstance(offset, int) and offset >= 0 else 0,
        mark=data.get("mark") if isinstance(data.get("mark"), str) else None,
        last_text=data.get("last_text") if isinstance(data.get("last_text"), str) else None,
        seen=[s for s in seen if isinstance(s, str)][-CALLS_KEPT:] if isinstance(seen, list)
        else [],
        fresh=False,
        waiting={k: [i for i in v if isinstance(i, str)] for k, v in waiting.items()
                 if isinstance(v, list)} if isinstance(waiting, dict) else {},
        numbered=numbered if isinstance(numbered, int) and numbered >= 0 else 0,
        notes={k: v for k, v in notes.items() if isinstance(v, str)}
        if isinstance(notes, dict) else {},
        display={k: v for k, v in display.items() if isinstance(v, str)}
        if isinstance(display, dict) else {},
        displays=data.get("displays") is True,
        tally=load_tally(data.get("tally")),
        model=data.get("model") if isinstance(data.get("model"), str) else None,
        usage_warned=data.get("usage_warned") is True,
        batched={k: v for k, v in batched.items() if isinstance(v, str)}
        if isinstance(batched, dict) else {},
        unasked=unasked if isinstance(unasked, str) else None,
        names_calls=data.get("names_calls") is True,
    )


_SORTED = json.JSONEncoder(sort_keys=True)
"""`json.dumps(..., sort_keys=True)` without making an encoder at every save."""


def _dump(memory: Memory) -> str:
    return _SORTED.encode({
        "transcript": memory.transcript, "offset": memory.offset, "mark": memory.mark,
        "last_text": memory.last_text, "seen": memory.seen, "waiting": memory.waiting,
        "numbered": memory.numbered, "notes": memory.notes, "display": memory.display,
        "displays": memory.displays, "tally": memory.tally.dump(), "model": memory.model,
        "usage_warned": memory.usage_warned, "batched": memory.batched,
        "unasked": memory.unasked, "names_calls": memory.names_calls})


def _values(memory: Memory) -> tuple[object, ...]:
    """What `_dump` would write, as values to compare: whether the memory changed in a block,
    told without encoding all of it (its `seen` alone is up to `CALLS_KEPT` ids) at every
    block. The containers are copied (a block changes them in place); their items are
    strings, numbers and lists of numbers that are replaced, never changed."""
    return (memory.transcript, memory.offset, memory.mark, memory.last_text, list(memory.seen),
            {k: list(v) for k, v in memory.waiting.items()}, memory.numbered,
            dict(memory.notes), dict(memory.display), memory.displays,
            {k: list(v) for k, v in memory.tally.dump().items()}, memory.model,
            memory.usage_warned, dict(memory.batched), memory.unasked, memory.names_calls)


def _last_whole(raw: bytes) -> object:
    """The memory a file holds: its last line that parses (None: none does)."""
    for line in reversed(raw.split(b"\n")):
        if line.strip():
            try:
                return loads(line)
            except ValueError:  # a save cut short, or too deep
                continue
    return None


def _save(path: Path, text: str, whole: bool) -> None:
    """Append the memory as a line; rewrite the file with it alone when `whole`, when the file
    is new or when it passed `FILE_LIMIT_BYTES`."""
    data = text.encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
    except FileNotFoundError:
        whole = True
    else:
        try:
            if not whole and os.fstat(fd).st_size + len(data) < FILE_LIMIT_BYTES:
                line = memoryview(b"\n" + data + b"\n")  # (the older format ends without one)
                while line:
                    line = line[os.write(fd, line):]
                return
            whole = True
        finally:
            os.close(fd)
    write_private(path, data + b"\n")
