"""Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/session-*.json`).

One object `{sessionId, projectHash, startTime, lastUpdated, messages[]}`. `user` messages are
prompts; `gemini` messages carry the reply text, `thoughts[]` (assistant messages), `tokens`
(a `usage` event) and `toolCalls[{id, name, args, result, status}]`: a `tool_call` named as
Gemini named it (`run_shell_command`, `write_file`, `read_file`, ...) and a `tool_result` whose
ok comes from `status` and, for shell commands, the recorded `Exit Code: N`. Other message
types (`info`, `error`) become system messages. A session file records no end of session.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from supervisor.engine.tools import ToolVocabulary
from supervisor.importers.base import (
    FormatError,
    Importer,
    RunBuilder,
    SpooledRun,
    as_dict,
    as_list,
    as_text,
    iso_ts,
    run_name,
    uncached,
)
from supervisor.importers.errortext import task_line

AGENT = "gemini-cli"
_EXIT = re.compile(r"^Exit Code: (-?\d+)", re.MULTILINE)


def matches(doc: Any) -> bool:
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        return False
    return "sessionId" in doc and all(
        isinstance(m, dict) and "type" in m for m in doc["messages"][:20]
    )


def load(doc: Any, path: Path) -> list[SpooledRun]:
    if not matches(doc):
        raise FormatError("not a Gemini CLI session (needs sessionId and messages)")
    builder = RunBuilder(AGENT, path)
    task = None
    model = None
    for message in doc["messages"]:
        if not isinstance(message, dict):
            continue
        ts = iso_ts(message.get("timestamp"))
        kind = message.get("type")
        text = as_text(message.get("content"))
        if kind == "user":
            task = task or task_line(text)
            builder.message("user", text, ts)
            continue
        if kind != "gemini":
            builder.message("system", text, ts, gemini_type=kind)
            continue
        model = model or message.get("model")
        for thought in as_list(message.get("thoughts")):
            if isinstance(thought, dict):
                body = "\n".join(str(thought.get(k)) for k in ("subject", "description")
                                 if thought.get(k))
                builder.message("assistant", body, iso_ts(thought.get("timestamp")) or ts,
                                thinking=True)
        builder.message("assistant", text, ts)
        tokens = as_dict(message.get("tokens"))
        builder.usage(uncached(tokens.get("input"), tokens.get("cached")), tokens.get("output"),
                      None, ts, cache_read=tokens.get("cached"))
        for call in as_list(message.get("toolCalls")):
            if isinstance(call, dict) and isinstance(call.get("name"), str):
                _tool_call(builder, call, ts)
    builder.session_start(AGENT, task, None)
    meta = {"session_id": doc.get("sessionId"), "model": model,
            "project_hash": doc.get("projectHash")}
    return [builder.build(run_name(path, doc.get("sessionId")), meta)]


def _tool_call(builder: RunBuilder, call: dict[str, Any], ts: float | None) -> None:
    args = as_dict(call.get("args"))
    call_id = builder.tool_call(call["name"], args, call.get("id"), ts)
    results = as_list(call.get("result"))
    if not results:
        return
    parts = []
    for item in results:
        response = as_dict(as_dict(as_dict(item).get("functionResponse")).get("response"))
        if response:
            parts.append(as_text(response.get("output", response.get("error", response))))
    output = "\n".join(parts)
    match = _EXIT.search(output)
    code = int(match.group(1)) if match else None
    status = call.get("status")
    ok = status == "success" and (code is None or code == 0)
    error = None if ok else (f"exit code {code}" if code else f"status {status}")
    done = iso_ts(call.get("timestamp")) or ts
    builder.tool_result(call_id, ok, output, error=error, ts=done, exit_code=code)


IMPORTER = Importer(
    "gemini-cli", "Gemini CLI session .json (messages with toolCalls)",
    matches, load,
    tools=ToolVocabulary(shell=("run_shell_command",), edit=("replace",), write=("write_file",),
                         read=("read_file",)),
)
