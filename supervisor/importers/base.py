"""What every importer shares: what an importer is, the imported run, the format error, and
the event builder.

An importer turns one recorded run of another agent framework into protocol events, as plain
dicts in order; its module says so in one `Importer` (name, description, `matches`, `load`),
which `supervisor.importers.IMPORTERS` lists. `RunBuilder` keeps the mechanics in one place so
each format module only says what maps to what: call ids, output size and hash of the whole
output, truncation of what would not fit in one protocol line, `seq` 1..n, and time stamps
(recorded where the format has them, else synthetic and monotonic, which `meta["ts"]` says).
"""

from __future__ import annotations

import json
import marshal
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from supervisor.engine.fingerprint import output_hash
from supervisor.engine.tools import ToolVocabulary, contribute
from supervisor.protocol.bounded import loads
from supervisor.protocol.lines import fit_line
from supervisor.protocol.names import (
    MAX_LINE_BYTES,
    MAX_NUMBER,
    MAX_TS,
    MESSAGE,
    SESSION_END,
    SESSION_START,
    TOOL_CALL,
    TOOL_RESULT,
    USAGE,
)

OUTPUT_LIMIT = 64 * 1024
"""Bytes of a tool output kept in `tool_result.output`; size and hash cover the whole output."""
TEXT_LIMIT = 64 * 1024
"""Bytes kept of one message text (prompts can be huge; the analysis needs their start)."""
LINE_BUDGET = MAX_LINE_BYTES - 4096
"""An event whose line would exceed this is cut until it fits (`protocol.lines.fit_line`)."""
SYNTHETIC_STEP = 0.001
"""Seconds between consecutive events when the format records no time at all."""
TASK_LIMIT = 200
SPOOL_BATCH = 256
"""Events spooled together (kept in memory until the batch is written)."""
SPOOL_MEMORY = 4 * 1024 * 1024
"""Bytes of a run's events kept in memory before its spool moves to an unlinked temporary
file (private to this process: nothing else can open it)."""

if TYPE_CHECKING:  # document.py imports FormatError from here
    from supervisor.importers.document import Document


class FormatError(Exception):
    """A file that is not a run of a known format, or is broken: one clear line of text."""


class UnknownFormat(FormatError):
    """A readable JSON file whose content matches no format. Found while searching a
    directory, such a file (`preds.json`, `metadata.json`) is skipped rather than an error."""


@dataclass
class ImportedRun:
    """One recorded run of another framework, as protocol events.

    `name` is a valid session id; `events` are plain dicts with `v`, `seq` 1..n, `ts` and
    `type`, in order; `meta` holds what the format records about the run as a whole (exit
    status, model, instance id, ...) and how time stamps were made (`meta["ts"]`).
    """

    name: str
    source: Path
    format: str
    events: list[dict[str, Any]]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        """The number of tool calls in the run."""
        return sum(1 for e in self.events if e["type"] == TOOL_CALL)


def whole_value(document: Document) -> Any:
    """What most formats read of a file: its one JSON value (the list of lines of JSON Lines)."""
    return document.value


def records(document: Document) -> Sequence[Any]:
    """What line formats read of a file: its records, even when it holds a single line (which
    parses as one JSON document)."""
    return document.records()


@dataclass(frozen=True, slots=True)
class Importer:
    """One foreign format, as `load_runs` and `detect_format` use it (docs/importers.md)."""

    name: str
    """Its name for `--format`, e.g. `swe-agent`."""
    description: str
    """What it is, for people (`supervisor import --help`)."""
    matches: Callable[[Any], bool]
    """Whether what it reads of a file is of this format, judged by content (an odd shape may
    raise: taken as no)."""
    load: Callable[[Any, Path], Iterable[SpooledRun]]
    """The runs in what it reads of the file at the path, built one at a time as they are
    taken; `FormatError` when it is broken."""
    reads: Callable[[Document], Any] = whole_value
    """What `matches` and `load` take of the parsed file (`whole_value`, `records`, ...)."""
    tools: ToolVocabulary | None = None
    """The format's tool names and argument keys the engine's shared vocabulary lacks or shares
    (`engine/tools.py`): contributed when the importer is built, so on importing its module
    (`supervisor.importers` imports every one); a name another contributor reads otherwise
    fails that import, naming both."""

    def __post_init__(self) -> None:
        if self.tools is not None:
            contribute(self.name, self.tools)


