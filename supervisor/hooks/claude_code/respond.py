"""The supervisor's answers in Claude Code's shape: pure functions, stdlib only.

PreToolUse verdicts map to `permissionDecision` (see docs/claude-code.md for why a plain allow
prints nothing: an explicit `"allow"` would bypass the user's own permission prompts):

| verdict | output |
|---|---|
| allow | nothing (exit 0): Claude Code's permission rules apply as usual |
| nudge (or allow with a note) | `additionalContext` with the hint; the call runs |
| skip, block | `permissionDecision: "deny"` with the guidance as the reason the model reads |
| stop | a deny, and `"continue": false` with `stopReason`: the session stops |

Claude Code shows a deny to the model as `PreToolUse:<Tool> hook error: <reason>`, so every
reason starts by naming the supervisor and says what to do. Claude Code caps hook output at
10,000 characters; texts are cut to fit.
"""

import json
from typing import Any

OUTPUT_LIMIT_CHARS = 10_000
_SAFETY = 200
_DENY = frozenset({"skip", "block", "pause"})
SOURCE = "Agent Supervisor"
"""Who refused: the first words of every reason the model reads."""
_DEFAULT_REASON = {
    "skip": "it skipped this call; do not repeat it, continue with the next step of your task.",
    "block": "it blocked this call because it repeats without progress; do not retry it as it "
             "is, change your approach.",
    "pause": "this call is on hold for the operator; do not retry it, wait for guidance or "
             "choose another approach.",
    "stop": "it stopped this session; do not start new work, end your turn.",
}


class ClaudeCodeAnswers:
    """`supervisor.hooks.target.Answers` for Claude Code."""

    def pre_tool(self, verdict: Any) -> str:
        return render(pre_tool_output(verdict.action, verdict.message,
                                      cached_output=verdict.cached_output))

    def context(self, event: str, text: str | None) -> str:
        return render(context_output(event, text))

    def stop(self, event: str, guidance: str | None) -> str:
        return render(context_output(event, guidance))

    def batch(self, event: str, verdict: Any) -> str:
        return render(batch_output(event, verdict.action, verdict.message))


def reason(action: str, message: str | None) -> str:
    """What the model reads when a call is refused: the supervisor named, what to do."""
    text = (message or "").strip()
    if not text:
        return f"{SOURCE}: {_DEFAULT_REASON.get(action, _DEFAULT_REASON['block'])}"
    return text if text.startswith(SOURCE) else f"{SOURCE}: {text}"


def pre_tool_output(
    action: str, message: str | None, *, cached_output: str | None = None
) -> dict[str, Any] | None:
    """The PreToolUse answer for a verdict `action` with the text the agent must be told."""
    text = (message or "").strip()
    if action in ("allow", "nudge") and text:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "additionalContext": f"{SOURCE}: {text}"}}
    if action in _DENY or action == "stop":
        why = reason(action, text)
        if cached_output:
            why = f"{why}\n\n{cached_output}"
        out: dict[str, Any] = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": why,
            },
            "systemMessage": _first_line(f"supervisor: {action}: {text}"),
        }
        if action == "stop":
            out["continue"] = False
            out["stopReason"] = _first_line(f"supervisor stopped the session: {text}")
        return out
    return None


def batch_output(event: str, action: str, message: str | None) -> dict[str, Any] | None:
    """PostToolBatch (the calls already ran or were refused by Claude Code itself): a nudge as
    `additionalContext`; a block or skip as `decision: "block"`, which ends the model's turn
    with the reason; a stop as `continue: false`."""
    text = (message or "").strip()
    if action in ("allow", "nudge"):
        return context_output(event, f"{SOURCE}: {text}" if text else None)
    why = reason(action, text)
    out: dict[str, Any] = {"decision": "block", "reason": why,
                           "systemMessage": _first_line(f"supervisor: {action}: {text}")}
    if action == "stop":
        out["continue"] = False
        out["stopReason"] = _first_line(f"supervisor stopped the session: {text}")
    return out


def context_output(event: str, text: str | None) -> dict[str, Any] | None:
    """Extra context for the model: operator guidance (UserPromptSubmit, SessionStart, Stop,
    where it keeps the agent working) or the engine's hints after a tool's outcome."""
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def render(output: dict[str, Any] | None) -> str:
    """The text to print on stdout: compact JSON within Claude Code's limit, or nothing."""
    if output is None:
        return ""
    text = _dump(output)
    excess = len(text) - OUTPUT_LIMIT_CHARS
    if excess > 0:
        output = _shorten(output, excess + _SAFETY)
        text = _dump(output)
    return text


def _shorten(output: dict[str, Any], excess: int) -> dict[str, Any]:
    """Cut the longest text field by `excess` characters (plus its marker)."""
    holder, key, value = _longest_text(output)
    if holder is None:
        return output
    keep = max(len(value) - excess - 40, 0)
    holder[key] = value[:keep] + "\n[… cut by the supervisor to fit the hook output limit]"
    return output


def _longest_text(node: Any) -> tuple[dict[str, Any] | None, str, str]:
    best: tuple[dict[str, Any] | None, str, str] = (None, "", "")
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str) and len(value) > len(best[2]):
                best = (node, key, value)
            elif isinstance(value, dict):
                inner = _longest_text(value)
                if len(inner[2]) > len(best[2]):
                    best = inner
    return best


def _dump(output: dict[str, Any]) -> str:
    return json.dumps(output, ensure_ascii=False, separators=(",", ":"))


def _first_line(text: str, limit: int = 300) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
