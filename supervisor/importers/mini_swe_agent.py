"""mini-swe-agent `.traj.json`: a chat whose every assistant turn runs one bash command.

Three variants are accepted:
- the early bare list of `{role, content}` messages (no `info`), commands fenced as
  ```` ```bash ```` or ```` ```mswea_bash_command ````;
- `"trajectory_format": "mini-swe-agent-1"`: `{info, messages, ...}`, the same chat in an object;
- `"mini-swe-agent-1.1"`: OpenAI tool calls (`tool_calls[].function.arguments` holds
  `{"command": ...}`, observations have `role: "tool"`), with an `extra` object per message
  (timestamps, cost, the raw response with token usage) and a final `role: "exit"` message.

The tool is always `bash` with `{"command": ...}`. Observations carry
`<returncode>N</returncode>`: ok means 0. The exit status comes from `info.exit_status`.
"""

from __future__ import annotations

import re
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
    number,
    parse_json_args,
    run_name,
)
from supervisor.importers.errortext import task_line

AGENT = "mini-swe-agent"

_BLOCK = re.compile(r"```(?:bash|mswea_bash_command)[ \t]*\n(.*?)\n?```", re.DOTALL)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_TAG = r"<{0}>\n?(.*?)\n?</{0}>"
_EXCEPTION = re.compile(_TAG.format("exception"), re.DOTALL)

_EXIT = {"Submitted": "completed", "LimitsExceeded": "terminated"}
"""info.exit_status -> session_end status; any other status (an exception name) is failed."""


def matches(doc: Any) -> bool:
    """A mini-swe-agent trajectory (object with messages and a mini marker, or a bare chat)."""
    if isinstance(doc, dict):
        if not isinstance(doc.get("messages"), list):
            return False
        fmt = doc.get("trajectory_format")
        info = doc.get("info")
        return (isinstance(fmt, str) and fmt.startswith("mini-swe-agent")) or (
            isinstance(info, dict) and "mini_version" in info
        )
    if isinstance(doc, list) and doc:
        if not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in doc):
            return False
        roles = {m["role"] for m in doc}
        return "assistant" in roles and any(
            m["role"] == "assistant" and _BLOCK.search(as_text(m.get("content"))) for m in doc
        )
    return False


def load(doc: Any, path: Path) -> list[SpooledRun]:
    if not matches(doc):
        raise FormatError("not a mini-swe-agent trajectory (needs 'messages' with bash turns)")
    info: dict[str, Any]
    if isinstance(doc, list):
        messages, info, variant, instance = doc, {}, "bare-list", None
    else:
        messages = doc["messages"]
        info = as_dict(doc.get("info"))
        variant = str(doc.get("trajectory_format") or "mini-swe-agent-1")
        instance = doc.get("instance_id")
    builder = RunBuilder(AGENT, path)
    state = _State(builder)
    for message in messages:
        if isinstance(message, dict):
            state.feed(message)
    stats = as_dict(info.get("model_stats"))
    if not state.costed:  # per-step costs not recorded: the run's total, where recorded
        builder.usage(0, 0, stats.get("instance_cost"))
    exit_status = info.get("exit_status")
    if isinstance(exit_status, str) and exit_status:
        reason = info.get("exception_str") or exit_status
        builder.session_end(_EXIT.get(exit_status, "failed"), str(reason), ts=state.exit_ts)
    builder.session_start(AGENT, state.task, None)
    meta = {
        "variant": variant,
        "exit_status": exit_status,
        "instance_id": instance,
        "model": state.model,
        "mini_version": info.get("mini_version"),
        "api_calls": stats.get("api_calls"),
        "cost_usd": number(stats.get("instance_cost")) or None,
        "submitted": bool(info.get("submission")),
    }
    return [builder.build(run_name(path, instance), meta)]


