"""Supervision that went silent: a hook session whose transcript changed long after its last
hook event is "unsupervised", with the reason, in `sessions --json`, in the web view, and
notified once by `supervisor notify watch`."""

import json
import os
import time
from pathlib import Path

import pytest

from supervisor.store.local import LocalStore
from supervisor.store.silence import unsupervised
from supervisor.store.writer import event_writer
from tests.conftest import run_cli
from tests.guard_helpers import events, of_type
from tests.notify_helpers import Receiver, write_config
from tests.web_helpers import Web


def hook_session(root: Path, sid: str, transcript: Path, *, heard: float,
                 changed: float) -> None:
    """A hook session last heard from at `heard`, whose transcript changed at `changed`."""
    transcript.write_text('{"type":"user"}\n')
    os.utime(transcript, (changed, changed))
    with event_writer(root, sid) as w:
        w.append({"type": "session_start", "ts": heard - 10, "agent": "claude-code",
                  "task": None, "cwd": None, "pid": None,
                  "transcript_path": str(transcript)})
        w.append({"type": "tool_call", "ts": heard, "call_id": "c1", "tool": "Bash",
                  "args": {"command": "ls"}})


def test_a_transcript_that_grew_after_the_last_hook_event_is_unsupervised(
        root: Path, tmp_path: Path) -> None:
    now = time.time()
    hook_session(root, "gone-quiet", tmp_path / "a.jsonl", heard=now - 600, changed=now - 5)
    hook_session(root, "just-quiet", tmp_path / "b.jsonl", heard=now - 600, changed=now - 590)
    store = LocalStore(root)
    reason = unsupervised(store.summary("gone-quiet"), now)
    assert reason is not None and reason.startswith(
        "its transcript changed 10 min after the last hook event: its hooks no longer reach")
    assert unsupervised(store.summary("just-quiet"), now) is None
    (tmp_path / "a.jsonl").unlink()  # a transcript that is gone proves nothing
    assert unsupervised(store.summary("gone-quiet"), now) is None
    with event_writer(root, "just-quiet") as w:
        w.append({"type": "session_end", "status": "completed", "reason": None})
    os.utime(tmp_path / "b.jsonl")
    assert unsupervised(store.summary("just-quiet"), time.time()) is None  # it ended


@pytest.mark.slow
def test_unsupervised_is_shown_and_notified_once(root: Path, tmp_path: Path) -> None:
    now = time.time()
    hook_session(root, "silent", tmp_path / "t.jsonl", heard=now - 300, changed=now)
    rows = run_cli("sessions", "--json", "--root", str(root))
    [row] = [json.loads(line) for line in rows.stdout.splitlines()]
    assert row["unsupervised"].startswith("its transcript changed 5 min after")
    web = Web(root)
    try:
        for _ in range(50):  # the web view's follower loads the root in its own time
            _, body = web.get("/api/queue", {"Authorization": f"Bearer {web.token}"})
            if json.loads(body)["unsupervised"]:
                break
            time.sleep(0.1)
        [shown] = json.loads(body)["unsupervised"]
        assert shown["session"] == "silent" and "hooks no longer reach" in shown["reason"]
    finally:
        web.stop()
    with Receiver() as rx:
        write_config(tmp_path / "config", [rx.url], link="https://sup.example.org")
        first = run_cli("notify", "watch", "--once", "--root", str(root))
        again = run_cli("notify", "watch", "--once", "--root", str(root))
    assert first.stdout == "notified: silent is unsupervised\n", first.stderr
    assert again.stdout == ""
    [message] = rx.messages
    assert message["title"] == "unsupervised: silent"
    assert "hooks no longer reach the supervisor" in message["message"]
    assert "https://sup.example.org/#s=silent" in message["message"]
    [record] = of_type(events(root, "silent"), "notification")
    assert record["outcome"] == "sent" and record["escalation_id"].startswith("unsupervised-")


@pytest.mark.slow
def test_the_reason_names_the_project_hook_command_that_no_longer_resolves(
        root: Path, tmp_path: Path) -> None:
    """A silent session whose agent's project settings run our hook from an environment that
    is gone: the reason says which command (the same resolution check as `supervisor doctor`),
    in `sessions --json` and in `notify watch`'s message."""
    import sys

    from supervisor.hooks.installed import broken_project_hook

    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    settings = project / ".claude" / "settings.json"
    gone = tmp_path / "removed-venv" / "bin" / "supervisor-hook"

    def install(program: Path | str) -> None:
        settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": f"'{program}' claude-code", "timeout": 90}]}]}}))

    install(gone)
    now = time.time()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("{}\n")
    os.utime(transcript, (now, now))
    with event_writer(root, "broken-hook") as w:
        w.append({"type": "session_start", "ts": now - 310, "agent": "claude-code",
                  "task": None, "cwd": str(project), "pid": None,
                  "transcript_path": str(transcript)})
        w.append({"type": "tool_call", "ts": now - 300, "call_id": "c1", "tool": "Bash",
                  "args": {"command": "ls"}})
    out = run_cli("sessions", "--json", "--root", str(root))
    [row] = [json.loads(line) for line in out.stdout.splitlines()]
    assert row["unsupervised"] == (
        "its transcript changed 5 min after the last hook event: its hooks no longer reach "
        f"the supervisor: the command of its PreToolUse hook no longer resolves: {gone} does "
        f"not exist any more (was its environment removed or moved?); in {settings} (run "
        "`supervisor install` again, see `supervisor doctor`)")
    with Receiver() as rx:
        write_config(tmp_path / "config", [rx.url])
        first = run_cli("notify", "watch", "--once", "--root", str(root))
    assert first.returncode == 0, first.stderr
    [message] = rx.messages
    assert f"{gone} does not exist any more" in message["message"]

    # a command that resolves (this interpreter) is not named; other agents, no cwd: nothing
    install(sys.executable)
    assert broken_project_hook("claude-code", str(project)) is None
    install(gone)
    assert broken_project_hook("claude-code:Explore", str(project)) is not None  # a subagent
    assert broken_project_hook("codex", str(project)) is None  # its settings are elsewhere
    assert broken_project_hook("claude-code", None) is None
    assert broken_project_hook("claude-code", "relative/path") is None
    settings.write_text("{not json")  # unreadable settings: only the transcript speaks
    out = run_cli("sessions", "--json", "--root", str(root))
    [row] = [json.loads(line) for line in out.stdout.splitlines()]
    assert row["unsupervised"].endswith("(check `supervisor install` and the hook command)")
