"""SWE-agent `.traj` files: `{environment, trajectory, history, info}`.

Each trajectory step `{action, observation, thought, response, state[, execution_time]}`
becomes a `message` (the thought), a `tool_call` and a `tool_result`. The tool is the command
word of the action when it is one of SWE-agent's own commands (`open`, `edit`, `find_file`,
`submit`, `str_replace_editor`, ...), else `bash` with `{"command": action}`. Function-calling
trajectories (SWE-agent 1.x) also record the tool call in `history`; its name and JSON
arguments are used as they are. SWE-agent records no exit codes, so a step fails only when its
observation starts with one of the tool's known error texts. No time stamps are recorded:
`execution_time` gives `duration_ms`, and `ts` is synthetic.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from supervisor.importers.base import (
    FormatError,
    Importer,
    RunBuilder,
    SpooledRun,
    as_dict,
    as_str,
    number,
    run_name,
)
from supervisor.importers.document import Document
from supervisor.importers.errortext import known_error, task_line
from supervisor.importers.jsonstream import ObjectIndex
from supervisor.protocol.bounded import loads

AGENT = "swe-agent"

SWE_COMMANDS = frozenset({
    "open", "goto", "scroll_up", "scroll_down", "create", "edit", "insert", "append",
    "search_dir", "search_file", "find_file", "submit", "str_replace_editor", "filemap",
    "exit_forfeit", "decompile", "disassemble", "debug_start", "debug_add_breakpoint",
    "debug_continue", "debug_step", "debug_exec", "debug_stop", "connect_start",
    "connect_sendline", "connect_exec", "connect_stop", "review_on_submit",
})
"""SWE-agent's own commands (default, EnIGMA and 1.x tool bundles); other words are shell."""

_POSITIONAL = {
    "open": ("path", "line_number"),
    "goto": ("line_number",),
    "create": ("filename",),
    "search_dir": ("search_term", "dir"),
    "search_file": ("search_term", "file"),
    "find_file": ("file_name", "dir"),
    "filemap": ("file_path",),
    "submit": ("submission",),
}
"""Argument names of SWE-agent's tool definitions, for commands written as text."""

_EDIT_RANGE = re.compile(r"^edit\s+(\d+)\s*:\s*(\d+)\s*$")

# exit_status -> session_end status; "submitted (exit_cost)" and the like were auto-submitted
# after a limit, so they count as terminated.
_EXIT = {
    "submitted": "completed",
    "exit_cost": "terminated",
    "exit_context": "terminated",
    "exit_format": "terminated",
    "exit_api": "failed",
    "exit_error": "failed",
    "exit_environment_error": "failed",
    "early_exit": "aborted",
    "exit_forfeit": "aborted",
}


def matches(doc: Any) -> bool:
    """A SWE-agent trajectory: an object whose `trajectory` steps have `action`/`observation`."""
    source = _source(doc)
    if source is None or not source.is_array("trajectory"):
        return False
    if not ("info" in source or "history" in source or "environment" in source):
        return False
    first = source.first("trajectory")
    return not source.length("trajectory") or (isinstance(first, dict) and "action" in first)


