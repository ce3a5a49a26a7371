"""The failure memory of a project: what failed in its earlier sessions, and what worked then.

Pure (no I/O, no clock: times are the events' own). Three parts, each used the same way live
(`supervisor.guard.memory`) and in the benchmark's replay:

- `Learner` turns a session's completed steps into **records** (plain JSON dicts): a `fail`
  when a call failed with an error the engine can name (its error identity is not empty, and it
  is not a test runner's report of the bug under repair, nor a time-out: those change by
  themselves), a `fix` when, within `FIX_WINDOW` steps, the same call succeeded (`retry`: what
  succeeded just before it is what changed) or another call of the same tool on the same file
  did (`instead`), a `passed` when the same call succeeded later in the session (after the
  window: the failure depended on a state that changed), and an `ok` when a remembered call
  succeeded in a session where it had not failed, with its files as they were (the pitfall is
  gone, until it fails again).
- `MemoryIndex` folds records, in the order written, into **entries**: one per failure class,
  keyed by the call's `memory_key` (the engine's own call signature; for a shell, the run its
  command line makes, whichever agent's shell tool ran it and through whichever output
  filter) and error identity (`entry_id`), with how often, when, in which sessions (`#seq`
  evidence), the last fixes; and an index by signature, so the
  check before a call is one dict lookup whatever the size of the memory.
- `warning` and `pitfalls` word what is told to the agent: the supervisor's sentences around
  quotations (`safetext.quote`) of what the agent's tools printed and ran, so an entry can never
  speak in the supervisor's voice. Excerpts are cut and redacted (`supervisor.redact`) when
  they are learned: nothing else of a tool's output is kept.

Records also carry `forget` (one entry, or `*` for all) and `switch` (memory on or off for the
project), so the operator's choices travel with the memory (a fleet's hosts replay the same
log).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import xxhash

from supervisor.engine.failures import is_test_report
from supervisor.engine.fingerprint import TRANSIENT_ERROR_CLASSES, call_signature
from supervisor.engine.shell import run_text
from supervisor.engine.step import StepRecord
from supervisor.engine.tools import vocabulary
from supervisor.redact import redact
from supervisor.safetext import clean, quote

FIX_WINDOW = 6
"""Steps after a failure within which a success counts as its fix."""
RECUR_SESSIONS = 2
"""Earlier sessions a failure must have happened in before it is told, when the same call
succeeded after it (see `Entry.worth_telling`)."""
OPEN_KEPT = 8
EXCERPT_CHARS = 160
"""Characters of a call or an error line kept in a record (after redaction)."""
SESSIONS_KEPT = 8
SEQS_KEPT = 4
FIXES_KEPT = 3
PITFALLS = 3
"""Entries offered at a session's start, at most."""
PITFALLS_CHARS = 1200
DAY_S = 86400.0
HALF_LIFE_S = 7 * DAY_S
"""Recency weight of an entry at a session's start: halved every week since its last failure."""
SCRIPT_MARK = "run:"
"""Marks the part of a call's file state that is a script it runs (`guard.memory.files_key`)."""
ENVIRONMENT_ERRORS = frozenset({"command_not_found", "module_not_found"})
"""Error classes that say the environment lacks something (a program, a module), whatever
script the call runs: told even when the script is another."""
_CALL_KEYS = ("command", "cmd", "file_path", "path", "filePath", "absolute_path", "pattern",
              "url", "query")


def memory_key(step: StepRecord) -> str:
    """What the memory knows a call by: for a shell tool, the run its command line makes
    (`shell.run_text`: the line without the output filters it ends with, so `pytest -x 2>&1 |
    tail -30` and `pytest -x | grep FAIL` are the one run `pytest -x`, as the engine's
    `StepRecord.run` reads them), whatever the agent calls its shell and however it passes the
    line (Claude Code's `Bash {command}`, Codex's `exec_command {cmd}` and `shell {command:
    ["bash", "-lc", line]}`, in the vocabulary of `supervisor.engine.tools`), so a pitfall one
    agent met is told to another in the same repository; for any other tool, the engine's call
    signature. A line without a filter keeps the key it had before runs were told apart."""
    line = shell_line(step["tool"], step["args"])
    return _run_key(line) if line else step["signature"]


