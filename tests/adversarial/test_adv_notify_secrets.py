"""A notification URL's secrets never leave the config (issue 41, low).

An apprise URL is a credential: an ntfy topic, a webhook path, a bot token in the host part.
apprise's privacy form keeps topics and paths, and the notifier recorded it as the `service` of
every `notification` event, with apprise's reason (which may quote the URL) beside it; so the
secret reached the event log (which a relay ships), `sessions --json`, `tail` and the web page.
Now only the URL's scheme is kept, everything of the URL is removed from a reason, and lines
written before are redacted when read. A real deliverer process, a real HTTP receiver."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from supervisor.redact import in_text, notify_url
from supervisor.store.writer import event_writer
from tests.conftest import cli_env, run_cli
from tests.notify_helpers import Receiver, escalate, write_config

SECRET = "s3cr3t-webhook-path-9f2c"
TOPIC = "my-agents-topic-7d1a"


def _everything_shown(root: Path, session: str) -> str:
    shown = [run_cli("sessions", "--json", "--root", str(root)).stdout,
             run_cli("tail", session, "--root", str(root)).stdout,
             run_cli("tail", session, "--json", "--root", str(root)).stdout,
             run_cli("tail", session, "--full", "--root", str(root)).stdout]
    return "\n".join(shown)


@pytest.mark.slow
def test_a_webhook_path_is_nowhere(root: Path, tmp_path: Path) -> None:
    with Receiver(fail_first=100, status=500) as rx:
        url = f"{rx.url}/{SECRET}"
        write_config(tmp_path / "config", [url], burst_s=0, retries=1, backoff_s=0.1)
        escalate(root, "gamma")
        done = subprocess.run(
            [sys.executable, "-m", "supervisor", "notify", "deliver", "--root", str(root),
             "gamma", "esc-1"], env=cli_env(SUPERVISOR_CONFIG=str(tmp_path / "config")),
            capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert rx.refused == 2
    log = (root / "sessions" / "gamma" / "events.jsonl").read_text()
    records = [json.loads(line) for line in log.splitlines() if '"notification"' in line]
    assert [r["service"] for r in records] == ["json://…", "json://…"]
    assert SECRET not in log and SECRET not in _everything_shown(root, "gamma")


@pytest.mark.slow
def test_lines_written_before_are_redacted_when_read(root: Path) -> None:
    escalate(root, "old")
    with event_writer(root, "old") as w:
        w.append({"type": "notification", "escalation_id": "esc-1", "outcome": "failed",
                  "service": f"ntfy://ntfy.sh/{TOPIC}", "attempt": 1, "by": "notify",
                  "reason": f"Failed to send to https://ntfy.sh/{TOPIC}?auth=x: 404"})
    shown = _everything_shown(root, "old")
    assert TOPIC not in shown
    assert "ntfy://…" in shown and "https://…" in shown


def test_a_reason_quoting_pieces_of_the_url_loses_them() -> None:
    url = f"ntfys://user:hunter22@ntfy.example/{TOPIC}"
    reason = f"ntfy topic {TOPIC} refused for user hunter22 at 'ntfy.example/{TOPIC}'"
    redacted = in_text(reason, url)
    assert TOPIC not in redacted and "hunter22" not in redacted
    assert notify_url(url) == "ntfys://…" and notify_url("ntfys://…") == "ntfys://…"