def output_fields(text: str, limit: int = OUTPUT_LIMIT) -> dict[str, Any]:
    """`output` (truncated to `limit` bytes), `output_bytes` and `output_hash` of the whole."""
    data = text.encode("utf-8", "replace")
    fields: dict[str, Any] = {
        "output": text if len(data) <= limit else data[:limit].decode("utf-8", "ignore"),
        "output_bytes": len(data),
        "output_hash": output_hash(text),
    }
    if len(data) > limit:
        fields["output_truncated"] = True
    return fields


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    """`text` cut to at most `limit` UTF-8 bytes (on a character boundary)."""
    if len(text) <= limit // 4:
        return text
    data = text.encode("utf-8", "replace")
    return text if len(data) <= limit else data[:limit].decode("utf-8", "ignore")


def first_line(text: Any, limit: int = TASK_LIMIT) -> str | None:
    """The first non-blank line of `text`, stripped and cut to `limit` characters."""
    if not isinstance(text, str) or not text:
        return None
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line[:limit]
    return None


def sanitize_name(raw: str) -> str:
    """A valid session id from any text (same rule as the store's `sanitize_session_id`)."""
    out = []
    dash = False
    for ch in raw:
        if ch.isascii() and (ch.isalnum() or ch in "._-"):
            out.append(ch)
            dash = False
        elif not dash:
            out.append("-")
            dash = True
    cleaned = "".join(out).strip("._-")[:128].rstrip("._-")
    return cleaned or "run"


def run_name(path: Path, *candidates: Any) -> str:
    """The session name: the first usable candidate (instance id, session id), else the stem."""
    for cand in candidates:
        if isinstance(cand, str | int) and not isinstance(cand, bool) and str(cand).strip():
            return sanitize_name(str(cand))
    stem = path.name
    for suffix in (".traj.json", ".traj", ".jsonl", ".json"):
        if stem.endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
            break
    return sanitize_name(stem)


def as_text(value: Any) -> str:
    """Text of a message content: a string, a list of text blocks, or anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append(item["text"])
            elif isinstance(item, dict) and "content" in item:
                parts.append(as_text(item["content"]))
            elif isinstance(item, dict) and item.get("type") in ("image", "image_url"):
                parts.append("[image]")
            else:
                parts.append(json.dumps(item, ensure_ascii=False, default=str))
        return "\n".join(parts)
    return json.dumps(value, ensure_ascii=False, default=str)


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if it is an object, else an empty one (recorded files are not always regular)."""
    return value if isinstance(value, dict) else {}


def as_str(value: Any) -> str:
    """`value` if it is a string, else an empty one."""
    return value if isinstance(value, str) else ""


def as_list(value: Any) -> list[Any]:
    """`value` if it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def parse_json_args(raw: Any) -> dict[str, Any]:
    """Tool-call arguments: a JSON object string (as LLM APIs record them) or a dict."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = loads(raw, constants=True)
        except ValueError:
            return {"raw_arguments": raw}
        return value if isinstance(value, dict) else {"raw_arguments": raw}
    return {} if raw is None else {"raw_arguments": raw}


def iso_ts(value: Any) -> float | None:
    """Unix seconds of a time stamp: ISO 8601 (naive ones are taken as UTC) or a number.

    None for anything else, for times not after 1970 (no recorded run is that old) and for
    times past the protocol's `MAX_TS` (milliseconds or nanoseconds, or garbage)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = number(value)
    elif isinstance(value, str) and value:
        try:
            stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=UTC)
        try:
            seconds = stamp.timestamp()
        except (OverflowError, ValueError, OSError):
            return None
    else:
        return None
    return seconds if seconds is not None and 0 < seconds <= MAX_TS else None


def number(value: Any) -> float | None:
    """A finite number within the protocol's bounds (`MAX_NUMBER`), or None (booleans and
    strings are not numbers here, and a 400-digit count is no count)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int):
        return float(value) if abs(value) <= MAX_NUMBER else None
    return value if value == value and abs(value) <= MAX_NUMBER else None


