"""Notifications of escalations, end to end: real `supervisor notify deliver` processes, a real
HTTP receiver on 127.0.0.1 (apprise `json://`), the records they leave in the sessions."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from supervisor.notify.config import load
from supervisor.store.writer import event_writer
from tests.conftest import cli_env, run_cli
from tests.guard_helpers import events, of_type, start_demo, wait_for
from tests.notify_helpers import Receiver, escalate, write_config


def deliverer(root: Path, session: str, escalation: str = "esc-1") -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "supervisor", "notify", "deliver", "--root", str(root), session,
         escalation], env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def notifications(root: Path, session: str) -> list[dict]:
    return of_type(events(root, session), "notification")


@pytest.mark.slow
def test_one_message_per_burst_exactly_once(root: Path, tmp_path: Path) -> None:
    with Receiver() as rx:
        write_config(tmp_path / "config", [rx.url], burst_s=1.5,
                     link="https://sup.example.org")
        escalate(root, "alpha", deadline=time.time() + 600)
        escalate(root, "beta")
        # two escalations, three deliverers (one a duplicate, as from a restarted guard)
        procs = [deliverer(root, "alpha"), deliverer(root, "beta"), deliverer(root, "alpha")]
        for p in procs:
            assert p.wait(timeout=60) == 0, p.stderr.read() if p.stderr else ""
    assert len(rx.messages) == 1
    message = rx.messages[0]
    assert message["title"] == "2 agents need you"
    body = message["message"]
    assert "alpha (esc-1)" in body and "beta (esc-1)" in body
    assert "repeat · Bash “pytest -q tests/test_dates.py” · ×3" in body
    assert "else skip" in body and "no deadline (it waits for you; fallback skip)" in body
    assert "https://sup.example.org/#s=alpha" in body
    for session in ("alpha", "beta"):
        [record] = notifications(root, session)
        assert record["outcome"] == "sent" and record["attempt"] == 1
        assert record["service"] == "json://…"  # never the URL's secrets
        assert record["by"] == "notify"


@pytest.mark.slow
def test_a_failing_service_is_retried_then_failed_and_shown(root: Path, tmp_path: Path) -> None:
    with Receiver(fail_first=100, status=500) as rx:
        write_config(tmp_path / "config", [rx.url], burst_s=0, retries=2, backoff_s=0.2)
        escalate(root, "gamma")
        assert deliverer(root, "gamma").wait(timeout=60) == 0
        assert rx.refused == 3 and rx.messages == []
    records = notifications(root, "gamma")
    assert [r["outcome"] for r in records] == ["retrying", "retrying", "failed"]
    assert [r["attempt"] for r in records] == [1, 2, 3]
    assert all("500" in r["reason"] for r in records), records
    shown = run_cli("sessions", "--json", "--root", str(root))
    [row] = [json.loads(line) for line in shown.stdout.splitlines()]
    [outcome] = row["notifications"]["esc-1"].values()
    assert outcome["outcome"] == "failed" and outcome["attempt"] == 3


@pytest.mark.slow
def test_a_retry_that_succeeds_is_sent(root: Path, tmp_path: Path) -> None:
    with Receiver(fail_first=1) as rx:
        write_config(tmp_path / "config", [rx.url], burst_s=0, retries=3, backoff_s=0.1)
        escalate(root, "delta")
        assert deliverer(root, "delta").wait(timeout=60) == 0
        assert len(rx.messages) == 1
    assert [r["outcome"] for r in notifications(root, "delta")] == ["retrying", "sent"]


@pytest.mark.slow
def test_an_escalation_answered_during_the_burst_is_not_sent(root: Path,
                                                             tmp_path: Path) -> None:
    with Receiver() as rx:
        write_config(tmp_path / "config", [rx.url], burst_s=1.0)
        escalate(root, "eps")
        proc = deliverer(root, "eps")
        time.sleep(0.3)
        with event_writer(root, "eps") as w:
            w.append({"type": "decision_applied", "escalation_id": "esc-1",
                      "decision_id": "d-1", "action": "approve", "outcome": "approved"})
        assert proc.wait(timeout=60) == 0
    assert rx.messages == [] and notifications(root, "eps") == []


@pytest.mark.slow
def test_the_guard_notifies_a_live_demo_agent_with_no_dashboard(root: Path,
                                                                 tmp_path: Path) -> None:
    with Receiver() as rx:
        write_config(tmp_path / "config", [rx.url], burst_s=0.2)
        agent = start_demo(root, "demo1", "loop", tmp_path / "work", deadline=30)
        try:
            evs = wait_for(root, "demo1", lambda e: bool(of_type(e, "notification")))
        finally:
            agent.terminate()
            agent.wait(timeout=30)
    [record] = of_type(evs, "notification")
    assert record["outcome"] == "sent"
    assert len(rx.messages) == 1
    assert rx.messages[0]["title"] == "needs you: demo1 (esc-1)"
    assert "else skip" in rx.messages[0]["message"]


@pytest.mark.slow
def test_a_url_apprise_cannot_parse_is_one_line_naming_the_line(tmp_path: Path) -> None:
    path = write_config(tmp_path / "config", ["json://127.0.0.1:9/x", "nosuch://what/ever"])
    config = load(path)
    assert config.urls == ["json://127.0.0.1:9/x"]
    [problem] = config.problems
    assert problem.startswith(f"{path}:2: apprise cannot parse this nosuch:// URL")
    assert "what/ever" not in problem  # a URL may hold a token: never repeated


@pytest.mark.slow
def test_notify_test_command(tmp_path: Path) -> None:
    with Receiver() as rx:
        ok = run_cli("notify", "test", "--url", rx.url,
                     SUPERVISOR_CONFIG=str(tmp_path / "config"))
        assert ok.returncode == 0, ok.stderr
        assert ok.stdout == "sent: json://…\n"
        assert rx.messages[0]["title"] == "Agent Supervisor: test"
    with Receiver(fail_first=100) as rx:
        write_config(tmp_path / "config", [rx.url])
        failed = run_cli("notify", "test", SUPERVISOR_CONFIG=str(tmp_path / "config"))
        assert failed.returncode == 1 and failed.stdout.startswith("failed: json://")
    bad = run_cli("notify", "test", "--url", "nosuch://x")
    assert bad.returncode == 2 and "apprise cannot parse" in bad.stderr
    none = run_cli("notify", "test", SUPERVISOR_CONFIG=str(tmp_path / "empty"))
    assert none.returncode == 2 and "no notify URLs" in none.stderr


@pytest.mark.parametrize("content", ["[notify]\nurls = 'x\n", "[notify]\nretries = -1\n"])
def test_a_bad_config_is_one_line(tmp_path: Path, content: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(content)
    [problem] = load(path).problems
    assert problem.startswith(str(path)) and "\n" not in problem


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_failed_notification_shows_beside_the_escalation(
        root: Path, tmp_path: Path, anyio_backend: str) -> None:
    import os

    from tui_support import FROZEN_NOW, escalation, load, make_app, screen_text, start, write_events

    from supervisor.store.liveness import THIS_HOST
    from supervisor.tui.screens.escalation import EscalationScreen

    write_events(root, "tui1", [start(pid=os.getpid(), host=THIS_HOST),
                                escalation("esc-1", deadline_ts=FROZEN_NOW + 300)])
    with Receiver(fail_first=100, status=500) as rx:
        write_config(tmp_path / "config", [rx.url], burst_s=0, retries=1, backoff_s=0.1)
        assert deliverer(root, "tui1").wait(timeout=60) == 0
    app = make_app(root)
    async with app.run_test(size=(140, 40)) as pilot:
        await load(pilot, initial=True)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EscalationScreen)
        app.refresh_screens()
        await pilot.pause()
        line = next(x for x in screen_text(app).splitlines() if "Deadline" in x)
        assert "notified: FAILED (attempt 2): " in line and "Internal server error" in line, line


@pytest.mark.slow
def test_a_claude_code_hook_session_is_notified(root: Path, tmp_path: Path) -> None:
    """Real hook processes (through the resident hook server): a Bash call that fails the same
    way again and again escalates, the held call's notification is sent, an answer frees it."""
    from tests.hook_helpers import payload, run_hook, start_hook

    ws = tmp_path / "ws"
    ws.mkdir()
    bash = {"command": "pytest -q"}
    with Receiver() as rx:
        write_config(tmp_path / "config", [rx.url], burst_s=0.2)
        assert run_hook(payload("SessionStart", cwd=ws, source="startup"), root).returncode == 0
        held = None
        for step in range(12):
            call = payload("PreToolUse", cwd=ws, tool_name="Bash", tool_input=bash,
                           tool_use_id=f"toolu_{step}")
            proc = start_hook(call, root, "--timeout", "120")
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                held = proc  # the call is held: it escalated
                break
            run_hook(payload("PostToolUseFailure", cwd=ws, tool_name="Bash", tool_input=bash,
                             tool_use_id=f"toolu_{step}", error="Exit code 1\n1 failed"), root)
        assert held is not None, [e["type"] for e in events(root, "loop-1")]
        try:
            evs = wait_for(root, "loop-1", lambda e: bool(of_type(e, "notification")))
        finally:
            run_cli("answer", "loop-1", "--skip", SUPERVISOR_HOME=str(root))
            held.communicate(timeout=30)
    assert of_type(evs, "notification")[0]["outcome"] == "sent"
    assert len(rx.messages) == 1 and rx.messages[0]["title"] == "needs you: loop-1 (esc-1)"
    assert "Bash “pytest -q" in rx.messages[0]["message"]