def load(doc: Any, path: Path) -> list[SpooledRun]:
    """The run, its steps read one at a time (with the `history` beside them, for the tool
    calls of function-calling runs): memory does not grow with the number of steps."""
    source = _source(doc)
    if source is None or not matches(source):
        raise FormatError("not a SWE-agent trajectory (needs an object with 'trajectory' steps)")
    info = as_dict(source.get("info"))
    history = _History(source.elements("history"))
    builder = RunBuilder(AGENT, path)

    cwd = None
    for index, step in enumerate(source.elements("trajectory")):
        if not isinstance(step, dict):
            raise FormatError(f"trajectory step {index} is not an object")
        state = _state(step.get("state"))
        cwd = cwd or state.get("working_dir")
        thought = step.get("thought") or step.get("response") or ""
        builder.message("assistant", thought)
        action = as_str(step.get("action"))
        observation = step.get("observation")
        observation = observation if isinstance(observation, str) else _text(observation)
        if not action.strip():  # a malformed model output: no command ran
            builder.message("user", observation)
            continue
        tool, args = history.call_for(action) or parse_action(action, state)
        call_id = builder.tool_call(tool, args)
        error = known_error(observation)
        seconds = number(step.get("execution_time"))
        builder.tool_result(call_id, error is None, observation, error=error,
                            duration_ms=None if seconds is None else round(seconds * 1000, 3))

    stats = as_dict(info.get("model_stats"))
    builder.usage(stats.get("tokens_sent"), stats.get("tokens_received"),
                  stats.get("instance_cost"))
    exit_status = info.get("exit_status")
    if isinstance(exit_status, str) and exit_status:
        builder.session_end(_end_status(exit_status), exit_status)
    history.read_to_end()
    builder.session_start(AGENT, _task(source, history.task), cwd)
    meta = {
        "exit_status": exit_status,
        "model": _model(source),
        "instance_id": _instance(path),
        "submitted": bool(info.get("submission")),
        "api_calls": stats.get("api_calls"),
        "cost_usd": number(stats.get("instance_cost")) or None,
        "function_calling": history.function_calling,
    }
    return [builder.build(run_name(path), meta)]


def reads(document: Document) -> ObjectIndex | None:
    """What this format reads of a file: its top-level object, indexed so that the steps are
    streamed (None for anything that is not one readable JSON object)."""
    return document.object_index() if document.kind == "json" else None


