"""Pi session files (`~/.pi/agent/sessions/<cwd>/<time>_<id>.jsonl`; Oh My Pi, its fork,
writes the same entries).

One JSON object per line. The header `{type: "session", version, id, timestamp, cwd}` names
the session (Oh My Pi writes a `title` line before it); each later entry has an `id`, a
`parentId` and a `timestamp`. `type: "message"` entries hold a message by `role`: `user` (the
prompt: a string or text and image blocks), `assistant` (`text`, `thinking` and
`toolCall{id, name, arguments}` blocks; `usage{input, output, cacheRead, cacheWrite,
cost.total}`, its `input` already without the cached part; `errorMessage` when the provider
failed), `toolResult` (`toolCallId`, `toolName`, `content`, `isError`), and Oh My Pi's
`developer` (its harness's reminders: a `system` message). A call is recorded under Pi's tool
name (`bash`, `read`, `edit`, `write`, `grep`, ...: the engine's shared vocabulary reads them)
with its arguments and its failure worded by `protocol/pi_calls`, as the live hook (hooks/pi)
records them, so a recording replays as the session was judged live; a call Oh My Pi never ran
(its result synthetic: the person typed, or the response was aborted) is a call refused before
it ran, with no result (`pi_calls.not_run`). `custom_message` entries
(an extension's text sent to the model) are `system` messages. Other entries (`model_change`,
`thinking_level_change`, `compaction`, `custom`, `label`, anything newer) carry no step and are
counted in `meta["skipped"]`. A session the person branched (`/tree`: went back to an earlier
entry and went on from there; the file holds its branches one after another, each entry's
`parentId` naming the one it follows) is read as the branch it ended on (`_final_branch`), the
entries of other branches counted in `meta["skipped"]` as "on another branch". A session file
records no end of session, so there is no `session_end`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from supervisor.engine.edits import edits_of
from supervisor.importers.base import (
    FormatError,
    Importer,
    RunBuilder,
    SpooledRun,
    as_dict,
    as_text,
    iso_ts,
    records,
    run_name,
)
from supervisor.importers.document import Records
from supervisor.importers.errortext import task_line
from supervisor.importers.prompts import role_of_user_text
from supervisor.protocol.pi_calls import INTERRUPTED, call_args, failure, interrupted, not_run

AGENT = "pi"


def matches(records: Any) -> bool:
    """JSON Lines led (within a few lines) by Pi's session header."""
    if not isinstance(records, list | Records) or not records:
        return False
    for record in records[:5]:
        if not isinstance(record, dict):
            return False
        if record.get("type") == "session":
            return isinstance(record.get("id"), str) and "version" in record
    return False


def load(records: Any, path: Path) -> list[SpooledRun]:
    if not matches(records):
        raise FormatError("not a Pi session file (needs its {type: session, id} header)")
    parents: dict[str, Any] = {}
    run, branched = _read(records, path, None, parents)
    keep = _final_branch(parents) if branched else None
    if keep is None:  # one line of entries, or not one tree: read as written
        return [run]
    run.close()
    return [_read(records, path, keep, {})[0]]


def _final_branch(parents: dict[str, Any]) -> set[str] | None:
    """The ids of the branch the session ended on: from the last entry written (Pi appends
    every entry; after the person goes back with `/tree`, the new entries hang from the point
    they went back to) up to the root. None when the chain does not reach a root (an entry
    whose parent is not in the file, or a cycle): the file is then read in its order."""
    branch: set[str] = set()
    at: Any = next(reversed(parents), None)
    while isinstance(at, str):
        if at in branch or at not in parents:
            return None
        branch.add(at)
        at = parents[at]
    return branch


def _read(records: Any, path: Path, keep: set[str] | None,
          parents: dict[str, Any]) -> tuple[SpooledRun, bool]:
    """The run of the entries `keep` names (None: every entry, in the file's order), each
    entry's parent recorded in `parents`; and whether an entry's parent was not the entry
    before it (the person went back and took another branch)."""
    builder = RunBuilder(AGENT, path)
    open_calls: dict[str, str] = {}
    skipped: Counter[str] = Counter()
    header: dict[str, Any] = {}
    task = model = None
    held: list[tuple[dict[str, Any], float | None]] = []  # a response, then its results
    awaited: set[str] = set()  # the held response's calls whose results are not held yet
    last: Any = None
    branched = False
    for record in records:
        if not isinstance(record, dict):
            skipped[type(record).__name__] += 1
            continue
        kind = record.get("type")
        entry = record.get("id")
        if kind != "session" and isinstance(entry, str):
            parent = record.get("parentId")
            branched = branched or (last is not None and parent != last)
            parents[entry] = parent
            last = entry
            if keep is not None and entry not in keep:
                skipped["on another branch"] += 1
                continue
        ts = iso_ts(record.get("timestamp"))
        message = record.get("message")
        if held and kind == "message" and isinstance(message, dict) and message.get(
                "role") == "toolResult":
            if str(message.get("toolCallId")) in awaited:  # at most one result a call held:
                awaited.discard(str(message.get("toolCallId")))  # a file of results after
                held.append((message, ts))  # one response was held whole
                continue
            _response(builder, held, open_calls, skipped)
            held = []
        if held and kind in ("message", "custom_message"):  # what carries no step waits
            _response(builder, held, open_calls, skipped)
            held = []
        if kind == "session" and not header:
            header = record
            continue
        if kind == "custom_message":
            builder.message("system", record.get("content"), ts)
            continue
        if kind != "message" or not isinstance(message, dict):
            skipped[str(kind)] += 1
            continue
        role = message.get("role")
        if role == "user":
            text = as_text(message.get("content"))
            said = role_of_user_text(text)
            if said == "user" and task is None:
                task = task_line(text)
            builder.message(said, text, ts)
        elif role == "developer":
            builder.message("system", message.get("content"), ts)
        elif role == "assistant":
            model = model or message.get("model")
            held = [(message, ts)]
            content = message.get("content")
            awaited = {str(b.get("id")) for b in content if isinstance(b, dict)
                       and b.get("type") == "toolCall"} if isinstance(content, list) else set()
        elif role == "toolResult":
            _result(builder, message, ts, open_calls, skipped)
        else:
            skipped[f"message/{role}"] += 1
    if held:
        _response(builder, held, open_calls, skipped)
    builder.session_start(AGENT, task, header.get("cwd"))
    meta = {"session_id": header.get("id"), "version": header.get("version"), "model": model,
            "skipped": dict(skipped), "pending_calls": len(open_calls)}
    return builder.build(run_name(path, header.get("id")), meta), branched


