"""The GitHub Copilot CLI target on the payloads the real Copilot CLI 1.0.102 sent
(tests/data/copilot/, recorded against the fake Chat Completions server): events told apart by
their fields, calls paired without ids, outcomes, answers, the session-events reader and the
installer of its flat hook entries."""

import json
from pathlib import Path

import pytest

from supervisor.engine import Policy
from supervisor.engine.categories import classify
from supervisor.engine.edits import edit_failure
from supervisor.hooks.copilot import TARGET
from supervisor.hooks.copilot.payload import event_of
from supervisor.hooks.copilot.respond import pre_tool_output
from supervisor.hooks.copilot.transcript import assistant_texts
from supervisor.hooks.step import PayloadError, read_payload, rescue
from tests.conftest import run_cli

DATA = Path(__file__).parent / "data" / "copilot"


def recorded() -> list[tuple[str, dict]]:
    return [(c["event"], c["payload"]) for c in map(
        json.loads, (DATA / "session.payloads.jsonl").read_text().splitlines())]


def step(payload: dict):
    return TARGET.read(read_payload(json.dumps(payload).encode()))


def test_each_event_is_known_by_its_fields() -> None:
    """Copilot names no event in its payloads: the hook that ran it is known by the shape."""
    for event, payload in recorded():
        assert event_of(payload) == event


def test_camel_case_session_ids_are_read() -> None:
    payload = recorded()[0][1]
    assert read_payload(json.dumps(payload).encode())["session_id"] == payload["sessionId"]
    found = rescue(b'{"sessionId": "s-1", "toolName": "bash", "toolArgs": {' + b"[" * 10, "bad")
    assert found["session_id"] == "s-1" and found["tool_name"] == "bash"
    with pytest.raises(PayloadError):
        read_payload(b'{"timestamp": 1}')


def test_steps() -> None:
    steps = [(e, step(p)) for e, p in recorded() if e != "permissionRequest"]
    kinds = [s.kind for _, s in steps]
    assert kinds == ["start", "prompt"] + ["call", "result"] * 5 + ["stop", "end"]
    start = steps[0][1]
    assert start.start["agent"] == "copilot" and start.start["copilot_session_id"]
    assert start.transcript is not None and start.transcript.endswith(
        f"/.copilot/session-state/{start.start['copilot_session_id']}/events.jsonl")
    calls = [s for _, s in steps if s.kind == "call"]
    results = [s for _, s in steps if s.kind == "result"]
    assert [c.call["tool"] for c in calls if c.call] == ["view", "bash", "edit", "edit", "create"]
    assert [c.pair for c in calls] == [r.pair for r in results]  # each result pairs its call
    outcomes = [(r.result["ok"], r.result["error"]) for r in results if r.result]
    assert outcomes == [
        (True, None),
        (False, "Exit code 2\nls: cannot access 'missing-dir': No such file or directory"),
        (False, "No match found"), (True, None), (True, None)]
    assert "<shellId: completed with exit code 2>" in results[1].result["output"]  # type: ignore[index]
    assert edit_failure("", "No match found") == "not_found"
    stop = steps[-2][1]
    assert stop.transcript is not None and stop.transcript.startswith("/home/dev/.copilot/")


def test_copilots_tools_in_the_engines_categories() -> None:
    policy = Policy.profile("default")
    assert classify("view", {"path": "a.py"}, policy) == "read"
    assert classify("edit", {"path": "a.py", "old_str": "a", "new_str": "b"}, policy) == "mutate"
    assert classify("create", {"path": "a.py", "file_text": "x"}, policy) == "mutate"
    assert classify("bash", {"command": "python -m pytest"}, policy) == "run"


def test_answers() -> None:
    denied = pre_tool_output("block", "stop repeating")
    assert denied == {"permissionDecision": "deny",
                      "permissionDecisionReason": "Agent Supervisor: stop repeating"}
    assert pre_tool_output("stop", "aborted")["permissionDecision"] == "deny"  # type: ignore[index]
    assert pre_tool_output("nudge", "careful") == {"additionalContext": "Agent Supervisor: careful"}
    assert pre_tool_output("allow", None) is None
    answers = TARGET.answers
    assert json.loads(answers.context("postToolUseFailure", "where it is", failure="x")) == {
        "additionalContext": "where it is"}
    assert answers.context("sessionEnd", "x") == ""
    assert json.loads(answers.stop("agentStop", "go on")) == {"decision": "block",
                                                              "reason": "go on"}


def test_the_session_events_reader(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    lines = [{"type": "user.message", "data": {"content": "fix"}},
             {"type": "assistant.message", "data": {"content": "Looking.", "toolRequests": []}},
             {"type": "assistant.message", "data": {"content": ""}},
             {"type": "tool.execution_complete", "data": {}}]
    events.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert assistant_texts(str(events), 0) == (["Looking."], events.stat().st_size)


@pytest.mark.slow
def test_install_user_and_project(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = home / ".copilot" / "settings.json"
    settings.parent.mkdir(parents=True)
    mine = '{"model": "x", "hooks": {"preToolUse": [{"type": "command", "bash": "mine"}]}}\n'
    settings.write_text(mine)
    env = {"HOME": str(home), "COPILOT_HOME": ""}
    done = run_cli("install", "copilot", "--timeout", "120", **env)
    assert done.returncode == 0, done.stderr
    data = json.loads(settings.read_text())
    assert set(data["hooks"]) == {e for e, _ in TARGET.settings.events}
    first, ours = data["hooks"]["preToolUse"]
    assert first == {"type": "command", "bash": "mine"}  # the user's own hook stays first
    assert ours["type"] == "command" and ours["timeoutSec"] == 120
    assert " copilot --timeout 120" in ours["bash"] and "matcher" not in ours
    again = run_cli("install", "copilot", "--timeout", "120", **env)
    assert "nothing changed" in again.stdout
    assert run_cli("uninstall", "copilot", **env).returncode == 0
    assert settings.read_text() == mine

    project = tmp_path / "repo"
    done = run_cli("install", "copilot", "--project", str(project), **env)
    assert done.returncode == 0 and "GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS" in done.stdout
    repo_hooks = project / ".github" / "hooks" / "supervisor.json"
    assert json.loads(repo_hooks.read_text())["version"] == 1
    assert run_cli("uninstall", "copilot", "--project", str(project), **env).returncode == 0
    assert not repo_hooks.exists()


def test_http_hooks_are_refused_with_a_clear_line(tmp_path: Path) -> None:
    done = run_cli("install", "copilot", "--transport", "http", HOME=str(tmp_path))
    assert done.returncode != 0
    assert "no HTTP hooks for Copilot CLI (yet); use --transport command" in done.stderr
    assert not (tmp_path / ".copilot" / "settings.json").exists()
