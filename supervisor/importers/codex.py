"""Codex CLI rollouts (`~/.codex/sessions/.../rollout-*.jsonl`): `{timestamp, type, payload}`.

`response_item` lines carry the model's items: `message` (user or assistant text),
`reasoning` (its summary becomes an assistant message, `thinking: true`), `function_call` and
`custom_tool_call` (a `tool_call` named as Codex named it, `shell_command`, `apply_patch`, ...,
with the JSON arguments, or `{"input": ...}` for custom tools; an MCP tool, which the rollout
records as a bare `name` in a `namespace`, is named as Codex's hooks name it, `mcp__server__tool`
(`_mcp_name`), so the policy's `mcp__*` categories apply to imported runs as to live ones; an
`exec` whose JavaScript snippet
runs shell commands through `tools.exec_command`, or polls through `tools.write_stdin`, is read
as those calls, the output going to the last: `_cell_calls`) and their
`*_output` (a `tool_result`; ok from the recorded `Exit code: N` or `metadata.exit_code`, and
for an MCP call from its `mcp_tool_call_end` event: an `Err`, or `isError`, is a failure whose
error is the tool's first line).
`event_msg` lines of type `token_count` give token usage (the `last_token_usage` of each
answer, counted once: Codex writes it twice, with the same `total_token_usage`; its input holds
the cached input, counted apart as `cache_read_tokens`); other `event_msg` lines repeat what
the response items say and are skipped, as are record types this importer does not know
(counted in the run's `skipped`). User messages the harness wrote (`AGENTS.md` instructions,
the environment) are system messages: only a person's prompt is a task boundary.
A rollout records no end of session.
"""

from __future__ import annotations

import re
from collections import Counter
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
    iso_ts,
    parse_json_args,
    records,
    run_name,
    uncached,
)
from supervisor.importers.document import Records
from supervisor.importers.errortext import task_line
from supervisor.importers.prompts import role_of_user_text
from supervisor.protocol.bounded import loads

AGENT = "codex"
_LINE_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg",
                         "compacted"})
_EXIT = re.compile(r"^Exit code: (-?\d+)", re.MULTILINE)


def matches(records: Any) -> bool:
    """Every record of the head has the rollout's shape ({type, payload}) and one at least a
    type this importer knows: a newer Codex adds record types (Codex Desktop's
    `world_state`), which are skipped and counted, never a reason to refuse the file."""
    if not isinstance(records, list | Records) or not records:
        return False
    head = [r for r in records[:20] if isinstance(r, dict)]
    return bool(head) and all(
        isinstance(r.get("type"), str) and isinstance(r.get("payload"), dict) for r in head
    ) and any(r["type"] in _LINE_TYPES for r in head)


