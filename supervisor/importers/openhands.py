"""OpenHands runs: event streams, evaluation/resolver `output.jsonl`, and LLM completion logs.

- Event stream (a JSON list): events with `id`, `timestamp`, `source`, and either `action` +
  `args` or `observation` + `cause` (the id of the action) + `content` + `extras`.
- `output.jsonl` (one instance per line): `history` is a list of such events, in the flat form
  of older versions (action args inline, no `source`), or, in v1.5 files, `[action,
  observation]` pairs; or, from the software-agent SDK (V1) benchmarks, typed events
  (`kind`: `ActionEvent`, `ObservationEvent`, `AgentErrorEvent`, `MessageEvent`, ...), where a
  call is named by its `tool_name` and the calls of one model response share a `batch`.
- LLM completion logs (`llm_completions/.../*.json`): `messages` (or `fncall_messages`, the
  history converted to tool-calling form) and `response` (or `fncall_response`); the last
  action of the run may only be in the response.
- A session's event directory as OpenHands stores it (`sessions/<id>/events/<n>.json`, one
  event per file): the same events as an event stream, in the order of `n`.

Each agent action other than `message` and bookkeeping (`change_agent_state`, `recall`, ...)
becomes a `tool_call` named after the action (`run`, `read`, `edit`, `run_ipython`, `finish`,
...) or, in completion logs, after the function (`execute_bash`, `str_replace_editor`, ...);
its `thought` becomes an assistant `message`. Observations become `tool_result`s: a `run`
fails when its exit code is not 0, an `error` observation always fails, others fail on
`success: false` or a known error text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from supervisor.importers.base import (
    FormatError,
    Importer,
    RunBuilder,
    SpooledRun,
    as_list,
    as_text,
    first_line,
    iso_ts,
    number,
    parse_json_args,
    run_name,
)
from supervisor.importers.document import HEAD_RECORDS, Document, Records
from supervisor.importers.errortext import known_error, task_line
from supervisor.protocol.bounded import loads

AGENT = "openhands"

BOOKKEEPING_ACTIONS = frozenset({
    "change_agent_state", "recall", "condensation", "condensation_request", "null",
    "system", "message", "start", "reject",
})
"""Actions that are not tool calls (`message` and `system` become messages instead)."""
SKIPPED_OBSERVATIONS = frozenset({"null", "recall", "condense", "agent_condensation"})
DROPPED_ARGS = frozenset({
    "thought", "is_confirmed", "confirmation_state", "security_risk", "action_risk",
    "kernel_init_code", "impl_source", "keep_prompt", "hidden", "translated_ipython_code",
    "blocking",
})
"""Bookkeeping arguments left out of `tool_call.args` (the thought becomes a message)."""
_EVENT_KEYS = frozenset({
    "id", "timestamp", "source", "message", "action", "observation", "cause", "content",
    "extras", "args", "tool_call_metadata", "llm_metrics", "timeout", "success",
})
_NO_RESULT = frozenset({"finish", "think", "delegate"})
_EXIT_CODE_TEXT = re.compile(
    r"\[(?:The command completed|Command finished) with exit code (-?\d+)"
)
_TIMEOUT_TEXT = re.compile(r"\[(?:The command timed out|Command .{0,80}timed out)")


def matches(doc: Any) -> bool:
    """An OpenHands event stream, list of output records, or completion log."""
    if isinstance(doc, dict):
        if "fncall_messages" in doc or "fncall_response" in doc:
            return True
        return (isinstance(doc.get("messages"), list) and isinstance(doc.get("response"), dict)
                and any(k in doc for k in ("kwargs", "cost", "timestamp")))
    if isinstance(doc, Records):  # JSON Lines, read as they come: judged by their head
        head = doc[:HEAD_RECORDS]
        if not head or not all(isinstance(e, dict) for e in head):
            return False
    elif not isinstance(doc, list) or not doc or not all(isinstance(e, dict) for e in doc):
        return False
    if "history" in doc[0]:
        return is_output_record(doc[0])
    return any(("action" in e or "observation" in e) and ("source" in e or "id" in e)
               for e in doc[:50])


def is_output_record(value: Any) -> bool:
    """One line of an evaluation/resolver `output.jsonl` (not a SWE-agent trajectory)."""
    return (isinstance(value, dict) and isinstance(value.get("history"), list)
            and "trajectory" not in value)


def load(doc: Any, path: Path) -> Iterable[SpooledRun]:
    if not matches(doc):
        raise FormatError("not an OpenHands run (event list, output.jsonl or completion log)")
    if isinstance(doc, dict):
        return [_completion_log(doc, path)]
    if "history" in doc[0]:  # one run per line, each built when it is taken
        return (_output_record(record, path, index) for index, record in enumerate(doc, 1))
    builder = RunBuilder(AGENT, path)
    stream = _Stream(builder)
    stream.feed_all(doc)
    stream.finish(error=None)
    builder.session_start(AGENT, stream.task, stream.cwd)
    meta = {"variant": "event-stream", "model": stream.model, "agent_state": stream.state,
            "finished": stream.finished}
    return [builder.build(run_name(path), meta)]


_EVENT_FILE = re.compile(r"\d+\.json")


def is_event_dir(path: Path) -> bool:
    """True for a directory of numbered event files (`0.json`, `1.json`, ...) and nothing else."""
    try:
        names = [entry.name for entry in os.scandir(path) if not entry.name.startswith(".")]
    except OSError:
        return False
    return bool(names) and all(_EVENT_FILE.fullmatch(name) for name in names)


def load_event_dir(path: Path) -> list[SpooledRun]:
    """The run stored as one file per event; named after the session (`<id>/events`)."""
    files = sorted((p for p in path.iterdir() if _EVENT_FILE.fullmatch(p.name)),
                   key=lambda p: int(p.stem))
    events = []
    for file in files:
        try:
            events.append(loads(file.read_bytes(), constants=True))
        except (OSError, ValueError) as exc:
            raise FormatError(f"{file.name}: not a JSON event ({exc})") from None
    if not matches(events):
        raise FormatError("not an OpenHands event directory (its files are not events)")
    builder = RunBuilder(AGENT, path)
    stream = _Stream(builder)
    stream.feed_all(events)
    stream.finish(error=None)
    builder.session_start(AGENT, stream.task, stream.cwd)
    meta = {"variant": "event-directory", "model": stream.model, "agent_state": stream.state,
            "finished": stream.finished, "event_files": len(files)}
    session = path.parent if path.name == "events" else path
    return [builder.build(run_name(path, session.name), meta)]


def _output_record(record: Any, path: Path, index: int) -> SpooledRun:
    if not isinstance(record, dict) or not isinstance(record.get("history"), list):
        raise FormatError(f"line {index}: not an OpenHands output record (no 'history' list)")
    history = record["history"]
    pairs = bool(history) and all(isinstance(h, list) for h in history)
    events = [e for pair in history for e in pair] if pairs else history
    metrics = _dict(record.get("metrics"))
    costs = [number(c) for c in metrics.get("costs") or []] \
        if isinstance(metrics.get("costs"), list) else []
    builder = RunBuilder(AGENT, path)
    sdk = is_sdk_history(events)
    per_call = not sdk and bool(costs) and None not in costs
    # one cost per LLM call, and one LLM call per agent action: each is charged to its action,
    # if the counts agree (known only once the events are read: else they are read again)
    stream: _Stream | _SdkStream = _SdkStream(builder) if sdk else _Stream(
        builder, step_costs=costs if per_call else None)
    stream.feed_all(events)
    if per_call and len(costs) != stream.agent_actions:
        builder = RunBuilder(AGENT, path)
        stream = _Stream(builder)
        stream.feed_all(events)
    tokens = _dict(metrics.get("accumulated_token_usage"))
    if stream.step_costs is not None:
        builder.usage(tokens.get("prompt_tokens"), tokens.get("completion_tokens"), None)
    elif stream.usage_ids:  # tokens came with the events; add the run's cost where recorded
        builder.usage(0, 0, metrics.get("accumulated_cost"))
    else:
        builder.usage(tokens.get("prompt_tokens"), tokens.get("completion_tokens"),
                      metrics.get("accumulated_cost"))
    error = record.get("error")
    stream.finish(error=str(error) if error not in (None, "", "None") else None)
    instance = _dict(record.get("instance"))
    issue = _dict(record.get("issue"))
    metadata = _dict(record.get("metadata"))
    task = (task_line(instance.get("problem_statement")) or first_line(issue.get("title"))
            or task_line(record.get("instruction")) or stream.task)
    builder.session_start(AGENT, task, stream.cwd)
    issue_name = (f"{issue.get('owner')}-{issue.get('repo')}-{issue.get('number')}"
                  if issue.get("repo") else None)
    instance_id = record.get("instance_id") or instance.get("instance_id") or record.get("id") \
        or issue_name
    llm = _dict(metadata.get("llm_config"))
    meta = {
        "variant": "sdk-history" if sdk else "output-pairs" if pairs else "output-history",
        "instance_id": instance_id,
        "line": index,
        "model": metadata.get("model_name") or llm.get("model") or stream.model,
        "agent_class": metadata.get("agent_class"),
        "error": error if error not in ("", "None") else None,
        "test_result": record.get("test_result"),
        "success": record.get("success"),
        "cost_usd": number(metrics.get("accumulated_cost")),
        "finished": stream.finished,
    }
    name = run_name(path, instance_id) if instance_id else f"{run_name(path)}-{index}"
    return builder.build(name, meta)


def is_sdk_history(events: list[Any]) -> bool:
    """The typed events of the OpenHands software-agent SDK (V1): `kind` = `ActionEvent`,
    `ObservationEvent`, `MessageEvent`, ... instead of `action`/`observation` keys."""
    return any(isinstance(e, dict) and e.get("kind") in _SDK_KINDS for e in events[:50])


_SDK_KINDS = frozenset({"ActionEvent", "ObservationEvent", "MessageEvent", "AgentErrorEvent",
                        "UserRejectObservation", "SystemPromptEvent"})


class _SdkStream:
    """Feeds the SDK's typed events into a builder: each `ActionEvent` is a tool call (named
    by its `tool_name`, its arguments the action without `kind`; calls of one model response
    share a `batch`), answered by the `ObservationEvent`, `AgentErrorEvent` or
    `UserRejectObservation` with its `tool_call_id`."""

    def __init__(self, builder: RunBuilder) -> None:
        self.builder = builder
        self.task: str | None = None
        self.cwd: str | None = None
        self.model: str | None = None
        self.state: str | None = None
        self.finished = False
        self.usage_ids: set[str] = set()
        self.step_costs = None
        self.agent_actions = 0
        self.calls: dict[str, str] = {}

    def feed_all(self, events: list[Any]) -> None:
        for event in events:
            if not isinstance(event, dict):
                continue
            kind = event.get("kind")
            ts = iso_ts(event.get("timestamp"))
            if kind == "ActionEvent":
                self._action(event, ts)
            elif kind in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
                self._outcome(event, kind, ts)
            elif kind == "MessageEvent":
                message = _dict(event.get("llm_message"))
                role = str(message["role"]) if message.get("role") in ("user", "assistant") \
                    else "system"
                text = as_text(message.get("content"))
                if role == "user" and self.task is None:
                    self.task = task_line(text) or first_line(text)
                self.builder.message(role, text, ts)

    def _action(self, event: dict[str, Any], ts: float | None) -> None:
        action = _dict(event.get("action"))
        tool = event.get("tool_name") or action.get("kind") or "action"
        args = {k: v for k, v in action.items() if k != "kind"}
        thought = as_text(event.get("thought")) or as_text(event.get("reasoning_content"))
        self.builder.message("assistant", thought, ts)
        self.agent_actions += 1
        extra = {}
        if isinstance(event.get("llm_response_id"), str):
            extra["batch"] = event["llm_response_id"]
        native = event.get("tool_call_id") or event.get("id")
        call_id = self.builder.tool_call(str(tool), args, native, ts, **extra)
        if native is not None:
            self.calls[str(native)] = call_id
        if action.get("kind") == "FinishAction":
            self.finished = True

    def _outcome(self, event: dict[str, Any], kind: str, ts: float | None) -> None:
        call_id = self.calls.get(str(event.get("tool_call_id")))
        if call_id is None or not self.builder.has_open_call(call_id):
            return
        if kind == "AgentErrorEvent":
            text = as_text(event.get("error"))
            self.builder.tool_result(call_id, False, text, error=first_line(text), ts=ts)
            return
        if kind == "UserRejectObservation":
            text = as_text(event.get("rejection_reason")) or "rejected by the user"
            self.builder.tool_result(call_id, False, text, error="rejected by the user", ts=ts)
            return
        obs = _dict(event.get("observation"))
        output = obs.get("output") if "output" in obs else obs.get("content")
        text = as_text(output)
        metadata = _dict(obs.get("metadata"))
        if self.cwd is None and isinstance(metadata.get("working_dir"), str):
            self.cwd = metadata["working_dir"]
        code = _int(metadata.get("exit_code"))
        code = code if code is not None else _int(obs.get("exit_code"))
        error: str | None = None
        if obs.get("timeout") is True:
            error = "timed out"
        elif isinstance(obs.get("error"), str) and obs["error"]:
            error = first_line(obs["error"])
        elif obs.get("error") is True:
            error = "error"
        elif code not in (None, 0, -1):
            error = f"exit code {code}"
        extra = {"exit_code": code} if code is not None else {}
        self.builder.tool_result(call_id, error is None, text, error=error, ts=ts, **extra)

    def finish(self, error: str | None) -> None:
        if error:
            self.builder.session_end("failed", error)
        elif self.finished:
            self.builder.session_end("completed", "finish")


class _Stream:
    """Feeds OpenHands events (full or flat) into a builder, pairing observations to actions."""

    def __init__(self, builder: RunBuilder, step_costs: list[Any] | None = None) -> None:
        self.builder = builder
        self.step_costs = list(step_costs) if step_costs is not None else None
        self.agent_actions = 0
        self.ids: dict[str, str] = {}
        self.open: list[tuple[str, str]] = []  # (call id, action) awaiting an observation
        self.task: str | None = None
        self.cwd: str | None = None
        self.model: str | None = None
        self.state: str | None = None
        self.finished = False
        self.usage_ids: set[str] = set()

    def feed_all(self, events: list[Any]) -> None:
        for event in events:
            if isinstance(event, dict):
                if "action" in event:
                    self._action(event)
                elif "observation" in event:
                    self._observation(event)

    def finish(self, error: str | None) -> None:
        if error:
            self.builder.session_end("failed", error)
        elif self.state == "error":
            self.builder.session_end("failed", "agent state: error")
        elif self.state in ("stopped", "rejected"):
            self.builder.session_end("aborted", f"agent state: {self.state}")
        elif self.finished or self.state == "finished":
            self.builder.session_end("completed", "finish")

    def _action(self, event: dict[str, Any]) -> None:
        action = str(event["action"])
        args = event.get("args")
        if not isinstance(args, dict):
            args = {k: v for k, v in event.items() if k not in _EVENT_KEYS}
        ts = iso_ts(event.get("timestamp"))
        source = event.get("source")
        if action == "message":
            text = args.get("content") if "content" in args else event.get("message")
            user = source == "user" or (source is None and self.task is None)
            if user and self.task is None:
                self.task = task_line(as_text(text))
            if not user:
                self._step_cost(ts)
            self.builder.message("user" if user else "assistant", text, ts)
            return
        if action == "system":
            self.builder.message("system", args.get("content") or event.get("message"), ts)
            return
        if action in BOOKKEEPING_ACTIONS or source in ("user", "environment"):
            return
        self._step_cost(ts)
        self._usage(event.get("tool_call_metadata"), ts)
        self.builder.message("assistant", args.get("thought"), ts)
        call_args = {k: v for k, v in args.items() if k not in DROPPED_ARGS}
        native = event.get("id")
        call_id = self.builder.tool_call(action, call_args, native, ts)
        if native is not None:
            self.ids[str(native)] = call_id
        if action == "finish":
            self.finished = True
        if action not in _NO_RESULT:
            self.open.append((call_id, action))
        if self.cwd is None and isinstance(args.get("cwd"), str):
            self.cwd = args["cwd"]

    def _step_cost(self, ts: float | None) -> None:
        """Count an agent action; with per-call costs, charge the next one to it."""
        self.agent_actions += 1
        if self.step_costs:
            self.builder.usage(0, 0, self.step_costs.pop(0), ts)

    def _observation(self, event: dict[str, Any]) -> None:
        kind = str(event["observation"])
        extras = event.get("extras")
        if not isinstance(extras, dict):
            extras = {k: v for k, v in event.items() if k not in _EVENT_KEYS}
        if kind == "agent_state_changed":
            self.state = str(extras.get("agent_state") or "") or self.state
            return
        if kind in SKIPPED_OBSERVATIONS:
            return
        ts = iso_ts(event.get("timestamp"))
        content = as_text(event.get("content"))
        call_id = self._call_for(event.get("cause"), kind)
        if call_id is None:
            if kind == "error":
                self.builder.message("system", content, ts)
            return
        metadata = _dict(extras.get("metadata"))
        if self.cwd is None and isinstance(metadata.get("working_dir"), str):
            self.cwd = metadata["working_dir"]
        ok, error, code = _outcome(kind, event, extras, metadata, content)
        extra = {"exit_code": code} if code is not None else {}
        self.builder.tool_result(call_id, ok, content, error=error, ts=ts, **extra)

    def _call_for(self, cause: Any, kind: str) -> str | None:
        if cause is not None and str(cause) in self.ids:
            call_id = self.ids[str(cause)]
            self.open = [item for item in self.open if item[0] != call_id]
            return call_id if self.builder.has_open_call(call_id) else None
        for index in range(len(self.open) - 1, -1, -1):  # the latest action of this kind
            if self.open[index][1] == kind:
                return self.open.pop(index)[0]
        return self.open.pop()[0] if self.open else None

    def _usage(self, metadata: Any, ts: float | None) -> None:
        response = _dict(_dict(metadata).get("model_response"))
        key = str(response.get("id"))
        if not response or key in self.usage_ids:
            return
        self.usage_ids.add(key)
        if isinstance(response.get("model"), str):
            self.model = self.model or response["model"]
        usage = _dict(response.get("usage"))
        self.builder.usage(usage.get("prompt_tokens"), usage.get("completion_tokens"), None, ts)


def _outcome(
    kind: str, event: dict[str, Any], extras: dict[str, Any], metadata: dict[str, Any],
    content: str,
) -> tuple[bool, str | None, int | None]:
    if kind == "error":
        return False, first_line(content) or "error observation", None
    if kind == "user_rejected":
        return False, "rejected by the user", None
    code = _int(metadata.get("exit_code"))
    code = code if code is not None else _int(extras.get("exit_code"))
    if kind == "run" and code is not None:
        if code == 0:
            return True, None, code
        reason = "command did not finish (exit code -1)" if code == -1 else f"exit code {code}"
        return False, reason, code
    if event.get("success") is False:
        return False, known_error(content) or f"{kind} failed", code
    if kind == "browse" and extras.get("error"):
        reason = extras.get("last_browser_action_error") or "browse error"
        return False, first_line(str(reason)), code
    error = known_error(content)
    return error is None, error, code


def _completion_log(doc: dict[str, Any], path: Path) -> SpooledRun:
    fncall = "fncall_messages" in doc or "fncall_response" in doc
    messages = doc.get("fncall_messages") if fncall else doc.get("messages")
    response = _dict(doc.get("fncall_response") if fncall else doc.get("response"))
    if not isinstance(messages, list):
        raise FormatError("OpenHands completion log without a 'messages' list")
    builder = RunBuilder(AGENT, path)
    task = None
    results: dict[str, str] = {}
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = as_text(message.get("content"))
        if role == "system":
            builder.message("system", content)
        elif role == "user":
            task = task or task_line(content)
            builder.message("user", content)
        elif role == "assistant":
            _assistant_turn(builder, message, results)
        elif role == "tool":
            call_id = results.pop(str(message.get("tool_call_id")), None)
            if call_id is None:
                builder.message("user", content)
                continue
            ok, error, code = _tool_text_outcome(content)
            extra = {"exit_code": code} if code is not None else {}
            builder.tool_result(call_id, ok, content, error=error, **extra)
    ts = iso_ts(doc.get("timestamp"))
    choices = as_list(response.get("choices"))
    if choices and isinstance(choices[0], dict):
        last = _dict(choices[0].get("message"))
        _assistant_turn(builder, last, results, ts)
    usage = _dict(response.get("usage"))
    builder.usage(usage.get("prompt_tokens"), usage.get("completion_tokens"), doc.get("cost"), ts)
    builder.session_start(AGENT, task, None)
    kwargs = _dict(doc.get("kwargs"))
    meta = {"variant": "completion-log", "fncall": fncall,
            "model": response.get("model") or kwargs.get("model"),
            "cost_usd": number(doc.get("cost")), "pending_calls": len(results)}
    return builder.build(run_name(path), meta)


def _assistant_turn(
    builder: RunBuilder, message: dict[str, Any], results: dict[str, str],
    ts: float | None = None,
) -> None:
    builder.message("assistant", message.get("content"), ts)
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        function = _dict(_dict(call).get("function"))
        name = function.get("name")
        if not isinstance(name, str):
            continue
        args = parse_json_args(function.get("arguments"))
        thought = args.pop("thought", None) if isinstance(args.get("thought"), str) else None
        builder.message("assistant", thought, ts)
        native = call.get("id")
        call_id = builder.tool_call(name, args, native, ts)
        results[str(native)] = call_id


def _tool_text_outcome(content: str) -> tuple[bool, str | None, int | None]:
    """ok/error of a tool message in a completion log, from the texts OpenHands appends."""
    match = _EXIT_CODE_TEXT.search(content[-2000:])
    if match:
        code = int(match.group(1))
        return code == 0, None if code == 0 else f"exit code {code}", code
    if _TIMEOUT_TEXT.search(content[-2000:]):
        return False, "timeout", None
    error = known_error(content)
    return error is None, error, None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value)
    return None


def _reads(document: Document) -> Any:
    """The file's value; an `output.jsonl` of one line (which parses as one JSON document)
    as its records, as one of several lines would be."""
    if document.kind == "json" and is_output_record(document.value):
        return document.records()
    return document.value


IMPORTER = Importer(
    "openhands", "OpenHands event stream, output.jsonl history, or LLM completion log",
    matches, load, reads=_reads,
)
