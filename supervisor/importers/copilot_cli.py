"""GitHub Copilot CLI sessions (`~/.copilot/session-state/<session id>/events.jsonl`).

One JSON record per line, `{type, data, id, timestamp, parentId}`; the file starts with
`session.start` (`producer: "copilot-agent"`, `sessionId`, `context.cwd`). `user.message` is the
person's prompt (`content`); `assistant.message` carries the reply text and `toolRequests[
{toolCallId, name, arguments}]`, each a `tool_call` named as Copilot named it (`bash`, `view`,
`edit`, `create`, ...; its names are in the tool vocabulary below); `tool.execution_complete`
(`toolCallId`, `success`, `result.content`, `error`, `shellExecution.exitCode`) is its
`tool_result`: a shell command that exits non-zero is a failure although Copilot records
`success: true`. The `<shellId: N ...>` counter in a shell result is dropped, as the hook
target does, so a repeated command's identical outcome looks identical.
`session.usage_record` is a `usage` event, `session.shutdown` the end. The system prompt,
turn markers and background-task notices are left out.
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
    records,
    run_name,
)
from supervisor.importers.document import Records
from supervisor.importers.errortext import task_line
from supervisor.importers.prompts import role_of_user_text

AGENT = "copilot-cli"
_SHELL_ID = re.compile(r"<shellId: \d+ ")
_START = "session.start"


def matches(lines: Any) -> bool:
    if not isinstance(lines, list | Records) or not lines:
        return False
    first = lines[0]
    return (isinstance(first, dict) and first.get("type") == _START
            and as_dict(first.get("data")).get("producer") == "copilot-agent")


def is_session_file(path: Path) -> bool:
    """Whether `path` (named `events.jsonl`, as our own session logs are) is a Copilot CLI
    session: its first line is Copilot's `session.start`. Reads at most its first 4 KiB."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    first = head.split(b"\n", 1)[0]
    return b'"type":"session.start"' in first and b'"producer":"copilot-agent"' in first


def load(lines: Any, path: Path) -> list[SpooledRun]:
    if not matches(lines):
        raise FormatError("not a Copilot CLI session (needs a session.start line from "
                          "copilot-agent first)")
    builder = RunBuilder(AGENT, path)
    start = as_dict(lines[0].get("data"))
    task: str | None = None
    ended = False
    for record in lines:
        if not isinstance(record, dict):
            continue
        kind, data = record.get("type"), as_dict(record.get("data"))
        ts = iso_ts(record.get("timestamp"))
        if kind == "user.message":
            text = as_text(data.get("content"))
            role = role_of_user_text(text)
            if role == "user":
                task = task or task_line(text)
            builder.message(role, text, ts)
        elif kind == "assistant.message":
            builder.message("assistant", data.get("content"), ts)
            for request in as_list(data.get("toolRequests")):
                request = as_dict(request)
                if isinstance(request.get("name"), str):
                    builder.tool_call(request["name"], as_dict(request.get("arguments")),
                                      request.get("toolCallId"), ts)
        elif kind == "tool.execution_complete":
            _result(builder, data, ts)
        elif kind == "session.usage_record":
            usage = as_dict(data.get("usage"))
            builder.usage(usage.get("inputTokens"), usage.get("outputTokens"),
                          usage.get("cost"), ts)
        elif kind == "session.shutdown" and not ended:
            ended = True
            builder.session_end("completed", as_text(data.get("shutdownType")) or None, ts)
    context = as_dict(start.get("context"))
    builder.session_start(AGENT, task, context.get("cwd"))
    meta = {"session_id": start.get("sessionId"), "model": start.get("selectedModel"),
            "copilot_version": start.get("copilotVersion")}
    return [builder.build(run_name(path, start.get("sessionId")), meta)]


def _result(builder: RunBuilder, data: dict[str, Any], ts: float | None) -> None:
    call_id = data.get("toolCallId")
    if not isinstance(call_id, str) or not builder.has_open_call(call_id):
        return
    result = as_dict(data.get("result"))
    raw_error = data.get("error")
    said = as_text(as_dict(raw_error).get("message") if isinstance(raw_error, dict)
                   else raw_error)
    output = _SHELL_ID.sub("<shellId: ", as_text(result.get("content"))) or said
    code = as_dict(data.get("shellExecution")).get("exitCode")
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    ok = data.get("success") is True and not code
    reason = None
    if not ok:
        reason = f"exit code {code}" if code else (said or "the tool call failed")
    builder.tool_result(call_id, ok, output, error=reason, ts=ts, exit_code=code)


IMPORTER = Importer(
    "copilot-cli", "GitHub Copilot CLI session events.jsonl (session.start from copilot-agent)",
    matches, load, reads=records,
    tools=ToolVocabulary(shell=("bash",), edit=("edit",), write=("create",)),
)
