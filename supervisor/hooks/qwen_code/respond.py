"""The supervisor's answers in Qwen Code's shape: Claude Code's (`hookSpecificOutput`
with `permissionDecision: "deny"` refuses a call, and the model reads the reason word for word;
`additionalContext` adds a note), except at Stop, where Qwen keeps the agent working on
`{"decision": "block", "reason": ...}` (up to its `stopHookBlockingCap`) and the reason is what
the model reads next."""

from typing import Any

from supervisor.hooks.claude_code.respond import ClaudeCodeAnswers
from supervisor.hooks.wording import render


class QwenCodeAnswers(ClaudeCodeAnswers):
    """`supervisor.hooks.target.Answers` for Qwen Code."""

    def stop(self, event: str, guidance: str | None) -> str:
        return render(stop_output(guidance))


def stop_output(guidance: str | None) -> dict[str, Any] | None:
    return {"decision": "block", "reason": guidance} if guidance else None
