"""OpenTelemetry export without `--include-content` sends nothing that quotes an argument or an
output (issue 41, medium).

A looping `curl -H 'Authorization: Bearer …'` ended up in `supervisor.escalation.reason`, the
detection's message and the verdict's message, because the engine's messages quote the call;
a failing tool's error text became the span's status. Now every attribute that is free text
the engine or the agent composed (messages, reasons, outcomes, a tool's error) is withheld
unless content is asked for, and a detection's signature (which can hold a path) is sent as a
hash. The real guard and engine make the session; the real translator reads it."""

from pathlib import Path
from typing import Any

import pytest

from supervisor.operator.send import send_decision
from supervisor.otel.translate import SessionTranslator
from supervisor.store.local import LocalStore
from tests.adversarial.sessions import paused_loop, started_guard

SECRET = "sk-live-4f9a7c2e1b"
COMMAND = f"curl -sf -H 'Authorization: Bearer {SECRET}' https://api.example.invalid/v1/x"


def _session(root: Path, work: Path) -> list[Any]:
    guard = started_guard(root, work, task="fetch the report")
    esc = paused_loop(guard, COMMAND, f"curl: (22) 401 for Bearer {SECRET}",
                      f"exit 22: Bearer {SECRET} refused")
    send_decision(root, "s1", "guidance", escalation_id=esc,
                  text="stop calling that endpoint", operator="ana")
    guard.poll()
    guard.end("failed", f"gave up after {COMMAND}")
    guard.close()
    return LocalStore(root).read_all("s1").events


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def _exported(events: list[Any], include_content: bool) -> str:
    translator = SessionTranslator("s1", include_content=include_content)
    spans = [span for event in events for span in translator.feed(event).spans]
    assert {s.name for s in spans} >= {"supervisor.escalation", "invoke_agent test-agent"}
    texts = []
    for span in spans:
        texts += [span.name, span.error or "", *_strings(span.attributes)]
        texts += [s for e in span.events for s in [e.name, *_strings(e.attributes)]]
    return "\n".join(texts)


@pytest.mark.parametrize("include_content", [False, True])
def test_nothing_quoting_a_call_leaves_without_include_content(tmp_path: Path,
                                                               include_content: bool) -> None:
    events = _session(tmp_path / "store", tmp_path)
    assert any(SECRET in (getattr(e, "reason", None) or "") for e in events)  # the engine quotes
    exported = _exported(events, include_content)
    if include_content:
        assert SECRET in exported  # asked for: the arguments, results and messages go
    else:
        assert SECRET not in exported and "Bearer" not in exported
        assert "api.example.invalid" not in exported
