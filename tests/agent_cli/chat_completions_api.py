"""A scripted fake of the OpenAI Chat Completions API (`POST /v1/chat/completions`), as OpenCode,
Kilo and Cline call an "OpenAI-compatible" provider.

Streaming requests get SSE `chat.completion.chunk`s: the role, the text, one chunk per tool call
(`delta.tool_calls[{index, id, type, function{name, arguments}}]`), a last chunk with
`finish_reason` (`tool_calls` or `stop`) and usage (the stream then ends); a request with
`stream: false` gets one `chat.completion`. The conversation is recognised by its first user
message and the turn is the number of assistant messages already in `messages`
(`Script.pick`). A request without `tools` is a side request (OpenCode's title generation) and
gets a short text, never a turn of the script. `GET /v1/models` lists one model.

The read helpers say what the model received: the `role: "tool"` messages of the longest
history, in order.
"""

import json
import time
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
from tests.agent_cli.script import Script, Text, ToolCall, Turn

MODEL = "fake-model"
SIDE_TEXT = "Fake title"


@dataclass(frozen=True, slots=True)
class ToolMessage:
    """A `role: "tool"` message the model received."""

    call_id: str
    text: str


class ChatServer(ModelServer):
    """The fake Chat Completions API; a provider's base URL is `server.url + "/v1"`."""

    def __init__(self, script: Script) -> None:
        super().__init__()
        self.script = script

    def respond(self, request: LoggedRequest) -> Answer:
        body = request.body if isinstance(request.body, dict) else {}
        if request.method == "GET" and request.path == "/v1/models":
            return JsonAnswer({"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": 0, "owned_by": "fake"}]})
        if request.method != "POST" or request.path != "/v1/chat/completions":
            return JsonAnswer({"error": {"message": f"no such path {request.path}"}}, status=404)
        messages = body.get("messages") or []
        if not body.get("tools"):
            chosen = Turn((Text(SIDE_TEXT),))
        else:
            index = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
            chosen = self.script.pick(first_prompt(messages), index)
        model = str(body.get("model") or MODEL)
        if body.get("stream") is False:
            return JsonAnswer(_completion(chosen, model))
        return SseAnswer(_chunks(chosen, model))

    # -- what the model received --------------------------------------------------------------
    def conversation(self, key: str | None = None) -> list[LoggedRequest]:
        """The requests of one conversation (`Script.others` key; None: the main one) that
        offered tools (side requests left out)."""
        found = []
        for request in self.requests:
            body = request.body if isinstance(request.body, dict) else {}
            if request.path != "/v1/chat/completions" or not body.get("tools"):
                continue
            if self.script.conversation_key(first_prompt(body.get("messages") or [])) == key:
                found.append(request)
        return found

    def history(self, key: str | None = None) -> list[dict[str, Any]]:
        requests = self.conversation(key)
        if not requests:
            return []
        return max((r.body.get("messages") or [] for r in requests), key=len)

    def tool_messages(self, key: str | None = None) -> list[ToolMessage]:
        """Every tool result the model received, in order."""
        return [ToolMessage(str(m.get("tool_call_id")), content_text(m.get("content")))
                for m in self.history(key) if isinstance(m, dict) and m.get("role") == "tool"]

    def received(self, needle: str, key: str | None = None) -> bool:
        return any(needle in json.dumps(r.body) for r in self.conversation(key))


def first_prompt(messages: list[Any]) -> str:
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "user":
            text = content_text(message.get("content"))
            if text.strip():
                return text
    return ""


def content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content
                         if isinstance(part, dict) and "text" in part)
    return "" if content is None else json.dumps(content)


def _calls(chosen: Turn) -> list[dict[str, Any]]:
    return [{"id": f"call_{uuid.uuid4().hex[:16]}", "type": "function",
             "function": {"name": block.name, "arguments": json.dumps(block.input)}}
            for block in chosen.blocks if isinstance(block, ToolCall)]


def _text(chosen: Turn) -> str:
    return "\n\n".join(b.text for b in chosen.blocks if isinstance(b, Text))


_USAGE = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}


def _completion(chosen: Turn, model: str) -> dict[str, Any]:
    calls = _calls(chosen)
    message: dict[str, Any] = {"role": "assistant", "content": _text(chosen) or None}
    if calls:
        message["tool_calls"] = calls
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:20]}", "object": "chat.completion",
            "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": _USAGE}


def _chunks(chosen: Turn, model: str) -> Iterator[tuple[str | None, Any]]:
    base = {"id": f"chatcmpl-{uuid.uuid4().hex[:20]}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None, **more: Any) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **more}

    yield None, chunk({"role": "assistant", "content": ""})
    text = _text(chosen)
    if text:
        yield None, chunk({"content": text})
    calls = _calls(chosen)
    for index, call in enumerate(calls):
        yield None, chunk({"tool_calls": [{"index": index, **call}]})
    yield None, chunk({}, "tool_calls" if calls else "stop", usage=_USAGE)
