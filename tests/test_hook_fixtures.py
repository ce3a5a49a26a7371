"""Recorded Claude Code payloads through the real `supervisor hook claude-code`: each case's
exit code, stdout and recorded events are those in tests/data/claude_code/cases.json."""

import json
from pathlib import Path

import pytest

from supervisor.operator.send import send_decision
from tests.hook_helpers import DATA, SID, events, fixture_payload, run_hook

CASES = json.loads((DATA / "cases.json").read_text())
IGNORED = {"checkpoint", "heartbeat"}
"""Guard bookkeeping that depends on the workspace, not on the payload."""


def _types(items: list[dict]) -> list[str]:
    return [e["type"] for e in items if e["type"] not in IGNORED]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_recorded_payload(case: dict, tmp_path: Path) -> None:
    root = tmp_path / "store"
    workspace = tmp_path / "myapp"
    workspace.mkdir()
    (workspace / "parser.py").write_text("def parse(text):\n    return text.split(',')\n")
    session = case.get("session", SID)
    for name in case.get("before", []):
        assert run_hook(fixture_payload(name, workspace), root).returncode == 0
    for decision in case.get("decisions", []):
        send_decision(root, decision.get("session", SID), decision["action"],
                      text=decision.get("text"), operator="ana")
    seen = len(events(root, session))
    seen_parent = len(events(root, SID))

    done = run_hook(fixture_payload(case["payload"], workspace), root)

    assert done.returncode == case["exit_code"], done.stderr
    if case["stdout"] is None:
        assert done.stdout == ""
    else:
        assert json.loads(done.stdout) == case["stdout"]
    if case.get("stderr"):
        assert case["stderr"] in done.stderr
    else:
        assert done.stderr == ""
    if case["events"] is None:
        assert not (root / "sessions").exists() or not any((root / "sessions").iterdir())
        return
    written = events(root, session)
    assert _types(written[seen:]) == case["events"]
    seqs = [e["seq"] for e in written]
    assert seqs == list(range(1, len(seqs) + 1))
    if "parent_events" in case:
        assert _types(events(root, SID)[seen_parent:]) == case["parent_events"]
