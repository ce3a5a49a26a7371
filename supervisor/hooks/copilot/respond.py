"""The supervisor's answers in GitHub Copilot CLI's shape: pure functions, stdlib only.

From Copilot's own hook types (copilot-sdk `types.d.ts` of 1.0.102), checked with the real
binary (docs/copilot.md):
- preToolUse: `{"permissionDecision": "deny", "permissionDecisionReason": ...}` refuses the call;
  the model reads `Denied by preToolUse hook: <reason>`; `additionalContext` adds a note to a
  call that runs;
- postToolUse, postToolUseFailure, sessionStart, userPromptSubmitted: `additionalContext`
  reaches the model (after a failure, beside the failed result);
- agentStop: `{"decision": "block", "reason": ...}` keeps the agent working with the reason as
  the next user message.
There is no answer that ends the session: a `stop` verdict refuses the call.
"""

from typing import Any

from supervisor.hooks.wording import DENY_ACTIONS, SOURCE, refusal, render

_CONTEXT_EVENTS = frozenset({"sessionStart", "userPromptSubmitted", "postToolUse",
                             "postToolUseFailure"})


class CopilotAnswers:
    """`supervisor.hooks.target.Answers` for Copilot CLI."""

    def pre_tool(self, verdict: Any) -> str:
        return render(pre_tool_output(verdict.action, verdict.message, verdict.cached_output))

    def context(self, event: str, text: str | None, failure: str | None = None) -> str:
        if not text or event not in _CONTEXT_EVENTS:
            return ""
        return render({"additionalContext": text})

    def stop(self, event: str, guidance: str | None) -> str:
        return render({"decision": "block", "reason": guidance} if guidance else None)

    def batch(self, event: str, verdict: Any) -> str:
        return ""  # Copilot CLI has no batch event


def pre_tool_output(action: str, message: str | None,
                    cached_output: str | None = None) -> dict[str, Any] | None:
    if action in DENY_ACTIONS or action == "stop":
        return {"permissionDecision": "deny",
                "permissionDecisionReason": refusal(action, message, cached_output)}
    text = (message or "").strip()
    if text:  # a nudge, or a call that runs with a note
        return {"additionalContext": text if text.startswith(SOURCE) else f"{SOURCE}: {text}"}
    return None
