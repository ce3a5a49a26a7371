"""Claude Code transcripts: `~/.claude/projects/<project>/<session>.jsonl`.

One JSON object per line. `type: "assistant"` lines hold an Anthropic message whose content
blocks are `text`, `thinking` and `tool_use{id, name, input}`; `type: "user"` lines hold the
prompt (a string or text blocks) or `tool_result{tool_use_id, content, is_error}` blocks. Other
line types (`summary`, `file-history-snapshot`, `system`, anything newer) carry no step and are
counted in `meta["skipped"]`, never an error. One message split over several lines repeats its
`usage`; it is counted once. An assistant line of model `<synthetic>` is Claude Code's own
notice written in the model's place ("You're out of extra usage · resets 6:30pm", "API Error:
500 ...", "No response requested."): its text is a `system` message, never the assistant's, so
the same rate-limit notice twice is not the agent repeating itself. Sub-agent lines
(`isSidechain`) are kept and marked `sidechain: true`. Transcripts record no end of session, so
there is no `session_end`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

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

AGENT = "claude-code"
SYNTHETIC = "<synthetic>"
"""The `model` of the assistant lines Claude Code writes itself (limits, API errors)."""
_LINE_TYPES = frozenset({"user", "assistant", "summary", "system", "file-history-snapshot"})


def matches(records: Any) -> bool:
    """JSON Lines whose records look like Claude Code transcript entries."""
    if not isinstance(records, list | Records) or not records:
        return False
    seen = 0
    for record in records[:50]:
        if not isinstance(record, dict):
            return False
        if _kind(record) in _LINE_TYPES and (
            "sessionId" in record or "uuid" in record or "leafUuid" in record
            or "snapshot" in record
        ):
            seen += 1
    return seen > 0


def load(records: Any, path: Path) -> list[SpooledRun]:
    if not matches(records):
        raise FormatError("not a Claude Code transcript (needs user/assistant lines)")
    builder = RunBuilder(AGENT, path)
    last_usage = _last_usage_by_message(records)
    counted: set[str] = set()
    open_calls: dict[str, str] = {}
    skipped: Counter[str] = Counter()
    task = cwd = session_id = version = model = None
    for record in records:
        kind = _kind(record)
        message = record.get("message") if isinstance(record, dict) else None
        if kind not in ("user", "assistant") or not isinstance(message, dict):
            skipped[str(kind)] += 1
            continue
        session_id = session_id or record.get("sessionId")
        cwd = cwd or record.get("cwd")
        version = version or record.get("version")
        ts = iso_ts(record.get("timestamp"))
        mark = {"sidechain": True} if record.get("isSidechain") else {}
        content = message.get("content")
        if kind == "assistant":
            synthetic = message.get("model") == SYNTHETIC
            model = model or (None if synthetic else message.get("model"))
            key = message.get("id")
            batch = {"batch": key} if isinstance(key, str) and key else {}
            _assistant(builder, content, ts, {**mark, **batch}, open_calls,
                       "system" if synthetic else "assistant")
            if isinstance(key, str) and key not in counted and key in last_usage:
                counted.add(key)
                usage = last_usage[key]
                builder.usage(usage.get("input_tokens"), usage.get("output_tokens"), None, ts,
                              cache_read=usage.get("cache_read_input_tokens"),
                              cache_write=usage.get("cache_creation_input_tokens"))
            continue
        if isinstance(content, str):
            role = role_of_user_text(content, bool(record.get("isMeta")))
            if role == "user" and task is None:
                task = task_line(content)
            builder.message(role, content, ts, **mark)
            continue
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        results = any(b.get("type") == "tool_result" for b in blocks)
        for block in blocks:
            if block.get("type") == "tool_result":
                call_id = open_calls.pop(str(block.get("tool_use_id")), None)
                if call_id is None:
                    skipped["tool_result without tool_use"] += 1
                    continue
                output = as_text(block.get("content"))
                failed = bool(block.get("is_error"))
                builder.tool_result(call_id, not failed, output,
                                    error=output if failed else None, ts=ts, **mark)
            elif block.get("type") == "text":  # beside tool results: the harness's text
                role = role_of_user_text(block.get("text"), bool(record.get("isMeta"))
                                         or results)
                if role == "user" and task is None:
                    task = task_line(block.get("text"))
                builder.message(role, block.get("text"), ts, **mark)
    builder.session_start(AGENT, task, cwd)
    meta = {"session_id": session_id, "version": version, "model": model,
            "skipped": dict(skipped), "pending_calls": len(open_calls)}
    return [builder.build(run_name(path, session_id), meta)]


def _kind(record: Any) -> str | None:
    kind = record.get("type") if isinstance(record, dict) else None
    return kind if isinstance(kind, str) else None


def _assistant(
    builder: RunBuilder, content: Any, ts: float | None, mark: dict[str, Any],
    open_calls: dict[str, str], role: str,
) -> None:
    """An assistant message's blocks; `mark` may carry `batch` (the API message id: the tool
    calls of one response share it, and count once when repeats are counted); `role` is its
    text's (`system` for Claude Code's own notices)."""
    text_mark = {k: v for k, v in mark.items() if k != "batch"}
    if isinstance(content, str):
        builder.message(role, content, ts, **text_mark)
        return
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            builder.message(role, block.get("text"), ts, **text_mark)
        elif kind == "thinking":
            builder.message("assistant", block.get("thinking"), ts, thinking=True, **text_mark)
        elif kind == "tool_use" and isinstance(block.get("name"), str):
            args = as_dict(block.get("input"))
            native = block.get("id")
            call_id = builder.tool_call(block["name"], args, native, ts, **mark)
            open_calls[str(native)] = call_id


def _last_usage_by_message(records: list[Any]) -> dict[str, dict[str, Any]]:
    """The last `usage` recorded for each assistant message id (lines of one message repeat it,
    and the last one is the most complete)."""
    out: dict[str, dict[str, Any]] = {}
    for record in records:
        if isinstance(record, dict) and record.get("type") == "assistant":
            message = record.get("message")
            if isinstance(message, dict) and isinstance(message.get("usage"), dict):
                key = message.get("id")
                if isinstance(key, str):
                    out[key] = message["usage"]
    return out


IMPORTER = Importer(
    "claude-code", "Claude Code transcript ~/.claude/projects/<project>/<session>.jsonl",
    matches, load, reads=records,
)
