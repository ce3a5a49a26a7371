"""Pydantic v2 models of every protocol event (see docs/protocol.md).

Every model keeps unknown fields (`extra="allow"`), so a reader of version 1 passes through what
a newer writer added. Unknown event types become `GenericEvent`. The common fields `v`, `seq` and
`ts` have defaults only so writers can build an event before the store assigns them; the parser
in `codec` still requires them on every line it reads. Non-finite numbers (NaN, infinities) are
refused: JSON cannot carry them, so such an event could never be written back.

Every number is bounded (`names.MAX_INT`, `MAX_NUMBER`, `MAX_TS`): a line that passes validation
must be safe for every reader to store and compute with (a `seq` of 2**64 overflows the
dashboard's arrays, a time stamp in nanoseconds its clock), so such a line is a bad line with
the reason, not a crash later.
"""

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from supervisor.protocol.decisions import actions
from supervisor.protocol.names import MAX_INT, MAX_NUMBER, MAX_TS
from supervisor.redact import in_text

Level = Annotated[int, Field(ge=0, le=4)]
Count = Annotated[int, Field(ge=0, le=MAX_INT)]
"""A non-negative integer: a `seq`, a size, a number of tokens or files."""
Timestamp = Annotated[float, Field(ge=0, le=MAX_TS)]
"""Unix seconds, up to the end of year 9999."""
Number = Annotated[float, Field(ge=-MAX_NUMBER, le=MAX_NUMBER)]
"""A finite float of sensible magnitude (a cost, a limit, a duration)."""
Pid = Annotated[int, Field(ge=0, le=2**31 - 1)]
"""A process id (what `os.kill` accepts)."""
def _known_action(action: str) -> str:
    if action not in actions():
        raise ValueError(f"unknown action '{action}' (one of {', '.join(actions())})")
    return action


def _redacted(text: str | None) -> str | None:
    return None if text is None else in_text(text)


VerdictAction = Literal["allow", "nudge", "skip", "block", "pause", "stop"]
DecisionAction = Annotated[str, AfterValidator(_known_action)]
"""One of the registry's actions (`supervisor.protocol.decisions.actions()`)."""


