"""The failure memory in the guard: learn after each result, warn before a call, recall at start.

Which project a session belongs to (`project_of`): the name the operator gave (`[guard]
memory_project`), else the work tree's git repository, read from its files (no git process, so
nothing of the agent's git configuration runs): its `origin` remote, normalised and without
credentials (`github.com/org/repo`), which is the same on every host and in every clone and
worktree, so the sessions of a fleet share one memory; else, for a repository without a remote,
the path of its main work tree (its worktrees share it). A directory that is no repository is a
project of its own path. The project is found once, when the session first needs it, and kept
in the session's state.

The project's index (`supervisor.engine.failure_memory.MemoryIndex`) is loaded once per process
and kept up to date from the log's new lines (`_LOADED`): in the resident hook server, one
`stat` and one dict lookup per call, whatever the size of the memory. What the agent is told is
recorded as a `memory` event (kind `warned` before a call, `pitfalls` at the start; `learned`
when a failure is remembered), so the dashboard, `analyze` and the OTel export see it.

Memory never refuses a call: a warning turns an `allow` into a `nudge` (the call runs, with the
words), and nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from supervisor.engine.failure_memory import (
    SCRIPT_MARK,
    Learner,
    MemoryIndex,
    memory_key,
    pitfalls,
    remembered,
    shell_line,
    warning,
)
from supervisor.engine.shell import probe_files
from supervisor.engine.step import StepRecord
from supervisor.protocol.names import MEMORY
from supervisor.safetext import quote
from supervisor.store.liveness import THIS_HOST
from supervisor.store.memory_log import Cursor, MemoryLog

if TYPE_CHECKING:
    from supervisor.guard.journal import SessionJournal

DAY_S = 86400.0
_CONFIG_BYTES = 64 * 1024
_SCP_URL = re.compile(r"^(?:[^@/\s]+@)?([^:/\s]+):(?!//)(.+)$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/\s]*@)?([^/\s]+)(/.*)?$", re.I)
_FILES_KEPT = 64


def project_of(cwd: str | None, named: str = "") -> str | None:
    """The project of a session working in `cwd` (see the module docstring); None without a
    name and a working directory."""
    if named.strip():
        return named.strip()
    if not cwd:
        return None
    start = Path(cwd)
    for top in (start, *start.parents):
        dot = top / ".git"
        if dot.is_dir() or dot.is_file():
            common = _common_dir(top, dot)
            remote = _origin(common) if common is not None else None
            if remote:
                return f"git:{remote}"
            main = common.parent if common is not None and common.name == ".git" else top
            return f"path:{main}"
    return f"path:{start}"


def _common_dir(top: Path, dot: Path) -> Path | None:
    """The repository's git directory shared by all its worktrees."""
    gitdir = dot
    if dot.is_file():
        try:
            line = dot.read_text(encoding="utf-8", errors="replace")[:4096].strip()
        except OSError:
            return None
        if not line.startswith("gitdir:"):
            return None
        gitdir = (top / line.split(":", 1)[1].strip()).resolve()
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
        return (gitdir / common).resolve()
    except OSError:
        return gitdir


def _origin(common: Path) -> str | None:
    """The `origin` remote's URL, normalised to `host/path` without user, credentials or
    `.git` (the first remote when there is no `origin`)."""
    import configparser  # once per session, when its project is first looked for

    try:
        with open(common / "config", encoding="utf-8", errors="replace") as f:
            text = f.read(_CONFIG_BYTES)
    except OSError:
        return None
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    remotes = [s for s in parser.sections() if s.startswith("remote ")]
    remotes.sort(key=lambda s: s != 'remote "origin"')
    for section in remotes:
        url = parser.get(section, "url", fallback="").strip()
        if url:
            return normalise_remote(url)
    return None


def normalise_remote(url: str) -> str:
    """`git@github.com:org/repo.git`, `https://user:token@github.com/org/repo` and the like
    as `github.com/org/repo`."""
    match = _URL.match(url) or _SCP_URL.match(url)
    if match:
        host, path = match.group(1).lower(), (match.group(2) or "")
        host = host.rsplit("@", 1)[-1]
        url = f"{host}/{path.lstrip('/')}"
    url = url.rstrip("/")
    return url[:-4] if url.endswith(".git") else url