def uncached(total_input: Any, cached: Any) -> float | None:
    """The input not read from the cache, for a format whose input count holds the cached
    tokens (OpenAI's and Gemini's): `RunBuilder.usage` takes that, and the cached part apart."""
    whole = number(total_input)
    return None if whole is None else whole - min(number(cached) or 0, whole)


class RunBuilder:
    """Collects the events of one run in order; `build()` numbers and times them.

    `ts` given to an event is the time the format recorded for it (Unix seconds); events
    without one take the previous recorded time (or the first, for leading ones). A run with
    no recorded time at all gets synthetic, monotonic stamps `SYNTHETIC_STEP` apart starting at
    `synthetic_base` (the file's modification time), and `meta["ts"] == "synthetic"`.

    Events go to a spool as they come (`SpooledRun`), not to a list: a run of a million steps
    costs the memory of one event, plus the call ids the format recorded (kept so that they
    stay unique in the run). The `session_start`, which formats know only at the end (its
    task, its cwd, the run's totals), is kept aside and comes first when the run is read.
    """

    def __init__(self, fmt: str, source: Path) -> None:
        self.format = fmt
        self.source = source
        self._spool: IO[bytes] = tempfile.SpooledTemporaryFile(  # noqa: SIM115 - the run's
            max_size=SPOOL_MEMORY)  # lifetime, closed by `SpooledRun.close`
        self._start: dict[str, Any] | None = None
        self._batch: list[dict[str, Any]] = []
        self._count = 0
        self._calls = 0
        self._first_ts: float | None = None
        self._last_ts: float | None = None
        self._steps_timed = True
        self._open_calls: set[str] = set()
        self._native_ids: set[str] = set()
        self._counter = 0

    # -- events ---------------------------------------------------------------------------
    def add(self, type_: str, ts: float | None = None, **fields: Any) -> None:
        event: dict[str, Any] = {"type": type_, **fields}
        if ts is None:
            if type_ in (TOOL_CALL, TOOL_RESULT):
                self._steps_timed = False
            event["ts"] = self._last_ts  # None before the first recorded time: see build()
        else:
            if self._first_ts is None:
                self._first_ts = ts
            self._last_ts = event["ts"] = ts
        if type_ == TOOL_CALL:
            self._calls += 1
        self._batch.append(event)
        self._count += 1
        if len(self._batch) >= SPOOL_BATCH:
            self._flush()

    def _flush(self) -> None:
        """Write the waiting events to the spool as one length-prefixed record (one read
        each way per batch: `marshal.load` on a file reads in a few bytes at a time)."""
        if self._batch:
            data = marshal.dumps(self._batch)
            self._spool.write(len(data).to_bytes(8, "little") + data)
            self._batch = []

    def session_start(
        self, agent: str, task: str | None, cwd: str | None = None, ts: float | None = None,
        **extra: Any,
    ) -> None:
        fields = {"agent": agent, "task": first_line(task),
                  "cwd": cwd if isinstance(cwd, str) else None, "pid": None,
                  "policy": None, "heartbeat_s": None}
        self._start = {"type": SESSION_START, "ts": ts, **fields, **extra}

    def session_end(self, status: str, reason: str | None, ts: float | None = None) -> None:
        self.add(SESSION_END, ts, status=status, reason=first_line(reason, 500))

    def message(self, role: str, text: Any, ts: float | None = None, **extra: Any) -> None:
        body = as_text(text)
        if body.strip():
            self.add(MESSAGE, ts, role=role, text=clip(body), **extra)

    def new_call_id(self, native: Any = None) -> str:
        self._counter += 1
        if isinstance(native, str | int) and not isinstance(native, bool) and str(native):
            return str(native)
        return f"step-{self._counter}"

    def tool_call(
        self, tool: str, args: dict[str, Any], call_id: Any = None, ts: float | None = None,
        **extra: Any,
    ) -> str:
        native = isinstance(call_id, str | int) and not isinstance(call_id, bool) and bool(
            str(call_id))
        cid = self.new_call_id(call_id)
        if native:  # a reused (or step-like) native id is renamed: ids stay unique in the run
            if cid in self._native_ids or _GENERATED.fullmatch(cid):
                cid = f"{cid}-{self._counter}"
                while cid in self._native_ids:
                    cid += "-2"
            self._native_ids.add(cid)
        self._open_calls.add(cid)
        self.add(TOOL_CALL, ts, call_id=cid, tool=tool, args=args, **extra)
        return cid

    def tool_result(
        self, call_id: str, ok: bool, output: Any, error: str | None = None,
        duration_ms: float | None = None, ts: float | None = None, **extra: Any,
    ) -> None:
        self._open_calls.discard(call_id)
        text = as_text(output)
        self.add(TOOL_RESULT, ts, call_id=call_id, ok=bool(ok), **output_fields(text),
                 error=None if ok else (first_line(error, 500) or "error"),
                 duration_ms=duration_ms, **extra)

    def has_open_call(self, call_id: str) -> bool:
        return call_id in self._open_calls

    def usage(
        self, input_tokens: Any, output_tokens: Any, cost_usd: Any, ts: float | None = None,
        cache_read: Any = None, cache_write: Any = None,
    ) -> None:
        """A `usage` event, unless the format recorded nothing (all zero or missing).
        `input_tokens` are the input *not* read from the provider's cache, as the protocol says
        (the `tokens` limit counts them): a format that counts the cached input inside its input
        gives `input - cached` here and the cached part as `cache_read`, or a long session's
        re-reads of the same context would reach the limit without a loop."""
        tin = int(number(input_tokens) or 0)
        tout = int(number(output_tokens) or 0)
        cached = {name: int(value) for name, value in (
            ("cache_read_tokens", number(cache_read)), ("cache_write_tokens", number(cache_write)))
            if value is not None and value > 0}
        cost = number(cost_usd)
        if tin <= 0 and tout <= 0 and not cached and not cost:
            return
        self.add(USAGE, ts, input_tokens=max(tin, 0), output_tokens=max(tout, 0),
                 **cached, cost_usd=cost)

    # -- result ---------------------------------------------------------------------------
    def build(self, name: str, meta: dict[str, Any]) -> SpooledRun:
        """The run, read from the spool when its events are walked (`SpooledRun.events`)."""
        start = self._start
        first = start["ts"] if start is not None and start["ts"] is not None else self._first_ts
        if first is not None:
            meta.setdefault("ts", "recorded" if self._steps_timed else "partial")
        else:
            meta.setdefault("ts", "synthetic")
        meta.setdefault("steps", self._calls)
        if start is not None:  # where the run came from, for readers
            start = {**start, "imported": _finite({"format": self.format,
                                                   "source": str(self.source), **meta})}
        self._flush()
        return SpooledRun(name=name, source=self.source, format=self.format, meta=meta,
                          steps=self._calls, count=self._count + (start is not None),
                          _start=start, _spool=self._spool, _spooled=self._count,
                          _first_ts=first, _base=None if first is not None else _mtime(
                              self.source))


