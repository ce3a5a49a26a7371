"""The failure memory on real sessions: would it have warned before failures seen in earlier
sessions of the same project, and how often would it have warned for nothing?

Every project's sessions are replayed together in time order (their events merged by time
stamp), each session with an engine of its own, with one memory per project learned only from
what happened before (`supervisor.engine.failure_memory`: the `Learner` and `MemoryIndex` the
guard uses, fed the engine's own steps). Before each call, the memory is asked what the guard
would ask (`warning_for`); after its result, what it teaches is learned.

- **repeated cross-session failures**: calls that failed with the same `memory_key` and error
  identity as a call of another, earlier session of the project (whatever the memory keeps);
- **warned**: of those, how many the memory warned before (target: at least half);
- **noise**: warnings before a call that then succeeded, per warning (target: at most 1 in 10);
- **cost**: the calls the warned failures were, and the tokens of the model turns that made them
  in the original runs (the usage recorded just before each call).

The rules of what is told (`Entry.worth_telling`: a failure the same call got past is told only
once it recurred in two sessions; one warning per entry and session) were chosen on the
interactive corpus; the **held-out** figures replay the autonomous SWE-bench runs of the
labelled corpus (`shared/corpus-labelled/mini-swe-agent`: one project per repository, named by
the instance, `django__django-11815` -> `django/django`), which played no part in choosing them
(the scripts' content in a shell call's file state, `Entry.files_match`, came after looking at
them: benchmarks/README.md). A replay has no files: `files_key` stands in for the guard's
digests.

The data: the interactive corpus (`benchmarks/corpus-interactive/`: labels with each session's
`project`; the run files in the folder its README names, found beside the checkout or named in
`$SUPERVISOR_MEMORY_CORPUS`, folders separated by the path separator), and the raw Claude Code
and Codex transcripts of the shared development corpus when it is there (project: the session's
working directory). Files the importers cannot read are left out and counted.
"""

import json
import os
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import xxhash
from common import REPO, Figure

from supervisor.engine import Engine, Policy
from supervisor.engine.failure_memory import SCRIPT_MARK, Learner, MemoryIndex, memory_key
from supervisor.engine.failures import is_test_report
from supervisor.engine.workspace import file_key

EXPIRE_S = 30 * 86400.0
SOURCES = ("claude-code", "codex")
HELD_OUT_SOURCES = ("mini-swe-agent",)
_INSTANCE = re.compile(r"^([A-Za-z0-9_.-]+?)__([A-Za-z0-9_.-]+)-\d+$")