@dataclass(slots=True)
class _Loaded:
    log: MemoryLog
    index: MemoryIndex
    cursor: Cursor


_LOADED: dict[tuple[str, str], _Loaded] = {}
"""(root, project) -> its index in this process (see the module docstring)."""
ONE_CALL = False
"""Set by a process that handles one hook call and exits (`supervisor.hooks.local`): it reads
only the records about the call at hand (`MemoryLog.read_about`), not the whole memory."""


def index_about(root: Path, project: str, key: str) -> tuple[MemoryLog, MemoryIndex]:
    """The project's log, and an index good for questions about calls with `key`
    (`memory_key`): the whole memory where this process keeps it (`project_index`), only what
    concerns that key in a process that handles one call."""
    if not ONE_CALL or (str(root), project) in _LOADED:
        return project_index(root, project)
    log = MemoryLog(root, project)
    index = MemoryIndex()
    index.apply_all(log.read_about(key))
    return log, index


def project_index(root: Path, project: str) -> tuple[MemoryLog, MemoryIndex]:
    """The project's log and its index, brought up to date with what was appended since."""
    key = (str(root), project)
    loaded = _LOADED.get(key)
    if loaded is None:
        loaded = _LOADED[key] = _Loaded(MemoryLog(root, project), MemoryIndex(), Cursor())
    records, cursor, fresh = loaded.log.read(loaded.cursor)
    if fresh:
        loaded.index = MemoryIndex()
    loaded.index.apply_all(records)
    loaded.cursor = cursor
    return loaded.log, loaded.index


_SCRIPTS_HASHED = 4
"""Scripts of one shell call whose content is part of its file state, at most."""


def script_states(step: StepRecord, cwd: str | None) -> dict[str, str | None]:
    """What the scripts a shell call runs hold (`python reproduce.py`, `bash t.sh`, the test
    files given to a runner: `engine.shell.probe_files`), by the name the call gives them; {}
    for a call that runs none. Their content decides the call's outcome as much as the
    command does: the same `python reproduce.py` failing in a session that wrote another
    `reproduce.py` says nothing about this one (unless the environment lacked something:
    `Entry.files_match`). At most a few files, each read within the guard's bound; about a
    millisecond (the line parsed again, each path confined and read), so `SessionMemory` asks
    only about a call the memory has an entry for, or a failure it learns."""
    from supervisor.guard import disk

    if not step["probe"]:
        return {}
    line = shell_line(step["tool"], step["args"])
    paths = probe_files(line)[:_SCRIPTS_HASHED] if line else []
    return disk.digests(paths, cwd) if paths else {}


def files_key(call: dict[str, Any], scripts: dict[str, str | None] | None = None) -> str:
    """What the files a call reads, writes or runs held before it ran (the digests the guard
    put in its `tool_call`, and `scripts`: `script_states`), as one string: "" for a call that
    names no file."""
    parts: list[str] = []
    state = call.get("file")
    if isinstance(state, dict):
        parts.append(f"{state.get('path')}={state.get('digest') or state.get('status')}")
    before = call.get("files_before")
    if isinstance(before, dict):
        parts += [f"{k}={v}" for k, v in sorted(before.items())]
    return with_scripts(";".join(parts), scripts or {})


def with_scripts(files: str, scripts: dict[str, str | None]) -> str:
    """`files` (see `files_key`) with the state of the scripts a call runs."""
    parts = [f"{SCRIPT_MARK}{k}={v}" for k, v in sorted(scripts.items())]
    return ";".join([files, *parts] if files else parts)