_GENERATED = re.compile(r"step-\d+")
"""The call ids `RunBuilder` makes up: a native id of that shape is renamed, never shared."""


@dataclass
class SpooledRun:
    """One imported run whose events are read from its builder's spool, in order, numbered
    and timed, each fitted to one protocol line: `events()` walks them (as often as wanted),
    `imported()` makes them the list of an `ImportedRun`. The spool is a temporary file once
    the run outgrows memory: `close()` it (or use the run as a context manager) when done."""

    name: str
    source: Path
    format: str
    meta: dict[str, Any]
    steps: int
    """The number of tool calls in the run."""
    count: int
    """The number of events in the run."""
    _start: dict[str, Any] | None
    _spool: IO[bytes]
    _spooled: int
    _first_ts: float | None
    _base: float | None

    def events(self) -> Iterator[dict[str, Any]]:
        """The run's events, one at a time (`v`, `seq` 1..n, `ts`, `type`, ...)."""
        seq = 0
        last = self._first_ts

        def line(event: dict[str, Any]) -> dict[str, Any]:
            nonlocal seq, last
            ts = event.pop("ts")
            if self._base is not None:  # no recorded time at all: synthetic, monotonic
                ts = round(self._base + seq * SYNTHETIC_STEP, 6)
            elif ts is None:
                ts = last
            last = ts
            seq += 1
            return _fit({"v": 1, "seq": seq, "ts": float(ts), **event})

        if self._start is not None:
            yield line(dict(self._start))
        self._spool.seek(0)
        left = self._spooled
        while left > 0:
            size = int.from_bytes(self._spool.read(8), "little")
            batch = marshal.loads(self._spool.read(size))
            left -= len(batch)
            for event in batch:
                yield line(event)

    def close(self) -> None:
        """Let the spool go (its file, if it had one); `events()` cannot be walked after."""
        self._spool.close()

    def __enter__(self) -> SpooledRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def imported(self) -> ImportedRun:
        """The run with its events in a list (memory in proportion to the run)."""
        return ImportedRun(name=self.name, source=self.source, format=self.format,
                           events=list(self.events()), meta=self.meta)


