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

from typing import Any

from supervisor.hooks.wording import DENY_ACTIONS, SOURCE, reason, refusal, render
from supervisor.hooks.wording import first_line as _first_line


class ClaudeCodeAnswers:
    """`supervisor.hooks.target.Answers` for Claude Code."""

    def pre_tool(self, verdict: Any, event: str = "PreToolUse") -> str:
        """`event`: PreToolUse, or PreSkillShellCommand (the same answer, named for it)."""
        return render(pre_tool_output(verdict.action, verdict.message,
                                      cached_output=verdict.cached_output, event=event))

    def context(self, event: str, text: str | None, failure: str | None = None) -> str:
        return render(context_output(event, text))  # added context reaches it either way

    def stop(self, event: str, guidance: str | None) -> str:
        return render(context_output(event, guidance))

    def batch(self, event: str, verdict: Any) -> str:
        return render(batch_output(event, verdict.action, verdict.message))


class StopBlockAnswers(ClaudeCodeAnswers):
    """Claude Code's answers for the agents that copy its hooks (Qwen Code, Factory Droid) but
    go on after Stop only on `{"decision": "block", "reason": ...}`: the reason is what the
    model reads next (Qwen caps this at its `stopHookBlockingCap`, 8)."""

    def stop(self, event: str, guidance: str | None) -> str:
        return render({"decision": "block", "reason": guidance} if guidance else None)


def pre_tool_output(
    action: str, message: str | None, *, cached_output: str | None = None,
    event: str = "PreToolUse",
) -> dict[str, Any] | None:
    """The PreToolUse answer for a verdict `action` with the text the agent must be told. A
    PreSkillShellCommand takes the same refusal (under its own name) and no added context."""
    text = (message or "").strip()
    if action in ("allow", "nudge") and text:
        if event != "PreToolUse":
            return None  # no context for a skill's command; it runs
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "additionalContext": f"{SOURCE}: {text}"}}
    if action in DENY_ACTIONS or action == "stop":
        why = refusal(action, text, cached_output)
        out: dict[str, Any] = {
            "hookSpecificOutput": {
                "hookEventName": event,
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