class SessionMemory:
    """The memory's part in one guard step (inside the journal's step)."""

    def __init__(self, journal: SessionJournal) -> None:
        self.journal = journal
        self.settings = journal.settings

    @property
    def on(self) -> bool:
        return self.settings.memory and self.project is not None

    @property
    def _mine(self) -> dict[str, Any]:
        state = self.journal.state
        if state.memory is None:
            project = project_of(self.journal.cwd, self.settings.memory_project)
            state.memory = {"project": project, "learner": {}, "files": {}}
        return state.memory

    @property
    def project(self) -> str | None:
        project = self._mine.get("project")
        return project if isinstance(project, str) else None

    def _index(self, key: str | None = None) -> tuple[MemoryLog, MemoryIndex] | None:
        """The project's log and index (`key`: only questions about that call will be
        asked; see `index_about`), None when memory is off for the session."""
        project = self.project
        if not self.settings.memory or project is None:
            return None
        if key is not None:
            return index_about(self.journal.root, project, key)
        return project_index(self.journal.root, project)

    def _expire_s(self) -> float:
        return self.settings.memory_expire_days * DAY_S

    def before_call(self, call: dict[str, Any], call_id: str) -> str | None:
        """The warning for a call about to run (`call`: its `tool_call` as written), recorded
        as a `memory` event; None when memory has nothing to say."""
        if not self.on:
            return None
        step = self.journal.engine.pending_step(call_id)
        key = memory_key(step) if step is not None else ""
        loaded = self._index(key) if step is not None else None
        known = step is not None and loaded is not None and bool(loaded[1].by_sig.get(key))
        # the scripts' content only for a call the memory knows (see `script_states`)
        scripts = script_states(step, self.journal.cwd) if known and step is not None else {}
        files = files_key(call, scripts)
        files_seen = self._mine["files"]
        files_seen[call_id] = files
        while len(files_seen) > _FILES_KEPT:
            del files_seen[next(iter(files_seen))]
        if not known or loaded is None:
            return None
        index = loaded[1]
        session = self.journal.session_id
        learner = Learner(session, self._mine["learner"])
        entry = index.warning_for(key, files, session, call["ts"],
                                  self._expire_s(), learner.done, learner.quiet)
        if entry is None:
            return None
        learner.told(entry.id)
        self._mine["learner"] = learner.state
        text = warning(entry, session)
        self.journal.write({"type": MEMORY, "kind": "warned", "call_id": call_id,
                            "project": self.project, "entries": [entry.id], "message": text})
        return text

    def after_result(self, step: StepRecord | None, call_id: str, ts: float) -> None:
        """Learn from a completed step: append what it teaches to the project's log."""
        mine = self._mine
        files = mine["files"].pop(call_id, "")
        if step is None:
            return
        loaded = self._index(memory_key(step))
        if loaded is None:
            return
        log, index = loaded
        if not index.enabled:
            return
        if step["probe"] and SCRIPT_MARK not in files and remembered(step):
            # a failure to remember: the scripts it ran were not hashed before it (the memory
            # knew nothing of the call), and a script rarely rewrites itself
            files = with_scripts(files, script_states(step, self.journal.cwd))
        learner = Learner(self.journal.session_id, mine["learner"])
        records = learner.learn(step, index, files=files, ts=ts)
        mine["learner"] = learner.state
        if not records:
            return
        for r in records:
            r["host"] = THIS_HOST
        log.append(records)  # the index reads them back from the log at its next refresh
        learned = [r for r in records if r["k"] == "fail"]
        if learned:
            self.journal.write({"type": MEMORY, "kind": "learned", "call_id": call_id,
                                "project": self.project, "entries": [r["id"] for r in learned],
                                "message": f"remembered {quote(learned[0]['error_id'])}"})

    def at_start(self) -> str | None:
        """The pitfalls to offer at the session's start, recorded as a `memory` event."""
        loaded = self._index()
        if loaded is None:
            return None
        session = self.journal.session_id
        now = self.journal.clock()
        entries = loaded[1].pitfalls(session, now, self._expire_s())
        text = pitfalls(entries, session)
        if text:
            self.journal.write({"type": MEMORY, "kind": "pitfalls", "project": self.project,
                                "entries": [e.id for e in entries], "message": text})
        return text
