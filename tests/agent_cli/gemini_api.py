"""A scripted fake of the Gemini API, as Gemini CLI calls it (`GOOGLE_GEMINI_BASE_URL`).

`POST /v1beta/models/<model>:streamGenerateContent?alt=sse` → SSE `data:` lines, one chunk per
part (`{"candidates":[{"content":{"role":"model","parts":[...]}}]}`), the last one with
`finishReason: "STOP"` and `usageMetadata`. Parts are `{"text": ...}` or `{"functionCall":
{"name", "args"}}`. `POST ...:generateContent` (the CLI's model-routing side call, and any
request without tools) gets a short text, or a minimal instance of the JSON schema it asks for
(the routing classifier does); `...:countTokens` a count. The conversation is
recognised by its first user text and the turn is the number of `functionResponse` parts in the
request's `contents`, counted against the calls the script made per turn
(`Script.turn_after_outputs`).
"""

import json
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
from tests.agent_cli.script import DEFAULT_USAGE, Script, Text, ToolCall, Turn, TurnUsage, say

SIDE_TEXT = "Scripted session"
_PREFIX = "/v1beta/models/"


@dataclass(frozen=True, slots=True)
class FunctionResponse:
    """A `functionResponse` part the model received."""

    name: str
    response: dict[str, Any]

    @property
    def text(self) -> str:
        """The response as one string (its `output` or `error`, else the JSON)."""
        for key in ("output", "error"):
            if isinstance(self.response.get(key), str):
                return self.response[key]
        return json.dumps(self.response)

    @property
    def is_error(self) -> bool:
        return "error" in self.response


class GeminiServer(ModelServer):
    """The fake Gemini API; `GOOGLE_GEMINI_BASE_URL` = `server.url`."""

    def __init__(self, script: Script) -> None:
        super().__init__()
        self.script = script

    def respond(self, request: LoggedRequest) -> Answer:
        body = request.body if isinstance(request.body, dict) else {}
        method = _method(request.path)
        if request.method != "POST" or method is None:
            return JsonAnswer({"error": {"code": 404, "message": "no such path"}}, status=404)
        if method == "countTokens":
            return JsonAnswer({"totalTokens": max(1, len(request.raw) // 4)})
        contents = body.get("contents") or []
        if method == "streamGenerateContent" and _offers_tools(body):
            prompt = first_prompt(contents)
            outputs = sum(1 for _ in _parts(contents, "functionResponse"))
            chosen = self.script.pick(prompt, self.script.turn_after_outputs(prompt, outputs))
        else:
            chosen = say(SIDE_TEXT)
        if method == "streamGenerateContent":
            return SseAnswer(_chunks(chosen))
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        if config.get("responseMimeType") == "application/json" and isinstance(schema, dict):
            # the CLI's routing classifier asks for JSON of a schema: a valid, minimal instance
            return JsonAnswer(_candidate([{"text": json.dumps(_instance(schema))}], final=True))
        return JsonAnswer(_candidate(_parts_of(chosen), final=True, usage=chosen.usage))

    # -- what the model received --------------------------------------------------------------
    def conversation(self, key: str | None = None) -> list[LoggedRequest]:
        found = []
        for request in self.requests:
            body = request.body if isinstance(request.body, dict) else {}
            if _method(request.path) != "streamGenerateContent" or not _offers_tools(body):
                continue
            if self.script.conversation_key(first_prompt(body.get("contents") or [])) == key:
                found.append(request)
        return found

    def history(self, key: str | None = None) -> list[dict[str, Any]]:
        requests = self.conversation(key)
        if not requests:
            return []
        return max((r.body.get("contents") or [] for r in requests), key=len)

    def function_responses(self, key: str | None = None) -> list[FunctionResponse]:
        """Every `functionResponse` the model received, in order."""
        return [
            FunctionResponse(str(part.get("name")), part.get("response") or {})
            for part in _parts(self.history(key), "functionResponse")
        ]

    def user_texts(self, key: str | None = None) -> list[str]:
        """The text parts of the user contents, in order."""
        return [
            str(part["text"])
            for content in self.history(key) if content.get("role") == "user"
            for part in content.get("parts") or [] if isinstance(part, dict) and "text" in part
        ]

    def received(self, needle: str, key: str | None = None) -> bool:
        return any(needle in json.dumps(r.body) for r in self.conversation(key))


def _method(path: str) -> str | None:
    if not path.startswith(_PREFIX) or ":" not in path:
        return None
    method = path.rsplit(":", 1)[1]
    return method if method in ("streamGenerateContent", "generateContent", "countTokens") else None


def _offers_tools(body: dict[str, Any]) -> bool:
    tools = body.get("tools") or []
    return any(t.get("functionDeclarations") for t in tools if isinstance(t, dict))


def _parts(contents: list[dict[str, Any]], kind: str) -> Iterator[dict[str, Any]]:
    for content in contents:
        for part in content.get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get(kind), dict):
                yield part[kind]


def first_prompt(contents: list[dict[str, Any]]) -> str:
    """The first user text that is a person's prompt.

    Gemini CLI opens a conversation with a user content of its own (the session context); the
    prompt is the first user text part that does not start with it (`<` or "This is the
    Gemini CLI")."""
    for content in contents:
        if content.get("role") != "user":
            continue
        for part in content.get("parts") or []:
            text = part.get("text") if isinstance(part, dict) else None
            if isinstance(text, str) and text.strip() and not _is_context(text):
                return text
    return ""


def _is_context(text: str) -> bool:
    head = text.lstrip()
    return head.startswith("<") or head.startswith("This is the Gemini CLI")


def _instance(schema: dict[str, Any]) -> Any:
    """A minimal value of a (Gemini-style, upper-case types) JSON schema."""
    kind = str(schema.get("type", "string")).lower()
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: _instance(sub) for name, sub in properties.items() if isinstance(sub, dict)}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return False
    if schema.get("enum"):
        return schema["enum"][0]
    return SIDE_TEXT


def _parts_of(chosen: Turn) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in chosen.blocks:
        if isinstance(block, Text):
            parts.append({"text": block.text})
        elif isinstance(block, ToolCall):
            parts.append({"functionCall": {"name": block.name, "args": block.input}})
    return parts


def _candidate(
    parts: list[dict[str, Any]], final: bool, usage: TurnUsage | None = None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-fake"}
    if final:
        candidate["finishReason"] = "STOP"
        u = usage or DEFAULT_USAGE
        chunk["usageMetadata"] = {
            "promptTokenCount": u.input + u.cache_read, "candidatesTokenCount": u.output,
            "cachedContentTokenCount": u.cache_read,
            "totalTokenCount": u.input + u.cache_read + u.output,
        }
    return chunk


def _chunks(chosen: Turn) -> Iterator[tuple[None, dict[str, Any]]]:
    parts = _parts_of(chosen)
    for index, part in enumerate(parts):
        yield None, _candidate([part], final=index == len(parts) - 1, usage=chosen.usage)