class _State:
    """Walks the chat, pairing each command with the observation that follows it."""

    def __init__(self, builder: RunBuilder) -> None:
        self.builder = builder
        self.task: str | None = None
        self.model: str | None = None
        self.pending: list[str] = []  # call ids of the last assistant turn, awaiting output
        self.costed = False
        self.exit_ts: float | None = None

    def feed(self, message: dict[str, Any]) -> None:
        role = message.get("role")
        extra = as_dict(message.get("extra"))
        ts = iso_ts(extra.get("timestamp"))
        content = as_text(message.get("content"))
        if role == "system":
            self.builder.message("system", content, ts)
        elif role == "assistant":
            self._assistant(message, content, extra, ts)
        elif role == "tool":
            self._observation(content, extra, ts, message.get("tool_call_id"))
        elif role == "user":
            if self.pending:  # the observation of the last command
                self._observation(content, extra, ts, None)
            elif self.task is None:
                self.task = task_line(content)
                self.builder.message("user", content, ts)
            else:
                # Later "user" turns are written by the framework (format errors, limits), not
                # by a person: recorded as system messages, so they do not start a new cycle.
                self.builder.message("system", content, ts)
        elif role == "exit":
            self.exit_ts = ts
            if self.pending and extra.get("exit_status") == "Submitted":
                # mini 2.x ends on the submit command: its output is the exit message
                self._observation(content, {"returncode": 0}, ts, None)

    def _assistant(
        self, message: dict[str, Any], content: str, extra: dict[str, Any], ts: float | None
    ) -> None:
        self.pending = []
        response = as_dict(extra.get("response"))
        if isinstance(response.get("model"), str):
            self.model = self.model or response["model"]
        tool_calls = message.get("tool_calls")
        if isinstance(tool_calls, list) and tool_calls:
            if content.strip():
                self.builder.message("assistant", content, ts)
            else:  # reasoning models may leave the content empty and reason separately
                self.builder.message("assistant", as_text(message.get("reasoning_content")), ts,
                                     thinking=True)
            for call in tool_calls:
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict):
                    continue
                name = function.get("name")
                tool = name if isinstance(name, str) else "bash"
                args = parse_json_args(function.get("arguments"))
                self.pending.append(self.builder.tool_call(tool, args, call.get("id"), ts))
        else:
            blocks = _BLOCK.findall(content)
            self.builder.message("assistant", _BLOCK.sub("", content).strip() if blocks
                                 else content, ts)
            if len(blocks) == 1:  # mini runs a turn's command only when there is exactly one
                self.pending.append(self.builder.tool_call("bash", {"command": blocks[0]},
                                                           None, ts))
        usage = as_dict(response.get("usage"))
        cost = number(extra.get("cost"))
        if usage or cost:
            self.costed = self.costed or cost is not None
            self.builder.usage(usage.get("prompt_tokens"), usage.get("completion_tokens"), cost,
                               ts)

    def _observation(
        self, content: str, extra: dict[str, Any], ts: float | None, call_id: Any
    ) -> None:
        if not self.pending:
            self.builder.message("system", content, ts)
            return
        cid = str(call_id) if call_id is not None and str(call_id) in self.pending else None
        cid = cid or self.pending[0]
        self.pending.remove(cid)
        code = extra.get("returncode")
        if not isinstance(code, int) or isinstance(code, bool):
            match = _RETURNCODE.search(content)
            code = int(match.group(1)) if match else None
        output = extra.get("raw_output")
        if not isinstance(output, str):
            output = _output_of(content)
        exception = extra.get("exception_info") or _first(_EXCEPTION, content)
        ok = code == 0 if code is not None else not exception
        error = None
        if not ok:
            error = str(exception) if exception else f"exit code {code}"
        self.builder.tool_result(cid, ok, output, error=error, ts=ts, returncode=code)


def _first(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match.group(1) if match else None


def _output_of(content: str) -> str:
    """The command output inside an observation (`<output>`, or head and tail of a long one)."""
    whole = _first(re.compile(_TAG.format("output"), re.DOTALL), content)
    if whole is not None:
        return whole
    head = _first(re.compile(_TAG.format("output_head"), re.DOTALL), content)
    tail = _first(re.compile(_TAG.format("output_tail"), re.DOTALL), content)
    if head is not None or tail is not None:
        elided = _first(re.compile(_TAG.format("elided_chars"), re.DOTALL), content)
        middle = f"\n[{elided.strip()} characters elided]\n" if elided else "\n[...]\n"
        return (head or "") + middle + (tail or "")
    return content


IMPORTER = Importer(
    "mini-swe-agent", "mini-swe-agent .traj.json (chat messages; bare list, v1 or v1.1 tools)",
    matches, load,
)