@lru_cache(maxsize=16)
def _run_key(line: str) -> str:
    """`memory_key` of a shell line: read again (tens of µs for a line with a pipe), and asked
    two or three times for one call (before it, after it, and by `Learner.learn`)."""
    return call_signature("shell", " ".join(run_text(line).split()))


def shell_line(tool: str, args: str) -> str | None:
    """The command line of a shell call (its canonical arguments), one space between words;
    None for another tool."""
    names = vocabulary()
    if names.role(tool) != "shell":
        return None
    try:
        line = names.line_of(json.loads(args))
    except ValueError:
        return None
    return " ".join(line.split()) if isinstance(line, str) and line.strip() else None


def entry_id(signature: str, error_id: str) -> str:
    """The id of a failure class: the call's signature and its error identity, hashed (the same
    on every host, so a fleet's records of one class meet in one entry)."""
    return xxhash.xxh3_64_hexdigest(f"{signature}\0{error_id}".encode("utf-8", "replace"))[:12]


def remembered(step: StepRecord) -> bool:
    """Whether a failed step is worth remembering across sessions (see the module docstring)."""
    return (step["ok"] is False and not step["refused"] and bool(step["error_id"])
            and step["error"] not in TRANSIENT_ERROR_CLASSES
            and not is_test_report(step["error"], step["error_id"]))


def call_text(tool: str, args: str) -> str:
    """What a call ran or touched, from its canonical arguments: the command line, else the
    file, else the arguments; redacted and cut."""
    line = shell_line(tool, args)
    if line:
        return _excerpt(line)
    try:
        parsed = json.loads(args)
    except ValueError:
        parsed = None
    text = args
    if isinstance(parsed, dict):
        text = next((parsed[k] for k in _CALL_KEYS if isinstance(parsed.get(k), str)), args)
    return _excerpt(text)


def _excerpt(text: str) -> str:
    return clean(redact(text), keep_newlines=False, limit=EXCERPT_CHARS)


_ARGS_KEPT = 2048
"""Characters of a success's arguments kept as they are until a fix names the call."""


def _call_kept(step: StepRecord) -> dict[str, str]:
    """What the last success keeps to name its call in a fix (`_call_told`): its arguments,
    told (`call_text`: redacted and cut, tens of µs of patterns at every successful step)
    only when a fix names it, which few successes do; the text now when they are long, so the
    session's state stays small. (The arguments are in the session's log already.)"""
    args = step["args"]
    if len(args) <= _ARGS_KEPT:
        return {"args": args}
    return {"call": call_text(step["tool"], args)}


def _call_told(last: dict[str, Any]) -> str:
    """The text of the last success's call (`_call_kept`; a state saved before kept the
    text)."""
    if "call" in last:
        return str(last["call"])
    return call_text(str(last["tool"]), str(last.get("args", "")))


