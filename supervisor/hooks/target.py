"""What a hook target is: everything the platform needs to know about one agent CLI.

A target is small (docs/hooks.md, "Adding a target"): it reads the agent's payload into a
`HookStep`, phrases the supervisor's answers in the agent's own shape, says where the agent keeps
its hook settings and which events to register (`settings_file.Settings`), and, when the agent
keeps a transcript the runtime can read the assistant's text and the tokens it spent from, how
to read it. The runtime does everything else.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from supervisor.engine.tools import ToolVocabulary, contribute
from supervisor.hooks.plugin_file import PluginFile
from supervisor.hooks.settings_file import Settings
from supervisor.hooks.step import HookStep, Result
from supervisor.hooks.usage import Spent, UsedModel

if TYPE_CHECKING:
    from supervisor.guard.core import Verdict


class Answers(Protocol):
    """The supervisor's answers in one agent's shape: each returns what the hook prints on
    stdout ("" for nothing: the agent goes on as if there were no hook)."""

    def pre_tool(self, verdict: "Verdict") -> str:
        """Before a call runs: allow (nothing), nudge (a note for the model), skip or block
        (refuse it with the message), stop (refuse it and end the session)."""
        ...

    def context(self, event: str, text: str | None, failure: str | None = None) -> str:
        """Text for the model after an event that cannot refuse anything (a tool's result, a
        prompt, the session's start): the engine's hints, operator guidance. `failure` is the
        error recorded for the result of a failed call (the target's own wording of it): an
        agent that drops added context from some failures carries the text in the failure
        instead."""
        ...

    def stop(self, event: str, guidance: str | None) -> str:
        """The agent is about to stop: keep it working with guidance it has not seen."""
        ...

    def batch(self, event: str, verdict: "Verdict") -> str:
        """After calls the agent reports only once they ran (Claude Code's PostToolBatch): a
        nudge as context, a block or skip stops the turn with the message, a stop ends the
        session."""
        ...


class Unreported(TypedDict):
    """A call's failure the agent's hooks never reported (Factory Droid runs no PostToolUse
    for a failed call), read from its transcript: recorded as the result of the oldest call
    waiting under `pair` (`HookStep.pair`), if one still waits."""

    pair: str
    result: Result


class Issued(TypedDict):
    """The calls one model answer issued (their ids) and that answer's id: calls of one answer
    ran in parallel, none seeing another's result, so the answer's id is their `batch`."""

    issued: list[str]
    batch: str


TranscriptEntry = str | Unreported | Spent | UsedModel | Issued
"""What a transcript line says: an assistant text, a failure no hook reported, what the model
spent (`supervisor.hooks.usage`), the model the next answers come from, or the calls an answer
issued."""
TranscriptReader = Callable[[str, int], tuple[Sequence[TranscriptEntry], int]]
"""`(path, offset) -> (the entries after offset; the offset after them)`: reads only whole
lines; a missing or unreadable file gives `([], offset)`."""


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    """The command-line name: `supervisor hook NAME`, `supervisor install NAME`."""
    label: str
    """The agent's name for people, e.g. "Claude Code"."""
    read: Callable[[dict[str, Any]], HookStep]
    """A parsed payload (a JSON object with a `session_id`) to its step; never raises."""
    answers: Answers
    settings: Settings | PluginFile
    """Where the agent keeps its hooks: a JSON settings file, or a plugin folder where the
    supervisor's plugin file goes (agents without command hooks)."""
    transcript: TranscriptReader | None = None
    reads_usage: bool = False
    """True when `transcript` returns what the model spent (`supervisor.hooks.usage`); a
    session of a target that reads none says so in its `session_start` (`usage_record`)."""
    stop_waits_s: float = 0.0
    """How long the Stop hook may wait for the answer it names (`HookStep.message`) to reach
    the transcript, for an agent that writes its transcript behind its hooks (Qwen Code: a
    queue of asynchronous writes, hundreds of milliseconds behind on a loaded machine). Stop
    is the last hook of a headless run: what the transcript lacks then is never read, so the
    tokens of the last answers would never be counted. 0: read what is there."""
    call_waits_s: float = 0.0
    """How long a call's PreToolUse may wait for the answer that asked for the call before it
    to reach the transcript, for an agent that writes its transcript behind its hooks and whose
    reader names the calls each answer issued (`Issued`): with every earlier answer counted, a
    `tokens`/`cost_usd` limit holds at most one call late (`runtime._Call.await_asked`; no wait
    when that answer is already there). 0: read what is there."""
    batches: bool = False
    """True when the agent reports calls after they ran in a batch event (Claude Code's and
    Qwen Code's PostToolBatch): the runtime then keeps the ids of the calls that went through
    PreToolUse (`hooks.memory.Memory.seen`), so a batch records only the others. Others are
    spared that list, which the hook memory writes at every call (up to `CALLS_KEPT` ids: at
    the bound, half a millisecond of a step's encoding)."""
    context_before_call: bool = True
    """False when the agent takes no added context before a call runs (Gemini CLI ignores it
    at BeforeTool): a note on a call that runs (a nudge, an approval) is then given with the
    call's result instead."""
    tools: ToolVocabulary | None = None
    """The agent's tool names and argument keys the engine's shared vocabulary lacks or shares
    (`engine/tools.py`): contributed when the target is built, so on importing its module; a
    name another contributor reads otherwise fails that import, naming both."""

    def __post_init__(self) -> None:
        if self.tools is not None:
            contribute(self.name, self.tools)
