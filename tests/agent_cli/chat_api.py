"""A scripted fake of the OpenAI Chat Completions API, as Qwen Code, Factory Droid, GitHub
Copilot CLI, OpenCode, Kilo and Cline call it with a custom OpenAI-compatible endpoint.

`POST /v1/chat/completions` with `stream: true` → SSE `data:` chunks (`chat.completion.chunk`):
the role, the text as `delta.content`, each tool call as `delta.tool_calls[i]` (`id`, `function
{name, arguments}` with the arguments as a JSON string), a last chunk with `finish_reason`
(`tool_calls` or `stop`) and `usage`, then `data: [DONE]`. Without `stream` the same turn as one
`chat.completion`. A request without tools (a side call: OpenCode's title, a summary) gets a
short text, never a turn of the script.
`GET /v1/models` lists the one model.

The conversation is recognised by its first user text (user messages that start with `<` are
context the agent adds, not a person's prompt, unless nothing else is there) and the turn is the
number of assistant messages already in the request's `messages`, so retries and side calls never
shift the script.
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
from tests.agent_cli.script import DEFAULT_USAGE, Script, Text, ToolCall, Turn, say

MODEL = "fake-model"
SIDE_TEXT = "Scripted session"


@dataclass(frozen=True, slots=True)
class ToolMessage:
    """A `role: "tool"` message the model received: a tool's result (or its refusal)."""

    call_id: str
    text: str


class ChatServer(ModelServer):
    """The fake Chat Completions API; the agent's base URL = `server.url + "/v1"`."""

    def __init__(self, script: Script) -> None:
        super().__init__()
        self.script = script

    def respond(self, request: LoggedRequest) -> Answer:
        if request.method == "GET" and request.path.rstrip("/").endswith("/models"):
            return JsonAnswer({"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": 0, "owned_by": "tests"}]})
        if request.method != "POST" or not request.path.endswith("/chat/completions"):
            return JsonAnswer({"error": {"message": f"no such path {request.path}"}}, status=404)
        body = request.body if isinstance(request.body, dict) else {}
        messages = body.get("messages") or []
        if not body.get("tools"):
            chosen = say(SIDE_TEXT)
        else:
            prompt = first_prompt(messages)
            turns = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
            chosen = self.script.pick(prompt, turns)
        model = str(body.get("model") or MODEL)
        if body.get("stream"):
            return SseAnswer((None, chunk) for chunk in _chunks(chosen, model))
        return JsonAnswer(_completion(chosen, model))

    # -- what the model received --------------------------------------------------------------
    def conversation(self, key: str | None = None) -> list[LoggedRequest]:
        found = []
        for request in self.requests:
            body = request.body if isinstance(request.body, dict) else {}
            if not request.path.endswith("/chat/completions") or not body.get("tools"):
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

    def user_texts(self, key: str | None = None) -> list[str]:
        return [content_text(m.get("content")) for m in self.history(key)
                if isinstance(m, dict) and m.get("role") == "user"]

    def received(self, needle: str, key: str | None = None) -> bool:
        return any(needle in json.dumps(r.body) for r in self.conversation(key))


def first_prompt(messages: list[Any]) -> str:
    texts = [content_text(m.get("content")) for m in messages
             if isinstance(m, dict) and m.get("role") == "user"]
    texts = [text for text in texts if text.strip()]
    prompts = [text for text in texts if not text.lstrip().startswith("<")]
    return (prompts or texts or [""])[0]


def content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content
                         if isinstance(part, dict) and "text" in part)
    return "" if content is None else json.dumps(content)


def _calls(chosen: Turn) -> list[dict[str, Any]]:
    return [{"id": f"call_{uuid.uuid4().hex[:20]}", "type": "function",
             "function": {"name": block.name, "arguments": json.dumps(block.input)}}
            for block in chosen.blocks if isinstance(block, ToolCall)]


def _text(chosen: Turn) -> str:
    return "\n".join(block.text for block in chosen.blocks if isinstance(block, Text))


def _usage(chosen: Turn) -> dict[str, Any]:
    """The turn's usage as Chat Completions reports it (cached tokens inside the prompt's)."""
    u = chosen.usage or DEFAULT_USAGE
    prompt = u.input + u.cache_read
    return {"prompt_tokens": prompt, "completion_tokens": u.output,
            "total_tokens": prompt + u.output,
            "prompt_tokens_details": {"cached_tokens": u.cache_read}}


def _chunks(chosen: Turn, model: str) -> Iterator[dict[str, Any] | str]:
    base = {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    text = _text(chosen)
    if text:
        yield chunk({"content": text})
    calls = _calls(chosen)
    for index, call in enumerate(calls):
        yield chunk({"tool_calls": [{"index": index, **call}]})
    yield {**chunk({}, "tool_calls" if calls else "stop"), "usage": _usage(chosen)}
    yield "[DONE]"


def _completion(chosen: Turn, model: str) -> dict[str, Any]:
    calls = _calls(chosen)
    message: dict[str, Any] = {"role": "assistant", "content": _text(chosen) or None}
    if calls:
        message["tool_calls"] = calls
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion",
            "created": int(time.time()), "model": model, "usage": _usage(chosen),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if calls else "stop"}]}
