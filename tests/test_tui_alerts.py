"""Alerts outside the terminal: `--notify` (notify-send) and `--on-escalation CMD`, with fake
commands that record what they were given."""

import json
import os
import stat
import time
from pathlib import Path

import pytest

from supervisor.tui.alerts import Alerts, Arrival

HOSTILE_REASON = "exact_repeat: `rm -rf /`; $(touch /tmp/pwned) <b>bold</b> \x1b]0;t\x07"


def fake(path: Path, out: Path) -> Path:
    """An executable that appends its argv and its SUPERVISOR_* environment as one JSON line."""
    path.write_text(
        "#!/usr/bin/env python3\n"
        "import json, os, sys\n"
        f"with open({str(out)!r}, 'a') as f:\n"
        "    env = {k: v for k, v in os.environ.items() if k.startswith('SUPERVISOR_')}\n"
        "    f.write(json.dumps({'argv': sys.argv[1:], 'env': env}) + '\\n')\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def records(out: Path, count: int, timeout: float = 20.0) -> list[dict]:
    end = time.monotonic() + timeout
    while True:
        lines = out.read_text().splitlines() if out.exists() else []
        if len(lines) >= count or time.monotonic() > end:
            return [json.loads(line) for line in lines]
        time.sleep(0.05)


def arrival(sid: str, eid: str = "esc-1", reason: str = "same_error: 5 times") -> Arrival:
    return Arrival(sid, {"escalation_id": eid, "level": 3, "reason": reason, "kind": "detection",
                         "deadline_ts": 1767229500.4})


def test_one_desktop_notification_per_burst(tmp_path: Path) -> None:
    out = tmp_path / "notify.jsonl"
    notify = fake(tmp_path / "notify-send", out)
    alerts = Alerts(desktop=True, which=lambda name: str(notify))
    assert alerts.active and not alerts.problems
    assert alerts.send([arrival("s1"), arrival("s2"), arrival("s3")], 0.0) == []
    [sent] = records(out, 1)
    assert sent["argv"][-2:] == ["3 escalations need you", "s1, s2, s3"]
    assert alerts.send([arrival("s4", reason=HOSTILE_REASON)], 1.0) == []
    second = records(out, 2)[1]["argv"]
    assert second[-2] == "s4 needs you"
    assert "&lt;b&gt;bold&lt;/b&gt;" in second[-1] and "\x1b" not in second[-1]
    alerts.close()


def test_the_command_runs_once_per_escalation_with_it_in_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("SUPERVISOR_")]:
        monkeypatch.delenv(name)  # CI sets some (SUPERVISOR_REQUIRE_REDIS): only ours count
    out = tmp_path / "hook.jsonl"
    script = fake(tmp_path / "hook.py", out)
    alerts = Alerts(command=f"{script} --from-dashboard", store="/srv/store")
    assert alerts.send([arrival("s1"), arrival("s2", "esc-7", HOSTILE_REASON)], 0.0) == []
    sent = records(out, 2)
    assert [r["argv"] for r in sent] == [["--from-dashboard"]] * 2
    by_session = {r["env"]["SUPERVISOR_SESSION"]: r["env"] for r in sent}
    assert by_session["s1"] == {
        "SUPERVISOR_SESSION": "s1", "SUPERVISOR_ESCALATION": "esc-1", "SUPERVISOR_LEVEL": "3",
        "SUPERVISOR_REASON": "same_error: 5 times", "SUPERVISOR_KIND": "detection",
        "SUPERVISOR_DEADLINE": "1767229500", "SUPERVISOR_STORE": "/srv/store"}
    reason = by_session["s2"]["SUPERVISOR_REASON"]
    assert "$(touch /tmp/pwned)" in reason and "\x1b" not in reason  # data, never a command
    assert not Path("/tmp/pwned").exists()
    alerts.close()


def test_missing_notify_send_is_said_once_and_a_hung_command_is_killed(tmp_path: Path) -> None:
    alerts = Alerts(desktop=True, which=lambda name: None)
    assert not alerts.active and "notify-send is not installed" in alerts.problems[0]
    assert alerts.send([arrival("s1")], 0.0) == []
    slow = Alerts(command="sleep 30")
    slow.send([arrival("s1")], 0.0)
    [(proc, _)] = slow._running
    slow.reap(1000.0)
    assert proc.poll() is not None and slow._running == []


@pytest.mark.skipif(os.access("/bin/sh", os.X_OK) is False, reason="no /bin/sh")
def test_a_command_that_cannot_start_is_reported(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("supervisor.tui.alerts.subprocess.Popen",
                        lambda *a, **k: (_ for _ in ()).throw(OSError(2, "No such file")))
    failures = Alerts(command="anything").send([arrival("s1")], 0.0)
    assert failures == ["alert not sent: /bin/sh: No such file"]