@dataclass(slots=True)
class Tally:
    sessions: int = 0
    calls: int = 0
    repeated: int = 0
    warned_repeated: int = 0
    warnings: int = 0
    noise: int = 0
    warned_tokens: int = 0
    missed: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, other: "Tally") -> None:
        for name in ("sessions", "calls", "repeated", "warned_repeated", "warnings", "noise",
                     "warned_tokens"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for reason, n in other.missed.items():
            self.missed[reason] += n


def corpus_folders() -> list[Path]:
    """Folders of run files: `$SUPERVISOR_MEMORY_CORPUS`, else the interactive corpus and the
    shared development corpus where the team keeps them, beside the checkout."""
    env = os.environ.get("SUPERVISOR_MEMORY_CORPUS")
    if env:
        return [Path(p) for p in env.split(os.pathsep) if p and Path(p).is_dir()]
    found: list[Path] = []
    for up in (REPO.parent, REPO.parent.parent):
        for candidate in (up / "corpus-interactive", up / "shared" / "corpus"):
            if candidate.is_dir() and candidate.resolve() not in [f.resolve() for f in found]:
                found.append(candidate)
    return found


def held_out_folders() -> list[Path]:
    """The labelled autonomous corpus (`$SUPERVISOR_MEMORY_HELD_OUT`, else beside the
    checkout)."""
    env = os.environ.get("SUPERVISOR_MEMORY_HELD_OUT")
    if env is not None:
        return [Path(p) for p in env.split(os.pathsep) if p and Path(p).is_dir()]
    for up in (REPO.parent, REPO.parent.parent):
        if (up / "shared" / "corpus-labelled").is_dir():
            return [up / "shared" / "corpus-labelled"]
    return []


def _instance_project(name: str) -> str | None:
    """The repository of a SWE-bench instance's run (`...django__django-11815`)."""
    match = _INSTANCE.search(name)
    return f"{match.group(1)}/{match.group(2)}" if match else None


def sessions_by_project(folders: list[Path], sources: tuple[str, ...] = SOURCES
                        ) -> tuple[dict[str, list[tuple[str, list[dict]]]], int]:
    """project -> [(session name, events)], and how many files could not be read."""
    from supervisor.importers import load_runs
    from supervisor.importers.base import FormatError

    projects: dict[str, list[tuple[str, list[dict]]]] = defaultdict(list)
    unreadable = 0
    for folder in folders:
        labels = _labels(folder / "labels.jsonl")
        for source in sources:
            if not (folder / source).is_dir():
                continue
            for path in sorted((folder / source).glob("*.json*")):
                try:
                    runs = load_runs(path)
                except (FormatError, OSError, ValueError):
                    unreadable += 1
                    continue
                for run in runs:
                    label = labels.get(f"{source}/{path.stem}")
                    project = (label.get("project") if label and label.get("project")
                               else _instance_project(run.name) or _cwd(run.events))
                    if project:
                        projects[str(project)].append((f"{source}/{run.name}", run.events))
    return projects, unreadable


def _labels(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        return {}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {row["run"]: row for row in rows}


def _cwd(events: list[dict]) -> str | None:
    start = next((e for e in events if e["type"] == "session_start"), None)
    cwd = start.get("cwd") if start else None
    return str(cwd) if cwd else None


def _merged(sessions: list[tuple[str, list[dict]]]) -> Iterator[tuple[str, dict]]:
    """The events of every session in time order (ties: the session's own order)."""
    keyed = [(float(e.get("ts") or 0.0), n, i, name, e)
             for n, (name, events) in enumerate(sessions) for i, e in enumerate(events)]
    keyed.sort(key=lambda t: (t[0], t[1], t[2]))
    for _, _, _, name, event in keyed:
        yield name, event


def replay_project(sessions: list[tuple[str, list[dict]]], policy: Policy) -> Tally:
    """One project's sessions, replayed together with one memory (see the module docstring)."""
    tally = Tally(sessions=len(sessions))
    engines = {name: Engine(policy) for name, _ in sessions}
    learners = {name: Learner(name) for name, _ in sessions}
    index = MemoryIndex()
    failed_in: dict[tuple[str, str], set[str]] = defaultdict(set)
    warned: dict[tuple[str, str], str] = {}
    written: dict[str, dict[str, str]] = {name: {} for name, _ in sessions}
    files_at: dict[tuple[str, str], str] = {}
    plans: dict[tuple[str, str], list[Any]] = {}
    turn_tokens: dict[str, int] = defaultdict(int)
    call_tokens: dict[tuple[str, str], int] = {}
    for name, event in _merged(sessions):
        engine, kind, ts = engines[name], event["type"], float(event.get("ts") or 0.0)
        cid = str(event.get("call_id") or "")
        if kind == "usage":
            turn_tokens[name] = int(event.get("input_tokens") or 0) + int(
                event.get("output_tokens") or 0)
        if kind == "tool_call" and not event.get("refused_by"):
            engine.observe(event, ts)
            step = engine.pending_step(cid)
            if step is None:
                continue
            tally.calls += 1
            call_tokens[(name, cid)] = turn_tokens[name]
            learner = learners[name]
            files = files_at[(name, cid)] = files_key(step, written[name])
            plans[(name, cid)] = step["plan"]  # the engine lets it go once it is applied
            entry = index.warning_for(memory_key(step), files, name, ts, EXPIRE_S,
                                      learner.done, learner.quiet)
            if entry is not None:
                learner.told(entry.id)
                warned[(name, cid)] = entry.id
                tally.warnings += 1
            continue
        if kind != "tool_result":
            engine.observe(event, ts)
            continue
        step = engine.pending_step(cid)
        engine.observe(event, ts)
        if step is None or step["ok"] is None:
            continue
        was_warned = (name, cid) in warned
        if step["ok"] and was_warned:
            tally.noise += 1
        if not step["ok"] and step["error_id"]:
            key = (memory_key(step), step["error_id"])
            if failed_in[key] - {name}:
                tally.repeated += 1
                if was_warned:
                    tally.warned_repeated += 1
                    tally.warned_tokens += call_tokens.get((name, cid), 0)
                else:
                    tally.missed[_why_missed(step)] += 1
            failed_in[key].add(name)
        plan = plans.pop((name, cid), [])
        if step["ok"]:
            follow_writes(plan, written[name])
        index.apply_all(learners[name].learn(step, index, files=files_at.pop((name, cid), ""),
                                             ts=ts))
    return tally


def files_key(step: Any, written: dict[str, str]) -> str:
    """The replay's stand-in for the state of the files a call may write and the scripts it
    runs (the guard hashes them on disk: `guard.memory.files_key`; a replay has no files):
    the content this session wrote into each (the hash of a here-document or a `Write`, from
    the engine's plan of the call), "" for a file it did not write, which is taken to be the
    repository's own and the same in every session."""
    parts = [f"{k}={written.get(k, '')}" for k in sorted(step["touches"])]
    parts += [f"{SCRIPT_MARK}{k}={written.get(k, '')}" for k in step["probe"]]
    return ";".join(parts)


def follow_writes(plan: list[Any], written: dict[str, str]) -> None:
    """What a successful call wrote (its plan, `engine.workspace.plan`), as `files_key`
    reads it: a whole file's content hash; for any other change, a hash of what was there and
    the change."""
    for group in plan:
        for effect in group:
            if not isinstance(effect, list) or len(effect) < 2 or not isinstance(effect[1], str):
                continue
            key = file_key(effect[1])
            if effect[0] == "write":
                written[key] = str(effect[2])
            elif effect[0] in ("append", "replace", "transform", "delete", "undo"):
                written[key] = xxhash.xxh3_64_hexdigest(
                    f"{written.get(key, '')}\0{effect!r}".encode("utf-8", "replace"))


def _why_missed(step: Any) -> str:
    if is_test_report(step["error"], step["error_id"]):
        return "a test report (not remembered)"
    if step["error"] == "timeout":
        return "a time-out (not remembered)"
    if step["refused"]:
        return "refused by the engine in the replay"
    return "succeeded in between, or expired"


def replay_all(projects: dict[str, list[tuple[str, list[dict]]]], scale: float
               ) -> tuple[Tally, int]:
    """Every project with two sessions or more (`scale` < 1: the two smallest), and how many
    projects that was."""
    policy = Policy.profile("default")
    total = Tally()
    shared = {p: s for p, s in projects.items() if len(s) > 1}
    if scale < 1.0:  # the smoke test: the two smallest projects
        shared = dict(sorted(shared.items(), key=lambda kv: sum(len(e) for _, e in kv[1]))[:2])
    for sessions in shared.values():
        total.add(replay_project(sessions, policy))
    return total, len(shared)


def run(scale: float = 1.0) -> list[Figure]:
    projects, unreadable = sessions_by_project(corpus_folders())
    total, n_shared = replay_all(projects, scale)
    held, n_held = replay_all(sessions_by_project(held_out_folders(), HELD_OUT_SOURCES)[0],
                              scale)
    note = (f"{total.sessions} sessions of {n_shared} projects with 2 or more sessions, "
            f"{total.calls} calls; {unreadable} files unreadable")
    if not n_shared:
        note = "no corpus with several sessions of one project found (see the module docstring)"
    missed = "; ".join(f"{n} {why}" for why, n in sorted(total.missed.items(),
                                                           key=lambda kv: -kv[1]))
    return [
        Figure("repeated cross-session failures (same call, same error)", total.repeated,
               "calls", note=note),
        Figure("of them, warned before by the memory", total.warned_repeated, "calls",
               baseline=total.repeated or None, max_ratio=None,
               note=f"goal: at least half; missed: {missed or 'none'}"),
        Figure("share of repeated failures warned", (total.warned_repeated / total.repeated)
               if total.repeated else 0.0, "", note="goal >= 0.5"),
        Figure("warnings given", total.warnings, "calls"),
        Figure("warnings before a call that then succeeded, per warning",
               (total.noise / total.warnings) if total.warnings else 0.0, "",
               max_value=0.1, note=f"{total.noise} of {total.warnings} warnings"),
        Figure("tokens of the turns that made the warned failures (original runs)",
               total.warned_tokens, "tokens",
               note=f"{total.warned_repeated} calls; input + output of the turn before each"),
        Figure("held out: repeated failures warned", held.warned_repeated, "calls",
               baseline=held.repeated or None,
               note=f"{held.sessions} autonomous sessions of {n_held} repositories, "
                    f"{held.calls} calls"),
        Figure("held out: warnings before a call that then succeeded, per warning",
               (held.noise / held.warnings) if held.warnings else 0.0, "",
               note=f"{held.noise} of {held.warnings} warnings; not a target (see README)"),
    ]


if __name__ == "__main__":
    for figure in run():
        print(f"{figure.name}: {figure.value:g} {figure.unit} ({figure.note})")
