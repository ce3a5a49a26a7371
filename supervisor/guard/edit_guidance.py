"""The guard's side of self-healing guidance: it reads the files edits are about.

The engine builds the words (`supervisor.engine.edit_hint`); the guard has the workspace on
disk and passes in what it read. For that it keeps, per session:

- the calls in flight that edit a file by search text (path and search text, from the call's
  arguments: the result alone does not say what was searched for);
- per file, the last version the agent read (the `#seq` of the read, the digest, and a copy of
  the text in `<session>/reads/`, so the changed lines can be shown) and the versions the
  session's own successful edits left (`#seq`, tool, digest): who changed the file since.

`on_call` and `on_result` are called by `Guard.pre_call` / `Guard.post_call`; `on_result`
returns the hint for an edit whose search text was not found (or occurs more than once),
`before_run_hint` the same for a patch about to run that cannot apply (Codex reports no
result for patches; given once: before the call, or with its result), and `refused_edit_hint`
for an edit the engine refuses before it runs. Bounded: the
calls in flight kept are the last 16, the files followed the last 64, the copies of read files
at most 256 KiB each and 8 MiB in all (the oldest go first); every read of the workspace goes
through `fileread.read_file` (never whole when huge, never blocking).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from supervisor.engine.closest import MAX_SEARCH_CHARS
from supervisor.engine.edit_hint import HINT_CHARS, FileVersion, failed_edit_hint
from supervisor.engine.edits import edit_failure
from supervisor.engine.facts import CallFacts
from supervisor.guard.fileread import read_file, resolve
from supervisor.guard.state import GuardState
from supervisor.store.paths import ensure_private_dir

CALLS_KEPT = 16
PATHS_KEPT = 64
WRITES_KEPT = 3
COPY_BYTES = 256 * 1024
"""A read file larger than this is remembered by digest only (no changed lines)."""
COPIES_BYTES = 8 * 1024 * 1024
COPIES_KEPT = 64


class EditGuidance:
    """One session's file memory (kept in `state.edit_guidance`, a JSON value)."""

    def __init__(self, state: GuardState, reads_dir: Path, cwd: str | None) -> None:
        if state.edit_guidance is None:
            state.edit_guidance = {"calls": {}, "paths": {}}
        self.mem = state.edit_guidance
        self.reads_dir = reads_dir
        self.cwd = cwd

    # -- calls -----------------------------------------------------------------------------

    def on_call(self, call_id: str, seq: int, tool: str, facts: CallFacts) -> None:
        """Remember what the call (`tool`: as the agent named it) reads, writes and searches
        for, until its result."""
        replaces = [e for e in facts.edits if e.kind == "replace" and e.search and e.path]
        searches = [[e.path, (e.search or "")[:MAX_SEARCH_CHARS]] for e in replaces]
        writes = facts.edited_paths
        path = facts.path
        if path and not writes and facts.category == "mutate":
            writes = [path]
        read = facts.read_path
        if not (searches or writes or read):
            return
        calls = self.mem["calls"]
        calls[call_id] = {"seq": seq, "tool": tool, "read": read, "writes": writes,
                          "searches": searches, "patch": any(e.patch for e in replaces)}
        while len(calls) > CALLS_KEPT:
            del calls[next(iter(calls))]

    def on_result(self, call_id: str, ok: bool, output: str, error: str | None,
                  budget: int = HINT_CHARS) -> str | None:
        """Update the file versions; the hint for a failed edit (at most `budget`
        characters), else None."""
        call = self.mem["calls"].pop(call_id, None)
        if call is None:
            return None
        # an edit tool's own words say it failed even where the harness records no failure
        # (Codex's PostToolUse has no failure flag)
        failure = edit_failure(output, error) if call["searches"] else None
        if ok and failure is None:
            for path in call["writes"]:
                self._wrote(path, call["seq"], call["tool"])
            if call["read"]:
                self._read(call["read"], call["seq"])
            return None
        if failure is None or call.get("hinted"):
            return None  # not an edit's failure, or the hint was given before the call ran
        path, search = _pick(call["searches"], output)
        return failed_edit_hint(path, search, failure, read_file(path, cwd=self.cwd),
                                **self._history(path), budget=budget)

    def forget(self, call_id: str) -> None:
        """A call's result, as the log tells it later (`supervisor.guard.catch_up`): it is
        no longer waited for; the file versions it left are not known."""
        self.mem["calls"].pop(call_id, None)

    def before_run_hint(self, call_id: str) -> str | None:
        """For a patch about to run (Codex's `apply_patch`, remembered by `on_call`) that
        cannot apply: the hint, now, once. Codex runs no hook after a patch, so this is the
        only moment the agent can be told; the result, if one comes, adds nothing. A patch
        cannot apply when its lines are in the file neither as written nor apart from the
        whitespace around each line (how `apply_patch` looks for them). Other edit tools are
        answered with their result: some of them correct a near miss themselves. Nothing
        while another call of the session that writes the file is in flight (parallel calls:
        it may put the lines there first)."""
        call = self.mem["calls"].get(call_id)
        if call is None or not call.get("patch"):
            return None
        key = self._key(call["searches"][0][0])
        for other_id, other in self.mem["calls"].items():
            if other_id != call_id and any(self._key(w) == key for w in other["writes"]):
                return None
        for path, search in call["searches"]:
            file = read_file(path, cwd=self.cwd)
            if not file.ok:  # missing, binary, ...: the tool says so itself
                return None
            if not _lines_found(file.text or "", search):
                call["hinted"] = True
                return failed_edit_hint(path, search, "not_found", file, **self._history(path))
        return None

    def refused_edit_hint(self, facts: CallFacts) -> str | None:
        """For an edit the engine refuses before it runs: where its search text is now."""
        for edit in facts.edits:
            if edit.kind == "replace" and edit.search and edit.path:
                file = read_file(edit.path, cwd=self.cwd)
                if file.ok and (file.text or "").count(edit.search) == 1:
                    return None  # it would apply now: nothing to correct
                return failed_edit_hint(edit.path, edit.search, "not_found", file,
                                        **self._history(edit.path))
        return None

    # -- file versions ---------------------------------------------------------------------

    def _read(self, path: str, seq: int) -> None:
        file = read_file(path, cwd=self.cwd)
        if file.digest is None:
            return
        kept = file.ok and file.text is not None and len(file.text) <= COPY_BYTES
        if kept:
            self._copy(file.digest, file.text or "")
        entry = self._entry(path)
        entry["read"] = [seq, file.digest, kept]

    def _wrote(self, path: str, seq: int, tool: str) -> None:
        file = read_file(path, cwd=self.cwd)
        entry = self._entry(path)
        entry["writes"] = [*entry["writes"], [seq, tool, file.digest or ""]][-WRITES_KEPT:]

    def _key(self, path: str) -> str:
        """One file, however the agent names it (relative to its directory or absolute)."""
        return os.path.normpath(resolve(path, self.cwd))

    def _entry(self, path: str) -> dict[str, Any]:
        paths = self.mem["paths"]
        key = self._key(path)
        entry = paths.pop(key, None) or {"read": None, "writes": []}
        paths[key] = entry  # most recent last
        while len(paths) > PATHS_KEPT:
            del paths[next(iter(paths))]
        return entry

    def _history(self, path: str) -> dict[str, Any]:
        entry = self.mem["paths"].get(self._key(path))
        if entry is None:
            return {}
        read = None
        if entry["read"] is not None:
            seq, digest, kept = entry["read"]
            read = FileVersion(seq, digest, self._copy_text(digest) if kept else None)
        writes = tuple(FileVersion(seq, digest, None, tool) for seq, tool, digest in
                       entry["writes"])
        return {"read": read, "writes": writes}

    # -- copies of read files --------------------------------------------------------------

    def _copy(self, digest: str, text: str) -> None:
        target = self.reads_dir / digest
        try:
            os.utime(target)  # kept already (one call: every read result comes here)
            return  # recently used now: evicted last
        except FileNotFoundError:
            pass
        except OSError:
            return  # (as a copy that cannot be written: no changed lines)
        try:
            ensure_private_dir(self.reads_dir)
            temp = target.with_name(f".{digest}.{os.getpid()}.tmp")
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, text.encode("utf-8"))
            finally:
                os.close(fd)
            os.replace(temp, target)
            self._evict()
        except OSError:
            return  # a full disk costs the changed lines, never the agent's call

    def _copy_text(self, digest: str) -> str | None:
        try:
            return (self.reads_dir / digest).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def _evict(self) -> None:
        copies = []
        for entry in os.scandir(self.reads_dir):
            if not entry.name.startswith("."):
                info = entry.stat()
                copies.append((info.st_mtime_ns, info.st_size, entry.path))
        copies.sort()
        total = sum(size for _, size, _ in copies)
        while copies and (len(copies) > COPIES_KEPT or total > COPIES_BYTES):
            _, size, path = copies.pop(0)
            total -= size
            with contextlib.suppress(OSError):
                os.unlink(path)


def _lines_found(text: str, search: str) -> bool:
    """True when `search`'s lines are consecutive lines of `text`, each equal apart from the
    whitespace around it (as `apply_patch` matches a hunk)."""
    want = [line.strip() for line in search.split("\n")]
    have = [line.strip() for line in text.split("\n")]
    n = len(want)
    first = want[0]
    return any(have[i] == first and have[i:i + n] == want for i in range(len(have) - n + 1))


def _pick(searches: list[list[str]], output: str) -> tuple[str, str]:
    """The replacement that failed: the one whose search text the tool's message quotes (a
    MultiEdit names it), else the first."""
    for path, search in searches:
        if search and search[:200] in output:
            return path, search
    path, search = searches[0]
    return path, search
