"""A scripted fake of the Anthropic Messages API, as Claude Code calls it.

`POST /v1/messages` (`stream: true` → SSE: `message_start`, per block `content_block_start`,
`content_block_delta` with `text_delta` or `input_json_delta`, `content_block_stop`, then
`message_delta` with the `stop_reason` and `message_stop`; without `stream`, the same message as
JSON), `POST /v1/messages/count_tokens`. Requests that offer no tools (titles, summaries) get a
short text. A request offering tools is a turn of a conversation: `Script.pick` with the text of
its first user message and the number of assistant messages before it.

The read helpers say what the model received: the conversation's last request holds its whole
history (tool results with `is_error`, the hooks' added-context and Stop-feedback texts).
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
from tests.agent_cli.script import Script, Text, ToolCall, Turn, say

SIDE_TEXT = "Scripted session"
"""The answer to a request without tools (a title, a summary)."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool_result block the model received."""

    tool_use_id: str
    text: str
    is_error: bool


class AnthropicServer(ModelServer):
    """The fake Messages API; `ANTHROPIC_BASE_URL` = `server.url`."""

    def __init__(self, script: Script) -> None:
        super().__init__()
        self.script = script

    def respond(self, request: LoggedRequest) -> Answer:
        body = request.body if isinstance(request.body, dict) else {}
        if request.method == "POST" and request.path == "/v1/messages/count_tokens":
            return JsonAnswer({"input_tokens": _rough_tokens(request.raw)})
        if request.method != "POST" or request.path != "/v1/messages":
            return JsonAnswer(
                {"type": "error", "error": {"type": "not_found_error", "message": "no such path"}},
                status=404,
            )
        messages = body.get("messages") or []
        if body.get("tools"):
            done = sum(1 for m in messages if m.get("role") == "assistant")
            chosen = self.script.pick(first_prompt(messages), done)
        else:
            chosen = say(SIDE_TEXT)
        message_id = f"msg_{uuid.uuid4().hex[:20]}"
        model = str(body.get("model") or "claude-fake")
        if body.get("stream"):
            return SseAnswer(_events(chosen, message_id, model, _rough_tokens(request.raw)))
        return JsonAnswer(_message(chosen, message_id, model, _rough_tokens(request.raw)))

    # -- what the model received --------------------------------------------------------------
    def conversation(self, key: str | None = None) -> list[LoggedRequest]:
        """The turn requests of one conversation: the main one (key None) or the one of
        `Script.others[key]`, in arrival order."""
        found = []
        for request in self.requests:
            body = request.body if isinstance(request.body, dict) else {}
            if request.path != "/v1/messages" or not body.get("tools"):
                continue
            if self.script.conversation_key(first_prompt(body.get("messages") or [])) == key:
                found.append(request)
        return found

    def models(self, key: str | None = None) -> list[str]:
        """The models the conversation's requests asked for, in order."""
        return [str(r.body.get("model")) for r in self.conversation(key)]

    def history(self, key: str | None = None) -> list[dict[str, Any]]:
        """The messages of the conversation's longest request (its whole history so far)."""
        requests = self.conversation(key)
        if not requests:
            return []
        return max((r.body["messages"] for r in requests), key=len)

    def tool_results(self, key: str | None = None) -> list[ToolResult]:
        """Every tool_result the model received in the conversation, in order."""
        results = []
        for message in self.history(key):
            if message.get("role") != "user" or not isinstance(message.get("content"), list):
                continue
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results.append(ToolResult(
                        tool_use_id=str(block.get("tool_use_id")),
                        text=_content_text(block.get("content")),
                        is_error=bool(block.get("is_error")),
                    ))
        return results

    def user_texts(self, key: str | None = None) -> list[str]:
        """The text blocks of the user messages (the prompt, system reminders, hooks' added
        context, Stop-hook feedback), tool results excluded, in order."""
        texts = []
        for message in self.history(key):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
                continue
            for block in content or []:
                if isinstance(block, dict) and block.get("type") == "text":
                    texts.append(str(block.get("text", "")))
        return texts

    def received(self, needle: str, key: str | None = None) -> bool:
        """True when `needle` is in anything the model was sent in the conversation."""
        return any(needle in json.dumps(r.body) for r in self.conversation(key))


def first_prompt(messages: list[dict[str, Any]]) -> str:
    """The text of the first user message (all its text blocks joined)."""
    for message in messages:
        if message.get("role") == "user":
            return _content_text(message.get("content"))
    return ""


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and "text" in b
        )
    return ""


def _rough_tokens(raw: bytes) -> int:
    return max(1, len(raw) // 4)


def _tool_use_id() -> str:
    return f"toolu_{uuid.uuid4().hex[:24]}"


def _blocks(chosen: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in chosen.blocks:
        if isinstance(block, Text):
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolCall):
            blocks.append(
                {"type": "tool_use", "id": _tool_use_id(), "name": block.name, "input": block.input}
            )
    return blocks


def _stop_reason(chosen: Turn) -> str:
    return "tool_use" if chosen.calls else "end_turn"


def _usage(chosen: Turn, input_tokens: int, output_tokens: int) -> dict[str, int]:
    """The turn's scripted usage, else `input_tokens` (the request's rough size)."""
    u = chosen.usage
    if u is None:
        return {"input_tokens": input_tokens, "output_tokens": output_tokens,
                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    return {"input_tokens": u.input, "output_tokens": min(output_tokens, u.output),
            "cache_creation_input_tokens": u.cache_write, "cache_read_input_tokens": u.cache_read}


def _final_output(chosen: Turn) -> int:
    return chosen.usage.output if chosen.usage is not None else 10


def _message(chosen: Turn, message_id: str, model: str, input_tokens: int) -> dict[str, Any]:
    return {
        "id": message_id, "type": "message", "role": "assistant", "model": model,
        "content": _blocks(chosen), "stop_reason": _stop_reason(chosen), "stop_sequence": None,
        "usage": _usage(chosen, input_tokens, _final_output(chosen)),
    }


def _events(
    chosen: Turn, message_id: str, model: str, input_tokens: int
) -> Iterator[tuple[str, dict[str, Any]]]:
    start = {
        "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": _usage(chosen, input_tokens, 1),
    }
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(_blocks(chosen)):
        if block["type"] == "text":
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_start", {
            "type": "content_block_start", "index": index, "content_block": opening,
        }
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": _stop_reason(chosen), "stop_sequence": None},
        "usage": {"output_tokens": _final_output(chosen)},
    }
    yield "message_stop", {"type": "message_stop"}
