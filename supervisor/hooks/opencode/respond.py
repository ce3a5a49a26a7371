"""The supervisor's answers to the OpenCode plugin (`plugin.js`): pure functions, stdlib only.

The plugin reads one JSON object (or nothing: the agent goes on):
- `{"deny": REASON}` at `tool.execute.before`: the plugin throws `Error(REASON)`, and OpenCode
  gives the model REASON, word for word, as the call's result (the call does not run);
- `{"context": TEXT}` after a call (`tool.execute.after`, `tool.error`): TEXT is appended to
  the output (or the error) the model reads, naming the supervisor; with the prompt
  (`chat.message`, operator guidance the agent has not seen): appended to the prompt's text.
OpenCode takes nothing added before a call runs, and has no hook that can keep the agent working
when it stops (`Target.context_before_call` is False; `stop` answers nothing).
"""

from typing import Any

from supervisor.hooks.wording import DENY_ACTIONS, note, refusal, render

CONTEXT_EVENTS = frozenset({"tool.execute.after", "tool.error", "chat.message"})


class PluginAnswers:
    """`supervisor.hooks.target.Answers` for a plugin that reads `deny` and `context` (OpenCode's,
    Kilo's, Cline's): `context_events` are its steps where context is taken (after a call, and
    with the user's prompt)."""

    def __init__(self, context_events: frozenset[str] = CONTEXT_EVENTS) -> None:
        self.context_events = context_events

    def pre_tool(self, verdict: Any) -> str:
        if verdict.action in DENY_ACTIONS or verdict.action == "stop":
            return render({"deny": refusal(verdict.action, verdict.message,
                                           verdict.cached_output)})
        return ""  # a note on a call that runs comes with its result (context_before_call)

    def context(self, event: str, text: str | None, failure: str | None = None) -> str:
        if not text or event not in self.context_events:
            return ""
        return render({"context": note(text)})

    def stop(self, event: str, guidance: str | None) -> str:
        return ""  # OpenCode cannot be kept working from a plugin hook (docs/opencode.md)

    def batch(self, event: str, verdict: Any) -> str:
        return ""  # no batch event