class Learner:
    """One session's learning (see the module docstring). Its `state` is a JSON dict (the guard
    keeps it in the session's saved state between hook processes)."""

    def __init__(self, session: str, state: dict[str, Any] | None = None) -> None:
        self.session = session
        self.state: dict[str, Any] = state if isinstance(state, dict) else {}
        self.state.setdefault("open", [])
        self.state.setdefault("last_ok", None)
        self.state.setdefault("seen", [])
        self.state.setdefault("done", [])
        self.state.setdefault("told", [])
        self.state.setdefault("failing", {})

    @property
    def done(self) -> frozenset[str]:
        """Keys (`memory_key`) of the calls that succeeded in this session (the last 64): a pitfall
        whose fix this session already made is not told again (`MemoryIndex.warning_for`)."""
        return frozenset(self.state["done"])

    @property
    def quiet(self) -> frozenset[str]:
        """Entries not to warn about again in this session: those it was already told of,
        and those that failed in it (repeats within a session are the live engine's
        business)."""
        return frozenset(self.state["told"]) | frozenset(self.state["seen"])

    def told(self, eid: str) -> None:
        """Remember that this session was warned about `eid` (once is enough)."""
        if eid not in self.state["told"]:
            self.state["told"] = [*self.state["told"], eid][-64:]

    def learn(self, step: StepRecord, index: MemoryIndex, *, files: str = "",
              ts: float = 0.0) -> list[dict[str, Any]]:
        """The records a completed step teaches (`files`: the state of the files it read or
        wrote before it ran, see `MemoryIndex.warning_for`; `ts`: when its result came)."""
        if step["ok"] is None or step["refused"]:
            return []
        base = {"session": self.session, "seq": step["seq"], "ts": ts}
        key = memory_key(step)
        opened: list[dict[str, Any]] = self.state["open"]
        opened[:] = [o for o in opened if step["index"] - o["index"] <= FIX_WINDOW]
        if not step["ok"]:
            if not remembered(step):
                return []
            eid = entry_id(key, step["error_id"])
            opened[:] = [o for o in opened if o["id"] != eid][-(OPEN_KEPT - 1):]
            opened.append({"id": eid, "sig": key, "tool": step["tool"],
                           "path": step["path"], "index": step["index"]})
            if eid not in self.state["seen"]:
                self.state["seen"] = [*self.state["seen"], eid][-64:]
            failing: dict[str, str] = self.state["failing"]
            failing.pop(eid, None)
            failing[eid] = key
            while len(failing) > OPEN_KEPT:
                del failing[next(iter(failing))]
            return [{**base, "k": "fail", "id": eid, "sig": key,
                     "tool": step["tool"], "error": step["error"],
                     "error_id": _excerpt(step["error_id"]),
                     "call": call_text(step["tool"], step["args"]), "files": files}]
        records = self._fixes(step, key, base)
        retried = {r["id"] for r in records if r.get("how") == "retry"}
        failing = self.state["failing"]
        for eid in [e for e, sig in failing.items() if sig == key]:
            del failing[eid]
            if eid not in retried:  # past the fix window: it got past its error all the same
                records.append({**base, "k": "passed", "id": eid})
        for eid in index.by_sig.get(key, ()):
            entry = index.entries.get(eid)
            if (entry is not None and eid not in self.state["seen"] and entry.active
                    and entry.files_match(files)
                    and not (entry.fixes and entry.fixes[-1].get("sig") in self.done)):
                # it worked without its fix: the pitfall is gone (not so after the fix)
                records.append({**base, "k": "ok", "id": eid})
        self.state["last_ok"] = {"index": step["index"], "seq": step["seq"],
                                 "tool": step["tool"], "sig": key, **_call_kept(step)}
        done = [s for s in self.state["done"] if s != key]
        self.state["done"] = [*done, key][-64:]
        return records

    def _fixes(self, step: StepRecord, key: str, base: dict[str, Any]
               ) -> list[dict[str, Any]]:
        """The fixes a success makes: the same call succeeding closes a failure (`retry`,
        after the success before it); the first success of the same tool on the same file is
        told as done `instead`, and the failure stays open, so a retry within the window (the
        same call after `bun install`) is what is told last. Each fix names the `memory_key` of
        the call that fixed it."""
        out = []
        keep = []
        last = self.state["last_ok"]
        for o in self.state["open"]:
            if key == o["sig"]:
                after = last if last and last["index"] > o["index"] and last["sig"] != o["sig"] \
                    else None
                out.append({**base, "k": "fix", "id": o["id"], "how": "retry",
                            "tool": after["tool"] if after else step["tool"],
                            "call": _call_told(after) if after else "",
                            "sig": after["sig"] if after else "",
                            "at": after["seq"] if after else step["seq"]})
                continue
            if (not o.get("instead") and step["tool"] == o["tool"]
                    and (o["path"] is None or o["path"] == step["path"])):
                out.append({**base, "k": "fix", "id": o["id"], "how": "instead",
                            "tool": step["tool"], "call": call_text(step["tool"], step["args"]),
                            "sig": key, "at": step["seq"]})
                o["instead"] = True
            keep.append(o)
        self.state["open"] = keep
        return out


