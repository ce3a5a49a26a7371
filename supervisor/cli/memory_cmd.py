"""`supervisor memory [--project P] list|show ID|forget ID|forget --all|off|on|projects`: the
operator's hands on a project's failure memory (docs/memory.md).

The project is `--project`, else the one a session in the current directory would use (the
policy's `[guard] memory_project`, else the repository: see `supervisor.guard.memory`).
`forget` and `off`/`on` are records in the project's log, so every session of the root (and
every host of a fleet, through the relays) reads them; `forget --all` replaces the log by one
record that forgets everything.

With a Redis store (`--store redis://...`, or `$SUPERVISOR_STORE`) the commands work on the
memory the fleet shares (`supervisor.store.redis.memory_sync.FleetMemory`): what every host's
relay shipped, and the operator's records go to every host through the relays. The project and
the expiry still come from this directory and the local root's policy.
"""

import argparse
import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from supervisor.cli.common import CliError, add_store_arguments

if TYPE_CHECKING:
    from supervisor.store.base import Store


class Records(Protocol):
    """A project's memory, where it is kept: a local log (`MemoryLog`) or a fleet's stream
    (`FleetMemory`)."""

    def records(self) -> list[dict[str, Any]]: ...
    def append(self, records: list[dict[str, Any]]) -> None: ...
    def replace(self, records: list[dict[str, Any]]) -> None: ...


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("--project", metavar="P",
                        help="the project (default: the one of the current directory)")
    parser.add_argument("--json", action="store_true", help="JSON instead of a table")
    parser.add_argument("action", choices=["list", "show", "forget", "off", "on", "projects"],
                        help="what to do")
    parser.add_argument("entry", nargs="?", metavar="ID", help="an entry (show, forget)")
    parser.add_argument("--all", action="store_true", help="forget: every entry")


def run(args: argparse.Namespace) -> int:
    from supervisor.cli.common import store_from

    store = store_from(args)
    try:
        with _errors(store):
            return _run(args, store)
    finally:
        store.close()


def _run(args: argparse.Namespace, store: "Store") -> int:
    from supervisor.engine.failure_memory import MemoryIndex
    from supervisor.store.local import LocalStore
    from supervisor.store.memory_log import MemoryLog, projects
    from supervisor.store.paths import resolve_root

    local = store.root if isinstance(store, LocalStore) else None
    if args.action == "projects":
        names = projects(local) if local is not None else _fleet(store).projects()
        print(json.dumps(names) if args.json else "\n".join(names) or "no project has a memory")
        return 0
    project, expire_s = _project(local or resolve_root(None), args.project)
    log: Records = MemoryLog(local, project) if local is not None else _fleet(store, project)
    index = MemoryIndex()
    index.apply_all(log.records())
    now = time.time()
    if args.action == "list":
        entries = sorted(index.entries.values(), key=lambda e: e.last_ts, reverse=True)
        if args.json:
            print(json.dumps({"project": project, "on": index.enabled,
                              "entries": [_row(e.to_dict(), now, expire_s) for e in entries]}))
            return 0
        print(f"project {project}: memory {'on' if index.enabled else 'off'}, "
              f"{len(entries)} entries")
        for e in entries:
            row = _row(e.to_dict(), now, expire_s)
            print(f"  {e.id}  {e.count:>3}x in {len(e.sessions)} sessions  last {row['last']}"
                  f"{'  (expired)' if row['expired'] else ''}{_quiet(e)}"
                  f"  {_safe(e.tool)} {_safe(e.call, 50)}: {_safe(e.error_id, 70)}")
        return 0
    if args.action == "show":
        entry = index.entries.get(args.entry or "")
        if entry is None:
            raise CliError(f"no entry '{args.entry}' in the memory of {project}")
        row = _row(entry.to_dict(), now, expire_s)
        if args.json:
            print(json.dumps(row))
            return 0
        print(f"{entry.id}: {_safe(entry.tool)} {_safe(entry.call, 200)}")
        print(f"  error {entry.error}: {_safe(entry.error_id, 200)}")
        print(f"  failed {entry.count} times; first {_when(entry.first_ts)}, last {row['last']}"
              f"{' (expired)' if row['expired'] else ''}")
        if entry.ok_ts:
            print(f"  succeeded {_when(entry.ok_ts)} in a session where it had not failed")
        for session, seqs in entry.sessions.items():
            print(f"  session {_safe(session)}: " + ", ".join(f"#{n}" for n in seqs))
        for fix in entry.fixes:
            print(f"  fix ({fix.get('how')}): {_safe(str(fix.get('tool')))} "
                  f"{_safe(str(fix.get('call') or ''), 120)} in session "
                  f"{_safe(str(fix.get('session')))} #{fix.get('at')}")
        return 0
    if args.action == "forget":
        if args.all:  # one record that forgets everything: the relays carry it to the fleet
            log.replace([{"k": "forget", "id": "*", "ts": now}])
            print(f"forgot every entry of {project}")
            return 0
        if not args.entry:
            raise CliError("forget needs an entry id, or --all")
        if args.entry not in index.entries:
            raise CliError(f"no entry '{args.entry}' in the memory of {project}")
        log.append([{"k": "forget", "id": args.entry, "ts": now}])
        print(f"forgot {args.entry}")
        return 0
    on = args.action == "on"
    log.append([{"k": "switch", "on": on, "ts": now}])
    print(f"memory of {project} is {'on' if on else 'off'}")
    return 0


@contextlib.contextmanager
def _errors(store: "Store") -> Iterator[None]:
    """A remote store's client errors as `StoreError`s (one line, no password)."""
    errors = getattr(store, "errors", None)
    if errors is None:
        yield
        return
    with errors():
        yield


def _fleet(store: "Store", project: str = "") -> Any:
    """The fleet's memory of `project` in a Redis store (`FleetMemory`)."""
    from supervisor.store.liveness import THIS_HOST
    from supervisor.store.redis.backend import RedisStore
    from supervisor.store.redis.memory_sync import FleetMemory

    if not isinstance(store, RedisStore):
        raise CliError(f"{store.describe()} keeps no failure memory (a local root or Redis)")
    return FleetMemory(store.client, store.layout.prefix, project, THIS_HOST)


def _project(root: Path, named: str | None) -> tuple[str, float]:
    """(the project, the expiry in seconds of the policy in force)."""
    from supervisor.guard.memory import DAY_S, project_of
    from supervisor.guard.settings import GuardSettings
    from supervisor.hooks.policy import PolicyError, guard_table

    try:
        settings = GuardSettings.from_dict(guard_table(root))
    except (PolicyError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    project = project_of(os.getcwd(), named or settings.memory_project)
    if project is None:
        raise CliError("no project: give --project")
    return project, settings.memory_expire_days * DAY_S


def _quiet(entry: Any) -> str:
    """Why an entry that is kept is not told (docs/memory.md), "" when it is."""
    if not entry.active:
        return "  (ok since)"
    if not entry.worth_telling(""):
        return "  (got past in its session: told once it recurs)"
    return ""


def _row(entry: dict[str, Any], now: float, expire_s: float) -> dict[str, Any]:
    return {**entry, "last": _when(entry["last_ts"]),
            "expired": bool(expire_s) and now - entry["last_ts"] > expire_s}


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ts)) + " UTC"


def _safe(text: str, limit: int = 60) -> str:
    from supervisor.safetext import clean

    return clean(text, keep_newlines=False, limit=limit)