def load(records: Any, path: Path) -> list[SpooledRun]:
    if not matches(records):
        raise FormatError("not a Codex rollout (needs {timestamp, type, payload} lines)")
    builder = RunBuilder(AGENT, path)
    open_calls: dict[str, str] = {}
    mcp_failed: dict[str, str] = {}  # call id -> the error an MCP call ended with
    skipped: Counter[str] = Counter()
    meta: dict[str, Any] = {"session_id": None, "model": None, "cli_version": None}
    task = cwd = None
    counted: Any = None  # the session's total at the last usage counted
    for record in records:
        if not isinstance(record, dict) or not isinstance(record.get("payload"), dict):
            skipped["not an object"] += 1
            continue
        payload = record["payload"]
        kind = record.get("type")
        ts = iso_ts(record.get("timestamp"))
        item = payload.get("type")
        if kind == "session_meta":
            meta["session_id"] = payload.get("id")
            meta["cli_version"] = payload.get("cli_version")
            cwd = cwd or payload.get("cwd")
        elif kind == "turn_context":
            meta["model"] = meta["model"] or payload.get("model")
        elif kind == "event_msg" and item == "token_count":
            info = as_dict(payload.get("info"))
            last, total = info.get("last_token_usage"), info.get("total_token_usage")
            if total is not None and total == counted:
                continue  # Codex reports one answer's usage twice (the same session total)
            counted = total
            if isinstance(last, dict):
                cached = last.get("cached_input_tokens")
                builder.usage(uncached(last.get("input_tokens"), cached),
                              last.get("output_tokens"), None, ts, cache_read=cached)
        elif kind == "event_msg" and item == "mcp_tool_call_end":
            error = _mcp_error(payload.get("result"))
            if error is not None:
                mcp_failed[str(payload.get("call_id"))] = error
        elif kind == "response_item" and item == "message":
            role = payload.get("role")
            text = as_text(payload.get("content"))
            if role == "user":
                if text.lstrip().startswith("<environment_context>"):
                    continue
                role = role_of_user_text(text)
                if role == "user":
                    task = task or task_line(text)
                builder.message(role, text, ts)
            elif role in ("assistant", "system"):
                builder.message(role, text, ts)
        elif kind == "response_item" and item == "reasoning":
            builder.message("assistant", as_text(payload.get("summary")), ts, thinking=True)
        elif kind == "response_item" and item in ("function_call", "custom_tool_call"):
            name = _mcp_name(payload.get("namespace"), str(payload.get("name")))
            native = payload.get("call_id")
            if item == "function_call":
                args = parse_json_args(payload.get("arguments"))
            else:
                args = {"input": payload.get("input")}
                cell = _cell_calls(payload.get("input")) if name == "exec" else []
                for inner_name, inner_args in cell[:-1]:  # their outcome is not apart
                    inner = builder.tool_call(inner_name, inner_args, None, ts)
                    builder.tool_result(inner, True, "", ts=ts)
                if cell:
                    name, args = cell[-1]
            open_calls[str(native)] = builder.tool_call(name, args, native, ts)
        elif kind == "response_item" and item in ("function_call_output",
                                                   "custom_tool_call_output"):
            native = str(payload.get("call_id"))
            call_id = open_calls.pop(native, None)
            if call_id is None:
                skipped["output without call"] += 1
                continue
            output, code = _output(payload.get("output"))
            failed = mcp_failed.pop(native, None)
            ok = failed is None and (code == 0 if code is not None else True)
            builder.tool_result(call_id, ok, output,
                                error=None if ok else failed or f"exit code {code}",
                                ts=ts, exit_code=code)
        else:
            skipped[f"{kind}/{item}"] += 1
    builder.session_start(AGENT, task, cwd)
    meta.update(skipped=dict(skipped), pending_calls=len(open_calls))
    return [builder.build(run_name(path, meta["session_id"]), meta)]


_MCP = "mcp__"


def _mcp_name(namespace: Any, name: str) -> str:
    """The name Codex gives an MCP call in its hook payloads (`tool_name`), from the rollout's
    `namespace` and `name`: `mcp__codex_apps__github` and `_get_pr_reactions` are
    `mcp__codex_apps__github__get_pr_reactions` (Codex trims the namespace's trailing and the
    name's leading underscores and joins them with `__`). Only `mcp__` namespaces are MCP
    servers' (Codex's own namespaced tools, `multi_agent_v1`, ..., have hook names of their
    own, not derivable here): any other call keeps its bare name."""
    if not isinstance(namespace, str) or not namespace.startswith(_MCP):
        return name
    return f"{namespace.rstrip('_')}__{name.lstrip('_')}"


def _key(name: str) -> str:
    """An object key in a cell's JavaScript as the model writes it: bare (`cmd:`) or quoted
    (`"cmd":`, `'cmd':`, as JSON is)."""
    return rf"""(?:\b{name}|"{name}"|'{name}')\s*:\s*"""