@dataclass(slots=True)
class Entry:
    """One failure class of a project (see the module docstring)."""

    id: str
    signature: str
    tool: str
    error: str
    error_id: str
    call: str
    files: str
    count: int = 0
    first_ts: float = 0.0
    last_ts: float = 0.0
    ok_ts: float = 0.0
    """When the same call last succeeded in a session where it had not failed."""
    retry_ts: float = 0.0
    """When the same call last succeeded in a session after failing there this way (a `retry`
    fix, or `passed`)."""
    sessions: dict[str, list[int]] = field(default_factory=dict)
    """Session -> the `#seq` of its failures (the last few of the last few sessions)."""
    fixes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def active(self) -> bool:
        """Failed since it last succeeded."""
        return self.last_ts >= self.ok_ts

    @property
    def retried(self) -> bool:
        """The same call succeeded after its last failure: the failure depended on a state
        (installed dependencies, a running service, a file's content) that changed, and that
        may or may not be as it was in the next session."""
        return self.retry_ts > 0.0 and self.retry_ts >= self.last_ts

    def files_match(self, files: str) -> bool:
        """Whether the files the call reads, writes or runs are as they were when it failed
        (always, when it was learned without their state). The scripts it runs do not count
        for an error of the environment (`ENVIRONMENT_ERRORS`): a module that is not
        installed is missing for every script."""
        if not self.files:
            return True
        if self.error in ENVIRONMENT_ERRORS:
            return _not_scripts(self.files) == _not_scripts(files)
        return self.files == files

    def worth_telling(self, session: str) -> bool:
        """Whether a session is told of this entry at all: it is active and failed in another
        session; and, when the same call succeeded after it (`retried`), it failed in at
        least `RECUR_SESSIONS` other sessions. A failure that the same call got past is
        told only once it has proved to come back (a database that is down at every
        session's start), not after one session whose fix lasted (`bun install` leaves the
        dependencies installed for the next session): a call that never got past its error
        (a command not on the PATH, a file that does not exist) is told from the first
        time."""
        if not self.active:
            return False
        others = sum(1 for s in self.sessions if s != session)
        return others >= (RECUR_SESSIONS if self.retried else 1)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "tool": self.tool, "error": self.error,
                "error_id": self.error_id, "call": self.call, "count": self.count,
                "first_ts": self.first_ts, "last_ts": self.last_ts, "ok_ts": self.ok_ts,
                "retry_ts": self.retry_ts, "active": self.active, "retried": self.retried,
                "sessions": self.sessions, "fixes": self.fixes}


class MemoryIndex:
    """A project's entries, folded from its records in the order written."""

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.by_sig: dict[str, list[str]] = {}
        self.enabled = True

    def apply(self, record: Any) -> None:
        """Fold one record in; a record of an unknown kind or shape is ignored."""
        if not isinstance(record, dict):
            return
        try:
            self._apply(record)
        except (KeyError, TypeError, ValueError, AttributeError):
            return

    def apply_all(self, records: list[Any]) -> None:
        for record in records:
            self.apply(record)

    def _apply(self, r: dict[str, Any]) -> None:
        kind = r.get("k")
        if kind == "switch":
            self.enabled = bool(r["on"])
            return
        if kind == "forget":
            self._forget(str(r["id"]))
            return
        eid = str(r["id"])
        ts = float(r.get("ts") or 0.0)
        if kind == "fail":
            entry = self.entries.get(eid)
            if entry is None:
                entry = Entry(eid, str(r["sig"]), str(r["tool"]), str(r["error"]),
                              str(r["error_id"]), str(r["call"]), str(r.get("files") or ""),
                              first_ts=ts)
                self.entries[eid] = entry
                self.by_sig.setdefault(entry.signature, []).append(eid)
            entry.count += 1
            entry.last_ts = max(entry.last_ts, ts)
            entry.files = str(r.get("files") or "")
            session = str(r["session"])
            seqs = entry.sessions.pop(session, [])
            entry.sessions[session] = [*seqs, int(r["seq"])][-SEQS_KEPT:]
            while len(entry.sessions) > SESSIONS_KEPT:
                del entry.sessions[next(iter(entry.sessions))]
            return
        entry = self.entries.get(eid)
        if entry is None:
            return
        if kind == "fix":
            fix = {k: r.get(k) for k in ("how", "tool", "call", "sig", "session", "at")}
            entry.fixes = [*[f for f in entry.fixes if f != fix][-(FIXES_KEPT - 1):], fix]
            if fix["how"] == "retry":
                entry.retry_ts = max(entry.retry_ts, ts)
        elif kind == "passed":
            entry.retry_ts = max(entry.retry_ts, ts)
        elif kind == "ok":
            entry.ok_ts = max(entry.ok_ts, ts)

    def _forget(self, eid: str) -> None:
        if eid == "*":
            self.entries.clear()
            self.by_sig.clear()
            return
        entry = self.entries.pop(eid, None)
        if entry is not None:
            ids = [i for i in self.by_sig.get(entry.signature, []) if i != eid]
            if ids:
                self.by_sig[entry.signature] = ids
            else:
                self.by_sig.pop(entry.signature, None)

    def live(self, now: float, expire_s: float) -> list[Entry]:
        """The entries that have not expired (last failure within `expire_s` of `now`; 0:
        never expire), most recent first."""
        out = [e for e in self.entries.values() if not expire_s or now - e.last_ts <= expire_s]
        return sorted(out, key=lambda e: e.last_ts, reverse=True)

    def warning_for(self, key: str, files: str, session: str, now: float,
                    expire_s: float, done: frozenset[str] = frozenset(),
                    quiet: frozenset[str] = frozenset()) -> Entry | None:
        """The entry to warn about before a call with `key` (`memory_key`) in `session`: one worth
        telling (`Entry.worth_telling`), not expired, not among the entries this session
        is `quiet` about (`Learner.quiet`), that finds the files the call reads, writes or
        runs as they were (`Entry.files_match`), and whose fix is not among the calls `done`
        (succeeded) in this session. None when there is nothing to say, or memory is off."""
        if not self.enabled:
            return None
        best = None
        for eid in self.by_sig.get(key, ()):
            e = self.entries[eid]
            if expire_s and now - e.last_ts > expire_s:
                continue
            if eid in quiet or not e.worth_telling(session) or not e.files_match(files):
                continue
            if e.fixes and e.fixes[-1].get("sig") and e.fixes[-1]["sig"] in done:
                continue  # this session already did what fixed it
            if best is None or e.count > best.count:
                best = e
        return best

    def pitfalls(self, session: str, now: float, expire_s: float) -> list[Entry]:
        """The few entries most likely to matter at a session's start: worth telling
        (`Entry.worth_telling`), by frequency times recency."""
        if not self.enabled:
            return []
        scored = []
        for e in self.live(now, expire_s):
            if e.worth_telling(session):
                weight = 0.5 ** (max(0.0, now - e.last_ts) / HALF_LIFE_S)
                scored.append((e.count * weight, e.last_ts, e))
        scored.sort(key=lambda t: (t[0], t[1]), reverse=True)
        return [e for _, _, e in scored[:PITFALLS]]