class _Whole:
    """A trajectory already parsed (a dict), read as an `ObjectIndex` is."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc

    def __contains__(self, key: str) -> bool:
        return key in self.doc

    def get(self, key: str) -> Any:
        value = self.doc.get(key)
        return None if isinstance(value, list) else value

    def is_array(self, key: str) -> bool:
        return isinstance(self.doc.get(key), list)

    def first(self, key: str) -> Any:
        value = self.doc.get(key)
        return value[0] if isinstance(value, list) and value else None

    def length(self, key: str) -> int:
        value = self.doc.get(key)
        return len(value) if isinstance(value, list) else 0

    def elements(self, key: str) -> Iterator[Any]:
        value = self.doc.get(key)
        return iter(value if isinstance(value, list) else ())


def _source(doc: Any) -> ObjectIndex | _Whole | None:
    if isinstance(doc, ObjectIndex | _Whole):
        return doc
    return _Whole(doc) if isinstance(doc, dict) else None


LOOKAHEAD = 1000
"""Recorded tool calls of `history` held while looking for a step's call: a step's call is
the next one with the same action within this many (always the very next one in the files
SWE-agent writes), so memory stays bounded."""


class _History:
    """The `history` of a run, read alongside its steps: the tool calls of function-calling
    runs (SWE-agent 1.x) in order, and the first user message (the task)."""

    def __init__(self, messages: Iterator[Any]) -> None:
        self._messages = messages
        self._pending: deque[tuple[str, str, dict[str, Any]]] = deque()
        self._done = False
        self.task: str | None = None
        self.function_calling = False

    def _pull(self) -> bool:
        """Read the next message; False at the end."""
        message = next(self._messages, None) if not self._done else None
        if message is None:
            self._done = True
            return False
        if not isinstance(message, dict):
            return True
        if (self.task is None and message.get("role") == "user" and not message.get("is_demo")
                and isinstance(message.get("content"), str)):
            self.task = message["content"]
        call = _function_call(message)
        if call is not None:
            self.function_calling = True
            self._pending.append(call)
        return True

    def call_for(self, action: str) -> tuple[str, dict[str, Any]] | None:
        """The recorded tool call of this step: the next one in history with the same action
        (those before it are dropped); None when there is none."""
        wanted = action.strip()
        index = 0
        while True:
            while index < len(self._pending):
                text, name, args = self._pending[index]
                if text == wanted:
                    for _ in range(index + 1):
                        self._pending.popleft()
                    return name, args
                index += 1
            if len(self._pending) >= LOOKAHEAD or not self._pull():
                return None

    def read_to_end(self) -> None:
        """Read on until the task and whether calls were recorded are known."""
        while (self.task is None or not self.function_calling) and self._pull():
            if len(self._pending) > LOOKAHEAD:
                self._pending.popleft()


def parse_action(action: str, state: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """(tool, args) for an action written as text: a SWE-agent command or a shell command."""
    text = action.strip("\n")
    head, _, rest = text.partition("\n")
    word = head.strip().split(" ", 1)[0] if head.strip() else ""
    if word not in SWE_COMMANDS:
        return "bash", {"command": text.strip()}
    if word == "edit":
        return "edit", _edit_args(head, rest, state or {})
    words = _split(head)[1:]
    if word == "str_replace_editor":
        return word, _editor_args(words, rest)
    names = _POSITIONAL.get(word)
    if names is None:
        return word, ({"args": head.split(" ", 1)[1].strip()} if " " in head.strip() else {})
    args: dict[str, Any] = {}
    for name, value in zip(names, words, strict=False):
        args[name] = int(value) if name == "line_number" and value.isdigit() else value
    if word == "submit" and not args:
        return word, {}
    return word, args


def _edit_args(head: str, rest: str, state: dict[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    match = _EDIT_RANGE.match(head.strip())
    if match:
        args["start_line"], args["end_line"] = int(match.group(1)), int(match.group(2))
    else:
        args["args"] = head.strip()[len("edit"):].strip()
    body = rest
    if body.rstrip().endswith("end_of_edit"):
        body = body.rstrip()[: -len("end_of_edit")]
        body = body[:-1] if body.endswith("\n") else body
    args["replacement_text"] = body
    open_file = state.get("open_file")
    if isinstance(open_file, str) and open_file not in ("", "n/a"):
        args["path"] = open_file  # the file the edit applies to, from the recorded state
    return args


def _editor_args(words: list[str], rest: str) -> dict[str, Any]:
    args: dict[str, Any] = {}
    if words:
        args["command"] = words[0]
    if len(words) > 1:
        args["path"] = words[1]
    key = None
    for word in words[2:]:
        if word.startswith("--"):
            key = word[2:]
            args[key] = ""
        elif key:
            args[key] = f"{args[key]} {word}".strip()
    if rest:
        args["text"] = rest
    return args


def _split(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def _function_call(message: Any) -> tuple[str, str, dict[str, Any]] | None:
    """(action text, tool name, args) of a recorded tool call in a function-calling run."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return None
    if message.get("is_demo"):
        return None
    tool_calls = message.get("tool_calls")
    if not isinstance(tool_calls, list) or not tool_calls:
        return None
    function = tool_calls[0].get("function") if isinstance(tool_calls[0], dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        return None
    args = function.get("arguments")
    if isinstance(args, str):
        try:
            args = loads(args, constants=True)
        except ValueError:
            args = {"raw_arguments": args}
    action = as_str(message.get("action"))
    return action.strip(), function["name"], args if isinstance(args, dict) else {}


def _state(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str) and raw.strip():
        try:
            value = loads(raw, constants=True)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def _text(value: Any) -> str:
    return "" if value is None else json.dumps(value, ensure_ascii=False, default=str)


def _end_status(exit_status: str) -> str:
    if exit_status.startswith("submitted"):
        return "completed" if exit_status == "submitted" else "terminated"
    return _EXIT.get(exit_status, "failed")


def _task(source: ObjectIndex | _Whole, first_user: str | None) -> str | None:
    replay = source.get("replay_config")
    if isinstance(replay, dict):
        statement = replay.get("problem_statement")
        text = statement.get("text") if isinstance(statement, dict) else statement
        if isinstance(text, str) and text.strip():
            return task_line(text)
    return task_line(first_user) if first_user is not None else None


def _model(source: ObjectIndex | _Whole) -> str | None:
    replay = source.get("replay_config")
    if isinstance(replay, dict):
        model = (replay.get("agent") or {}).get("model") if isinstance(
            replay.get("agent"), dict) else None
        if isinstance(model, dict) and isinstance(model.get("name"), str):
            return model["name"]
    return None


def _instance(path: Path) -> str | None:
    name = path.name
    return name[: -len(".traj")] if name.endswith(".traj") else None


IMPORTER = Importer(
    "swe-agent", "SWE-agent .traj (trajectory of action/observation/thought steps)",
    matches, load, reads=reads,
)