def _response(builder: RunBuilder, held: list[tuple[dict[str, Any], float | None]],
              open_calls: dict[str, str], skipped: Counter[str]) -> None:
    """An assistant message and the results that follow it. The message is held until its
    results are read (one response's worth): a call Oh My Pi never ran (`pi_calls.not_run`)
    is recorded as refused before it ran, which its `tool_call` must say."""
    (message, ts), results = held[0], held[1:]
    refused = {str(m.get("toolCallId")): who for m, _ in results
               if (who := not_run(m.get("details"))) is not None}
    _assistant(builder, message, ts, open_calls, refused)
    for result, at in results:
        _result(builder, result, at, open_calls, skipped)


def _result(builder: RunBuilder, message: dict[str, Any], ts: float | None,
            open_calls: dict[str, str], skipped: Counter[str]) -> None:
    """A `toolResult`: the outcome of its call; for a call never run, no outcome, the text
    the model read in its place a `system` message (Oh My Pi's words, not the tool's)."""
    call_id = open_calls.pop(str(message.get("toolCallId")), None)
    if call_id is None:
        skipped["toolResult without toolCall"] += 1
        return
    output = as_text(message.get("content"))
    details = message.get("details")
    if not_run(details) is not None:
        builder.message("system", output, ts)
        return
    if interrupted(details):  # it ran; its output is unknown, the text Oh My Pi's
        builder.tool_result(call_id, False, "", error=INTERRUPTED, ts=ts)
        builder.message("system", output, ts)
        return
    failed = message.get("isError") is True
    builder.tool_result(call_id, not failed, output, error=failure(output) if failed else None,
                        ts=ts)


def _assistant(builder: RunBuilder, message: dict[str, Any], ts: float | None,
               open_calls: dict[str, str], refused: dict[str, str]) -> None:
    """An assistant message's blocks, then its usage; its calls share one `batch` (the
    entry's response: counted once when repeats are counted); a call in `refused` (its id ->
    who) never ran."""
    key = message.get("responseId")
    batch = {"batch": key} if isinstance(key, str) and key else {}
    content = message.get("content")
    if isinstance(content, str):
        builder.message("assistant", content, ts)
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            builder.message("assistant", block.get("text"), ts)
        elif kind == "thinking":
            builder.message("assistant", block.get("thinking"), ts, thinking=True)
        elif kind == "toolCall" and isinstance(block.get("name"), str):
            args = call_args(block["name"], as_dict(block.get("arguments")))
            if block["name"] == "edit":
                args = _patch_edit(args)
            native = block.get("id")
            who = refused.get(str(native))
            extra = {**batch, "refused_by": who} if who else batch
            open_calls[str(native)] = builder.tool_call(block["name"], args, native, ts,
                                                        **extra)
    if isinstance(message.get("errorMessage"), str):  # the provider failed, not the model
        builder.message("system", message["errorMessage"], ts)
    usage = as_dict(message.get("usage"))
    builder.usage(usage.get("input"), usage.get("output"), as_dict(usage.get("cost")).get(
        "total"), ts, cache_read=usage.get("cacheRead"), cache_write=usage.get("cacheWrite"))


def _patch_edit(args: dict[str, Any]) -> dict[str, Any]:
    """Oh My Pi's `edit` given a patch (`input`, Codex's format) as the edit of a file it is:
    the patch of one updated file is recorded under the engine's names, as Pi's own edits
    (`pi_calls.edit_args`): its `path`, and each hunk's text before and after
    (`old_string`, `new_string`; several as `edits`), read by the engine's reader of
    Codex's patches (`engine.edits`), not a second one. Any other patch (several files, a
    file added or deleted, a hunk that only adds) keeps its `input` as written, the call
    still an edit by its name."""
    patch = args.get("input")
    if not isinstance(patch, str) or "old_string" in args or "edits" in args:
        return args
    hunks = edits_of("apply_patch", {"input": patch})
    marks = sum(1 for line in patch.split("\n") if line.startswith("@@"))
    if not hunks or len({h.path for h in hunks}) != 1 or any(
            h.kind != "replace" for h in hunks) or len(hunks) != max(marks, 1) or (
            "*** Delete File:" in patch):
        return args  # several files, a file added or deleted, or a hunk that only adds
    rest = {k: v for k, v in args.items() if k != "input"}
    pairs = [{"old_string": h.search, "new_string": h.text} for h in hunks]
    return {**rest, "path": hunks[0].path, **(pairs[0] if len(pairs) == 1 else {"edits": pairs})}


IMPORTER = Importer(
    "pi", "Pi session file ~/.pi/agent/sessions/<cwd>/<time>_<id>.jsonl (Oh My Pi too)",
    matches, load, reads=records,
)
