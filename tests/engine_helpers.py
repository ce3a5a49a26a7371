"""Helpers for the engine tests: build sessions, replay them, look at the findings."""

from typing import Any

from supervisor.analysis.replay import RunReport, analyze_events
from supervisor.engine import Policy
from tests.data.devset.generate import SessionBuilder

__all__ = ["SessionBuilder", "alarms", "detectors", "replay"]


def replay(events: list[dict[str, Any]], policy: Policy | None = None,
           profile: str = "default") -> RunReport:
    return analyze_events(events, policy or Policy.profile(profile), session="t", source="t")


def detectors(report: RunReport, *, min_level: int = 1) -> list[str]:
    """Detectors of the findings that are reactions (skips of re-reads excluded)."""
    return [f.detector for f in report.findings if f.level >= min_level and f.action != "skip"]


def alarms(report: RunReport) -> list[tuple[int, str, str]]:
    return [(f.step, f.detector, f.action) for f in report.findings if f.action != "skip"]
