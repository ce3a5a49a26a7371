"""The supervisor's answers in Gemini CLI's shape: pure functions, stdlib only.

Measured with Gemini CLI 0.61.0 (docs/gemini.md):
- BeforeTool: a top-level `{"decision": "deny", "reason": ...}` refuses the call, the model
  reads `Tool execution blocked: <reason>`; with `"continue": false` the agent stops. Claude
  Code's `hookSpecificOutput.permissionDecision` is ignored (the call would run);
- `hookSpecificOutput.additionalContext` at SessionStart and BeforeAgent reaches the model with
  the prompt, at AfterTool appended to the tool's output (`<hook_context>...</hook_context>`)
  of a successful call, and not at all with a failed one's error: there `{"decision": "deny",
  "reason": ...}` replaces the error the model reads with the reason; at BeforeTool it is
  ignored, so a note on a call that runs comes with its result;
- AfterAgent: `decision: "block"` with a reason makes the agent go on with the reason.
"""

from typing import Any

from supervisor.hooks.wording import DENY_ACTIONS, first_line, note, refusal, render

_CONTEXT_EVENTS = frozenset({"SessionStart", "BeforeAgent", "AfterTool"})
_OUTPUT_FAILURES = ("Exit code ", "killed by signal ")
"""Failures `payload.outcome` reads from a command's output: Gemini shows that output (and the
added context) as a result; only a tool's own error replaces it."""


class GeminiAnswers:
    """`supervisor.hooks.target.Answers` for Gemini CLI."""

    def pre_tool(self, verdict: Any) -> str:
        return render(before_tool_output(verdict.action, verdict.message, verdict.cached_output))

    def context(self, event: str, text: str | None, failure: str | None = None) -> str:
        if failure is not None and event == "AfterTool" and not failure.startswith(
                _OUTPUT_FAILURES):
            return render(failed_tool_output(text, failure))
        return render(context_output(event, text))

    def stop(self, event: str, guidance: str | None) -> str:
        return render({"decision": "block", "reason": guidance} if guidance else None)

    def batch(self, event: str, verdict: Any) -> str:
        return ""  # Gemini CLI has no batch event


def before_tool_output(
    action: str, message: str | None, cached_output: str | None = None
) -> dict[str, Any] | None:
    if action in DENY_ACTIONS or action == "stop":
        out: dict[str, Any] = {"decision": "deny",
                               "reason": refusal(action, message, cached_output)}
        if action == "stop":
            out["continue"] = False
            out["stopReason"] = first_line(f"supervisor stopped the session: {message or ''}")
        return out
    # a call that runs: nothing (Gemini ignores context at BeforeTool; the runtime gives a
    # note on the call with its result, `Target.context_before_call`)
    return None


def failed_tool_output(text: str | None, failure: str) -> dict[str, Any] | None:
    """AfterTool of a call the tool itself failed (`tool_response.error`): Gemini drops added
    context from such a result, but a `decision: "deny"` replaces the error the model reads
    with the reason, so the reason is the tool's own error followed by ours."""
    if not text:
        return None
    return {"decision": "deny", "reason": f"{failure.rstrip()}\n\n{note(text)}"}


def context_output(event: str, text: str | None) -> dict[str, Any] | None:
    if not text or event not in _CONTEXT_EVENTS:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