def _not_scripts(files: str) -> str:
    return ";".join(p for p in files.split(";") if not p.startswith(SCRIPT_MARK))


def _fix_text(entry: Entry) -> str:
    if not entry.fixes:
        return "no fix was seen then"
    fix = entry.fixes[-1]
    tool = clean(str(fix.get("tool")), keep_newlines=False, limit=40)
    if fix.get("how") == "instead":
        return f"{tool} {quote(str(fix.get('call') or ''))} succeeded instead"
    if fix.get("call"):
        return f"after {tool} {quote(str(fix['call']))}, the same call succeeded"
    return "the same call succeeded when run again"


def warning(entry: Entry, session: str) -> str:
    """What the agent is told before a call that failed this way in earlier sessions: how
    often, in how many, the error and the fix, not where (the sessions and their `#seq`s are
    the operator's, `supervisor memory show`: the model cannot resolve them)."""
    earlier = sum(1 for s in entry.sessions if s != session)
    times = "once" if entry.count == 1 else f"{entry.count} times"
    sessions = "an earlier session" if earlier == 1 else f"{earlier} earlier sessions"
    return (f"Failure memory: this same call failed {times} in {sessions} of this project, "
            f"with {quote(entry.error_id)}. What worked then: "
            f"{_fix_text(entry)}. Nothing stops it from running; check whether that applies "
            "before running it as it is.")


def pitfalls(entries: list[Entry], session: str) -> str | None:
    """What the agent is told at a session's start: the pitfalls, bounded in size."""
    if not entries:
        return None
    lines = ["Failure memory of this project (from earlier sessions; a reminder, not a rule):"]
    for n, e in enumerate(entries, 1):
        line = (f"{n}. {clean(e.tool, keep_newlines=False, limit=40)} {quote(e.call)} failed "
                f"{e.count}x with {quote(e.error_id)}; what worked: {_fix_text(e)}.")
        if sum(map(len, lines)) + len(line) > PITFALLS_CHARS:
            break
        lines.append(line)
    return "\n".join(lines) if len(lines) > 1 else None