def test_an_operators_own_pause_is_not_notified(root: Path, tmp_path: Path) -> None:
    from supervisor.guard.core import Guard
    from supervisor.guard.settings import GuardSettings
    from supervisor.operator.send import send_decision

    with Receiver() as rx:
        write_config(tmp_path / "config", [rx.url], burst_s=0)
        guard = Guard.open(root, "paused", cwd=tmp_path,
                           settings=GuardSettings(checkpoints=False))
        try:
            guard.start("test", None, heartbeat_s=None)
            send_decision(root, "paused", "pause", operator="ana")
            assert guard.pre_call("Bash", {"command": "ls"}, call_id="c1").action == "pause"
        finally:
            guard.close()
        time.sleep(2.0)  # what a deliverer would have needed to start and send
        assert rx.messages == []
    assert of_type(events(root, "paused"), "escalation")[0]["kind"] == "pause"
    assert not (root / "sessions" / "paused" / "notify").exists()


@pytest.mark.slow
def test_a_bad_url_is_recorded_beside_the_escalation(root: Path, tmp_path: Path) -> None:
    with Receiver() as rx:
        path = write_config(tmp_path / "config", ["nosuch://x/y", rx.url], burst_s=0)
        escalate(root, "zeta")
        assert deliverer(root, "zeta").wait(timeout=60) == 0
        assert len(rx.messages) == 1  # the good URL still works
    bad, good = notifications(root, "zeta")
    assert bad["outcome"] == "failed" and bad["service"] == "config.toml"
    assert bad["reason"].startswith(f"{path}:2: apprise cannot parse this nosuch:// URL")
    assert good["outcome"] == "sent"
