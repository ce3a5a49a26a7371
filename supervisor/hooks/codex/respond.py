"""The supervisor's answers in Codex CLI's shape: pure functions, stdlib only.

Measured with Codex 0.169.0 (docs/codex.md):
- PreToolUse accepts only a deny (`permissionDecision: "deny"` with a non-empty reason; the
  model reads `Command blocked by PreToolUse hook: <reason>. Command: <cmd>`) and
  `additionalContext`. `allow`, `ask`, `continue: false`, `stopReason`, ... are rejected as
  unsupported, and a rejected answer is ignored whole: the call runs. So a stop (an abort, a
  hard limit) is a deny that tells the model to stop; every later call of the session is
  denied the same way;
- `additionalContext` at SessionStart, UserPromptSubmit, PreToolUse and PostToolUse reaches
  the model as a message of its own;
- at Stop, `decision: "block"` with a reason keeps Codex working with the reason as its next
  input (operator guidance the agent has not seen).
"""

from typing import Any

from supervisor.hooks.wording import DENY_ACTIONS, note, refusal, render

_CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"})


class CodexAnswers:
    """`supervisor.hooks.target.Answers` for Codex CLI."""

    def pre_tool(self, verdict: Any) -> str:
        return render(pre_tool_output(verdict.action, verdict.message, verdict.cached_output))

    def context(self, event: str, text: str | None, failure: str | None = None) -> str:
        return render(context_output(event, text))  # added context reaches it either way

    def stop(self, event: str, guidance: str | None) -> str:
        return render(stop_output(guidance))

    def batch(self, event: str, verdict: Any) -> str:
        return ""  # Codex has no batch event


def pre_tool_output(
    action: str, message: str | None, cached_output: str | None = None
) -> dict[str, Any] | None:
    if action in DENY_ACTIONS or action == "stop":
        return {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": refusal(action, message, cached_output),
        }}
    return context_output("PreToolUse", note(message))


def context_output(event: str, text: str | None) -> dict[str, Any] | None:
    if not text or event not in _CONTEXT_EVENTS:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def stop_output(guidance: str | None) -> dict[str, Any] | None:
    if not guidance:
        return None
    return {"decision": "block", "reason": guidance}