_STRING = r"""(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|`([^`$\\]*)`)"""
_EXEC = re.compile(r"tools\.exec_command\(\s*\{[^{}]*?" + _key("cmd") + _STRING)
_POLL = re.compile(r"tools\.write_stdin\(\s*\{([^{}]*)\}\s*\)")
_SESSION = re.compile(_key("session_id") + r"(\d+)\b")
_CHARS = re.compile(_key("chars") + _STRING)
_TOOL = re.compile(r"\btools\.(\w+)\s*\(")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\", "`": "`"}
_UNICODE = re.compile(r"\\u([0-9a-fA-F]{4})")


def _cell_calls(script: Any) -> list[tuple[str, dict[str, Any]]]:
    """The calls a Codex code-mode `exec` cell makes, in the order it makes them (read without
    running it: only literals count): each `tools.exec_command({cmd: "..."})` as that
    `exec_command`, each `tools.write_stdin({session_id: N, chars: "..."})` as that
    `write_stdin` (how code mode polls a command still running in its PTY, or types into it),
    keys bare or quoted as JSON (`{"cmd": ...}`, `{"session_id": 3}`: models write both).
    A `write_stdin` on the session of a command the cell itself started (`r.session_id`:
    no literal) waits for that command to end: part of that `exec_command`, not a call of
    its own.
    Empty: the cell makes no call this can read, or it polls and calls another tool too
    (it stays the `exec` call it is)."""
    if not isinstance(script, str):
        return []
    script = script[:100_000]
    found: list[tuple[int, str, dict[str, Any]]] = []
    for match in _EXEC.finditer(script):
        found.append((match.start(), "exec_command", {"cmd": _literal(match)}))
    polls = 0
    for match in _POLL.finditer(script):
        body = match.group(1)
        session = _SESSION.search(body)
        if session is None:  # `r.session_id`: a command this cell started, if it runs one
            if found:
                continue
            return []
        chars = _CHARS.search(body)
        polls += 1
        found.append((match.start(), "write_stdin", {
            "session_id": int(session.group(1)), "chars": _literal(chars) if chars else ""}))
    if polls and len(found) == polls and any(
            m.group(1) != "write_stdin" for m in _TOOL.finditer(script)):
        return []  # polls, and calls another tool whose outcome is not apart
    return [(name, args) for _, name, args in sorted(found, key=lambda f: f[0])]


def _literal(match: re.Match[str]) -> str:
    """A JavaScript string literal's text (the first group of `_STRING` that matched),
    its escapes read."""
    text = next(g for g in match.groups()[-3:] if g is not None)
    text = _UNICODE.sub(lambda m: chr(int(m.group(1), 16)), text)
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), text)


def _mcp_error(result: Any) -> str | None:
    """The error an MCP call ended with (`mcp_tool_call_end`'s `result`: `{"Err": text}`, or
    `{"Ok": {..., "isError": true}}` with the tool's words in `content`); None: it did not
    fail, or the record does not say."""
    if not isinstance(result, dict):
        return None
    if "Err" in result:
        return as_text(result["Err"]) or "MCP call failed"
    ok = as_dict(result.get("Ok"))
    if ok.get("isError") is True:
        return as_text(ok.get("content")) or "MCP tool reported an error"
    return None


def _output(raw: Any) -> tuple[str, int | None]:
    """The output text and exit code of a call's output (plain text, or JSON for custom tools)."""
    text = raw if isinstance(raw, str) else as_text(raw)
    if isinstance(raw, str) and raw.startswith("{"):
        try:
            value = loads(raw, constants=True)
        except ValueError:
            value = None
        if isinstance(value, dict) and "output" in value:
            meta = as_dict(value.get("metadata"))
            code = meta.get("exit_code")
            return as_text(value["output"]), code if isinstance(code, int) else None
    match = _EXIT.search(text[:200])
    return text, int(match.group(1)) if match else None


IMPORTER = Importer(
    "codex", "Codex CLI rollout .jsonl (session_meta/response_item lines)",
    matches, load, reads=records,
    tools=ToolVocabulary(shell=("shell", "exec_command", "local_shell", "shell_command"),
                         edit=("apply_patch",), poll=("write_stdin", "wait_agent"),
                         command_keys=("cmd", "command"), input_keys=("chars",)),
)
