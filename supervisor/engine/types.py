"""The values the engine hands out: findings, limit hits, gauges, escalations and checks.

Plain slotted dataclasses (no pydantic): the hook imports them on every tool call. Each one maps
1:1 onto a protocol event through `to_event()` (a dict without `seq`/`ts`, which the writer adds).
"""

from dataclasses import dataclass, field
from typing import Any, Literal

Action = Literal["allow", "nudge", "skip", "block", "pause", "stop"]
EscalationKind = Literal["detection", "limit", "cycle"]

ACTION_BY_LEVEL: tuple[Action, ...] = ("allow", "nudge", "block", "pause", "stop")
"""The verdict action that belongs to each degradation level 0-4."""


@dataclass(slots=True)
class Finding:
    """One detector firing: what repeated, where (evidence seqs) and what the agent is told."""

    detector: str
    level: int
    signature: str
    evidence: list[int]
    message: str
    action: Action
    step: int = -1
    """0-based index of the tool call this finding belongs to (-1: not tied to a call)."""
    cached_output: str | None = None
    """For a `skip`: the content handed back instead of running the call (not recorded)."""
    confidence: str | None = None
    """How much evidence it rests on: `strong`, `moderate` or `weak` (see
    `engine.confidence`); None for what is not a loop finding (a skip, a hard limit)."""
    basis: str = ""
    """The evidence in a few words (`4 identical calls, output unchanged`)."""

    def to_event(self) -> dict[str, Any]:
        """The protocol `detection` event (without `seq`/`ts`); `action`, `confidence` and
        `basis` are extension fields."""
        event: dict[str, Any] = {
            "type": "detection",
            "detector": self.detector,
            "level": self.level,
            "signature": self.signature,
            "evidence": list(self.evidence),
            "message": self.message,
            "action": self.action,
        }
        if self.confidence:
            event["confidence"] = self.confidence
            event["basis"] = self.basis
        return event

    def to_dict(self) -> dict[str, Any]:
        return {**self.to_event(), "step": self.step}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Finding":
        return cls(
            d["detector"], d["level"], d["signature"], list(d["evidence"]), d["message"],
            d["action"], d.get("step", -1), None, d.get("confidence"), d.get("basis") or "",
        )


@dataclass(slots=True)
class LimitHit:
    """A hard limit reached: its name, the value, the limit and what happens (`pause`/`stop`)."""

    name: str
    value: float
    limit: float
    action: Action

    def to_event(self) -> dict[str, Any]:
        """The protocol `limit` event (without `seq`/`ts`)."""
        return {
            "type": "limit", "name": self.name, "value": self.value, "limit": self.limit,
            "action": self.action,
        }


@dataclass(slots=True, frozen=True)
class LimitGauge:
    """The current value of one hard limit, for the dashboard's gauges (`limit` None: off)."""

    name: str
    value: float
    limit: float | None


@dataclass(slots=True)
class EscalationRequest:
    """Why a `pause` verdict asks for the operator (the guard writes an `escalation` event)."""

    kind: EscalationKind
    reason: str
    evidence: list[int]
    signature: str | None = None
    limit: str | None = None
    """The name of the hard limit behind a `limit`/`cycle` escalation."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "reason": self.reason, "evidence": list(self.evidence),
            "signature": self.signature, "limit": self.limit,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "EscalationRequest":
        return cls(d["kind"], d["reason"], list(d["evidence"]), d.get("signature"), d.get("limit"))


@dataclass(slots=True)
class Check:
    """The engine's verdict on a tool call before it runs.

    `action`: `allow` (run it), `nudge` (run it and show `message`), `skip` (do not run it, hand
    back `cached_output` with `message`), `block` (refuse it with `message`), `pause` (wait for
    the operator; see `escalation`), `stop` (end the session).
    """

    action: Action
    level: int
    reason: str
    message: str | None
    signature: str
    findings: list[Finding] = field(default_factory=list)
    limits: list[LimitHit] = field(default_factory=list)
    escalation: EscalationRequest | None = None
    cached_output: str | None = None
    step: int = -1
    """0-based index this call got among the session's tool calls."""

    def to_verdict(self, call_id: str) -> dict[str, Any]:
        """The protocol `verdict` event for this check (without `seq`/`ts`)."""
        return {
            "type": "verdict", "call_id": call_id, "action": self.action, "level": self.level,
            "reason": self.reason, "message": self.message,
        }
