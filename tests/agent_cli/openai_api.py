"""A scripted fake of the OpenAI Responses API, as Codex CLI calls it (custom provider).

`POST /v1/responses` with `stream: true` → SSE: `response.created`, per output item
`response.output_item.added` and `response.output_item.done` (a `message` with `output_text`,
or a `function_call` with `name`, `arguments` as a JSON string and `call_id`), then
`response.completed` with `usage`. The conversation is recognised by its first user message
(`Script.others` for subagents) and the turn is the number of `function_call_output` items in
the request's `input`, counted against the calls the script made per turn
(`Script.turn_after_outputs`), so parallel calls do not shift the script.

The read helpers say what the model received (`function_call_output` items, user texts).
"""

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.agent_cli.model_server import (
    Answer,
    JsonAnswer,
    LoggedRequest,
    ModelServer,
    SseAnswer,
)
from tests.agent_cli.script import DEFAULT_USAGE, Script, Text, ToolCall, Turn


@dataclass(frozen=True, slots=True)
class CallOutput:
    """A `function_call_output` the model received."""

    call_id: str
    output: str


class OpenAIServer(ModelServer):
    """The fake Responses API; the provider's `base_url` = `server.url + "/v1"`."""

    def __init__(self, script: Script) -> None:
        super().__init__()
        self.script = script

    def respond(self, request: LoggedRequest) -> Answer:
        body = request.body if isinstance(request.body, dict) else {}
        if request.method != "POST" or request.path != "/v1/responses":
            return JsonAnswer({"error": {"message": f"no such path {request.path}"}}, status=404)
        items = body.get("input") or []
        prompt = first_prompt(items)
        outputs = sum(1 for item in items if item.get("type") == "function_call_output")
        chosen = self.script.pick(prompt, self.script.turn_after_outputs(prompt, outputs))
        response_id = f"resp_{uuid.uuid4().hex[:24]}"
        return SseAnswer(_events(chosen, response_id, str(body.get("model") or "fake-model")))

    # -- what the model received --------------------------------------------------------------
    def conversation(self, key: str | None = None) -> list[LoggedRequest]:
        found = []
        for request in self.requests:
            body = request.body if isinstance(request.body, dict) else {}
            if request.path != "/v1/responses":
                continue
            if self.script.conversation_key(first_prompt(body.get("input") or [])) == key:
                found.append(request)
        return found

    def history(self, key: str | None = None) -> list[dict[str, Any]]:
        requests = self.conversation(key)
        if not requests:
            return []
        return max((r.body.get("input") or [] for r in requests), key=len)

    def call_outputs(self, key: str | None = None) -> list[CallOutput]:
        """Every `function_call_output` the model received, in order."""
        return [
            CallOutput(str(item.get("call_id")), _output_text(item.get("output")))
            for item in self.history(key)
            if item.get("type") == "function_call_output"
        ]

    def user_texts(self, key: str | None = None) -> list[str]:
        """The texts of the user (and developer) messages, in order."""
        return [
            _content_text(item.get("content"))
            for item in self.history(key)
            if item.get("type", "message") == "message"
            and item.get("role") in ("user", "developer")
        ]

    def received(self, needle: str, key: str | None = None) -> bool:
        return any(needle in json.dumps(r.body) for r in self.conversation(key))


def first_prompt(items: list[dict[str, Any]]) -> str:
    """The text of the first user message that is a person's prompt.

    Codex sends its environment context as a user message too (`<environment_context>...`), so
    user messages whose text starts with `<` are passed over.
    """
    for item in items:
        if item.get("type", "message") == "message" and item.get("role") == "user":
            text = _content_text(item.get("content"))
            if text and not text.lstrip().startswith("<"):
                return text
    return ""


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) for part in content
            if isinstance(part, dict) and "text" in part
        )
    return ""


def _output_text(output: object) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        return str(output.get("content", output))
    return _content_text(output)


def _items(chosen: Turn) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for block in chosen.blocks:
        if isinstance(block, Text):
            items.append({
                "type": "message", "id": f"msg_{uuid.uuid4().hex[:24]}", "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": block.text, "annotations": []}],
            })
        elif isinstance(block, ToolCall):
            items.append({
                "type": "function_call", "id": f"fc_{uuid.uuid4().hex[:24]}",
                "status": "completed", "name": block.name,
                "arguments": json.dumps(block.input), "call_id": f"call_{uuid.uuid4().hex[:24]}",
            })
    return items


def _events(chosen: Turn, response_id: str, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    base = {"id": response_id, "object": "response", "model": model}
    yield "response.created", {
        "type": "response.created", "response": {**base, "status": "in_progress", "output": []},
    }
    items = _items(chosen)
    for index, item in enumerate(items):
        yield "response.output_item.added", {
            "type": "response.output_item.added", "output_index": index, "item": item,
        }
        yield "response.output_item.done", {
            "type": "response.output_item.done", "output_index": index, "item": item,
        }
    u = chosen.usage or DEFAULT_USAGE
    usage = {
        "input_tokens": u.input + u.cache_read, "input_tokens_details": {
            "cached_tokens": u.cache_read},
        "output_tokens": u.output, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": u.input + u.cache_read + u.output,
    }
    yield "response.completed", {
        "type": "response.completed",
        "response": {**base, "status": "completed", "output": items, "usage": usage},
    }