def _mtime(path: Path) -> float:
    try:
        return float(int(path.stat().st_mtime))
    except OSError:
        return 1.0


def _fit(event: dict[str, Any]) -> dict[str, Any]:
    """The event as one protocol line holds it: cut to `LINE_BUDGET` by the writers' bounded
    encoder (values JSON cannot carry, such as NaN in recorded arguments, become null)."""
    if _surely_fits(event, LINE_BUDGET):
        return event
    try:
        return fit_line(event, max_bytes=LINE_BUDGET)[1]
    except (TypeError, ValueError):
        return fit_line(_finite(event), max_bytes=LINE_BUDGET)[1]


def _surely_fits(event: dict[str, Any], budget: int) -> bool:
    """True when the event's JSON is certainly under `budget` bytes and `fit_line` would keep
    it as it is, so it skips a trial encoding: at most 6 bytes (an escape) per character of
    its text, and values nested one level at most (a tool call's arguments), holding only
    text, small numbers, booleans and nulls, with no lone surrogates in any of its text (the
    trial encoding would escape them). Anything else is left to the trial encoding."""
    nested = False
    for value in event.values():
        if isinstance(value, str):
            budget -= 6 * len(value) + 64
        elif isinstance(value, _NESTED):
            size = _flat_size(value)
            if size < 0:
                return False
            budget -= size
            nested = True
        elif isinstance(value, float) and not -_INFINITY < value < _INFINITY:
            return False  # not JSON (NaN, infinities): the trial encoding decides
        else:
            budget -= 64
    if nested and not all(_encodable(v) for v in event.values() if isinstance(v, str)):
        return False
    return budget > 0


_NESTED = (dict, list)
_INFINITY = float("inf")


def _flat_size(value: dict[Any, Any] | list[Any]) -> int:
    """An upper bound of the bytes of a container of plain values; -1 when it holds anything
    else (containers, text with lone surrogates, huge or non-finite numbers, odd keys)."""
    size = 64
    for key, item in value.items() if isinstance(value, dict) else enumerate(value):
        if isinstance(key, str):
            if not _encodable(key):
                return -1
            size += 6 * len(key)
        elif not isinstance(value, list):
            return -1
        if isinstance(item, str):
            if not _encodable(item):
                return -1
            size += 6 * len(item) + 64
        elif item is None or isinstance(item, bool) or (
                isinstance(item, (int, float)) and -_SMALL < item < _SMALL):
            size += 64
        else:
            return -1  # nested deeper, NaN, a huge number, or not JSON at all
    return size


_SMALL = 10**15
"""Numbers within this many are written in under 64 bytes."""


def _encodable(text: str) -> bool:
    """Whether `text` is UTF-8 as it is (no lone surrogates)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _finite(value: Any) -> Any:
    """`value` with non-finite floats as None and non-JSON values as text."""
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if value is None or isinstance(value, str | int | bool):
        return value
    return str(value)