class Event(BaseModel):
    """Fields common to every line: protocol version, sequence number, time, type."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    v: int = Field(default=1, ge=0, le=MAX_INT)
    seq: Count = 0
    ts: Timestamp = 0.0
    type: str


class GenericEvent(Event):
    """An event whose type this version does not know; shown as it is, never an error."""


class SessionStart(Event):
    type: Literal["session_start"] = "session_start"
    agent: str
    task: str | None = None
    cwd: str | None = None
    pid: Pid | None = None
    policy: dict[str, Any] | None = None
    heartbeat_s: Number | None = None
    """Extension: the interval at which this agent promises heartbeats, or null for agents
    (such as hook-driven ones) that write nothing between tool calls and so cannot be 'dead'."""
    host: str | None = None
    """Extension: where `pid` can be looked up (host name and pid namespace); a reader on that
    host judges the agent dead as soon as the process is gone."""


class TaskStart(Event):
    type: Literal["task_start"] = "task_start"
    task_id: str
    title: str


class TaskEnd(Event):
    type: Literal["task_end"] = "task_end"
    task_id: str
    status: Literal["done", "skipped", "failed"]


class ToolCall(Event):
    type: Literal["tool_call"] = "tool_call"
    call_id: str
    tool: str
    args: dict[str, Any]
    refused_by: str | None = None
    """Extension: who kept the call from running ("operator": an operator command, a rollback
    or a skip; "supervisor": the guard; "user"/"agent" in an imported run: a call the agent
    never ran); the engine counts it as an attempt without judging it."""


class ToolResult(Event):
    type: Literal["tool_result"] = "tool_result"
    call_id: str
    ok: bool
    output: str
    output_bytes: Count
    output_hash: str
    error: str | None = None
    duration_ms: Number | None = None


class Message(Event):
    type: Literal["message"] = "message"
    role: Literal["assistant", "user", "system"]
    text: str


class Usage(Event):
    """Tokens of one model call (or the growth of one, read from an agent's record).
    `input_tokens` are those not read from the provider's cache; `cost_usd` null: unknown."""

    type: Literal["usage"] = "usage"
    input_tokens: Count
    output_tokens: Count
    cost_usd: Number | None = None
    cache_read_tokens: Count | None = None
    """Extension: input tokens read from the provider's cache."""
    cache_write_tokens: Count | None = None
    """Extension: input tokens written to the provider's cache."""
    model: str | None = None
    """Extension: the model, as the agent named it."""
    answer: str | None = None
    """Extension: the agent's id of the answer (the usages of one answer read in parts share
    it: a call is charged all of them, `protocol.charge`)."""


class Detection(Event):
    type: Literal["detection"] = "detection"
    detector: str
    level: Level
    signature: str
    evidence: list[Count]
    message: str


class VerdictEvent(Event):
    """A `verdict` line. (`Verdict` is the guard's answer to a call, `supervisor.guard.Verdict`,
    which this line records.)"""

    type: Literal["verdict"] = "verdict"
    call_id: str
    action: VerdictAction
    level: Level
    reason: str | None = None
    message: str | None = None
    gauges: dict[str, Number] | None = None
    """Extension: every limit's current value when the verdict was given (the dashboard's
    gauges); bounded like every protocol number."""


class Limit(Event):
    type: Literal["limit"] = "limit"
    name: str
    value: Number
    limit: Number
    action: str


class Checkpoint(Event):
    type: Literal["checkpoint"] = "checkpoint"
    checkpoint_id: str
    label: str
    commit: str
    at_seq: Count
    files: Count


class Escalation(Event):
    type: Literal["escalation"] = "escalation"
    escalation_id: str
    level: Level
    reason: str
    evidence: list[Count]
    options: list[DecisionAction]
    deadline_ts: Timestamp | None = None
    fallback: DecisionAction
    kind: str | None = None
    """Extension: why it escalated: "detection", "limit", "cycle", or "pause" (an operator
    asked for it; the dashboard shows such a session as paused). Null when not given."""


class DecisionApplied(Event):
    type: Literal["decision_applied"] = "decision_applied"
    escalation_id: str | None = None
    decision_id: str
    action: str
    outcome: str
    effect: dict[str, Any] | None = None
    """Extension: what the decision did to the engine (`kind`, `answers`, `repeats`,
    `signature`, `limit`; see `supervisor.engine.decisions`), so replays apply exactly that.
    Null in recordings made before it existed."""
    level: Level | None = None
    """Extension: the degradation level right after the decision was applied."""


class DecisionIgnored(Event):
    type: Literal["decision_ignored"] = "decision_ignored"
    decision_id: str
    reason: str


class Rollback(Event):
    type: Literal["rollback"] = "rollback"
    checkpoint_id: str
    restored_files: Count
    safety_checkpoint_id: str


class Heartbeat(Event):
    type: Literal["heartbeat"] = "heartbeat"


class SessionEnd(Event):
    type: Literal["session_end"] = "session_end"
    status: Literal["completed", "terminated", "aborted", "failed"]
    reason: str | None = None


class Notification(Event):
    """What became of one attempt to notify the operator of an escalation, written by the
    notifier beside the agent (with `by: "notify"`, so it is no sign of the agent's life)."""

    type: Literal["notification"] = "notification"
    escalation_id: str
    outcome: Literal["sent", "failed", "retrying"]
    service: Annotated[str, AfterValidator(in_text)]
    """Which service, never its secrets: the apprise URL's scheme only (`ntfy://…`, numbered
    when several URLs are configured); any URL in it is reduced so when read
    (`supervisor.redact`)."""
    attempt: Annotated[int, Field(ge=1, le=MAX_INT)]
    reason: Annotated[str | None, AfterValidator(_redacted)] = None
    """Why it failed (null when sent); any URL in it is reduced to its scheme when read."""
    link: str | None = None
    """Where the message said to answer (the web view), or null."""


class UnsealedLine(Event):
    """Never read from a file: what a reader hands out in place of a line of a type the session
    seals (`store.voice`: an escalation, a finding, a verdict, the end) that came without a valid
    seal, so was written by the agent's side, not the supervisor. Shown as quoted agent text
    with a mark; never folded as what it claims to be (no escalation to answer)."""

    type: Literal["unsealed"] = "unsealed"
    line_type: str
    """The type the line claimed."""
    text: str
    """What it says (its reason or message): agent text."""


class Decision(Event):
    """An operator's decision, the one line type of `control.jsonl`."""

    type: Literal["decision"] = "decision"
    decision_id: str
    escalation_id: str | None = None
    action: DecisionAction
    text: str | None = None
    checkpoint_id: str | None = None
    operator: str
    # Extension `tasks` (kept as an extra field, so lines without it round-trip unchanged):
    # `split`: the ordered sub-tasks the agent takes one by one; `replan`: the new sub-tasks
    # after the current one (docs/plans.md). Checked by `protocol.decisions.plan_problem`.
    # a `quiet` carries `detector`, `signature` and `calls` as extension fields (checked by
    # `protocol.decisions.quiet.quiet_fields_problem`)


AgentEvent = Annotated[
    SessionStart | TaskStart | TaskEnd | ToolCall | ToolResult | Message | Usage | Detection
    | VerdictEvent | Limit | Checkpoint | Escalation | DecisionApplied | DecisionIgnored | Rollback
    | Heartbeat | SessionEnd | Notification,
    Field(discriminator="type"),
]

AGENT_MODELS: dict[str, type[Event]] = {
    m.model_fields["type"].default: m
    for m in (
        SessionStart, TaskStart, TaskEnd, ToolCall, ToolResult, Message, Usage, Detection,
        VerdictEvent, Limit, Checkpoint, Escalation, DecisionApplied, DecisionIgnored, Rollback,
        Heartbeat, SessionEnd, Notification,
    )
}
CONTROL_MODELS: dict[str, type[Event]] = {"decision": Decision}
