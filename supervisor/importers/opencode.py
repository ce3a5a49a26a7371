"""OpenCode session exports (`opencode export <session id> > session.json`; Kilo CLI, its fork,
exports the same shape).

One object `{info, messages}`: `info` is the session (`id`, `directory`, `version`, `title`);
each message is `{info: {role, time.created, tokens, cost, ...}, parts: [...]}`. A user
message's `text` parts are the prompt; an assistant message's `text` parts are its reply and
its `tool` parts (`{tool, callID, state: {status, input, output, error, metadata.exit,
time}}`) a `tool_call` named as OpenCode named it (`bash`, `read`, `edit`, `write`, `glob`,
...; its names are in the tool vocabulary below) with OpenCode's camelCase arguments under the
engine's names (`filePath` is `file_path`, ...), as the live hook target records them, so an
export replays as the session was judged live; and a `tool_result` when the call finished:
`status: "error"` or a shell command's non-zero `metadata.exit` is a failure. Each assistant
message's `tokens` and `cost` are a `usage` event. An export records no end of session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from supervisor.engine.tools import ToolVocabulary
from supervisor.importers.base import (
    FormatError,
    Importer,
    RunBuilder,
    SpooledRun,
    as_dict,
    as_text,
    number,
    run_name,
)
from supervisor.importers.errortext import task_line
from supervisor.importers.prompts import role_of_user_text
from supervisor.protocol import arg_names
from supervisor.protocol.arg_names import renamed

AGENT = "opencode"


def matches(doc: Any) -> bool:
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        return False
    info = doc.get("info")
    return (isinstance(info, dict) and isinstance(info.get("id"), str)
            and info["id"].startswith("ses_")
            and all(isinstance(m, dict) and isinstance(m.get("info"), dict)
                    and isinstance(m.get("parts"), list) for m in doc["messages"][:20]))


def _ms(value: Any) -> float | None:
    """OpenCode's times are Unix milliseconds."""
    ms = number(value)
    return ms / 1000.0 if ms is not None and ms > 0 else None


def load(doc: Any, path: Path) -> list[SpooledRun]:
    if not matches(doc):
        raise FormatError("not an OpenCode session export (needs info.id ses_... and "
                          "messages of {info, parts})")
    builder = RunBuilder(AGENT, path)
    task: str | None = None
    for message in doc["messages"]:
        info, parts = message["info"], message["parts"]
        ts = _ms(as_dict(info.get("time")).get("created"))
        role = info.get("role")
        for part in parts:
            part = as_dict(part)
            kind = part.get("type")
            if kind == "text" and role == "user":
                text = as_text(part.get("text"))
                said = role_of_user_text(text)
                if said == "user":
                    task = task or task_line(text)
                builder.message(said, text, ts)
            elif kind == "text" and role == "assistant":
                builder.message("assistant", part.get("text"),
                                _ms(as_dict(part.get("time")).get("start")) or ts)
            elif kind == "reasoning" and role == "assistant":
                builder.message("assistant", part.get("text"), ts, thinking=True)
            elif kind == "tool" and isinstance(part.get("tool"), str):
                _tool(builder, part, ts)
        if role == "assistant":
            tokens = as_dict(info.get("tokens"))
            builder.usage(tokens.get("input"), tokens.get("output"), info.get("cost"),
                          _ms(as_dict(info.get("time")).get("completed")) or ts)
    session = doc["info"]
    builder.session_start(AGENT, task, session.get("directory"))
    meta = {"session_id": session.get("id"), "title": session.get("title"),
            "opencode_version": session.get("version")}
    return [builder.build(run_name(path, session.get("id")), meta)]


def _tool(builder: RunBuilder, part: dict[str, Any], ts: float | None) -> None:
    state = as_dict(part.get("state"))
    times = as_dict(state.get("time"))
    args = renamed(as_dict(state.get("input")), arg_names.OPENCODE)
    call_id = builder.tool_call(part["tool"], args, part.get("callID"),
                                _ms(times.get("start")) or ts)
    status = state.get("status")
    if status not in ("completed", "error"):
        return  # pending or running when exported: no outcome
    code = as_dict(state.get("metadata")).get("exit")
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    ok = status == "completed" and not code
    output = as_text(state.get("output")) if status == "completed" else as_text(
        state.get("error"))
    error = None
    if not ok:
        error = f"exit code {code}" if code else (as_text(state.get("error")) or "error")
    start, end = number(times.get("start")), number(times.get("end"))
    builder.tool_result(call_id, ok, output, error=error, ts=_ms(end) or ts,
                        duration_ms=end - start if start and end and end >= start else None,
                        exit_code=code)


IMPORTER = Importer(
    "opencode", "OpenCode session export .json (opencode export: {info, messages})",
    matches, load,
    tools=ToolVocabulary(shell=("bash",), edit=("edit",), write=("write",), read=("read",)),
)
