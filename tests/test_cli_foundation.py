"""The command line through real subprocesses: version, sessions, tail, validate, errors."""

import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from supervisor import __version__
from supervisor.store.paths import session_files
from supervisor.store.writer import event_writer
from tests.conftest import cli_env, run_cli

HOSTILE = ("\x1b[31mred\x1b[0m \x1b]0;owned title\x07 \x1b]52;c;cm0gLXJmIH4=\x07 "
           "[bold red]markup[/] \x9b2J \u202eevil\u202c \r overwrite")
ESCAPE_BYTES = re.compile("[\x1b\x07\x9b\x9d\r\u202e\u202c]")


def write_session(root: Path, sid: str, *events: dict) -> None:
    with event_writer(root, sid) as w:
        w.append_many(events)


def start(agent: str = "claude-code", task: str = "fix the bug") -> dict:
    return {"type": "session_start", "agent": agent, "task": task, "cwd": "/w", "pid": 1,
            "policy": None, "heartbeat_s": None}


def test_version() -> None:
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"supervisor {__version__}"


def test_no_command_prints_help_and_fails() -> None:
    result = run_cli()
    assert result.returncode == 2 and "sessions" in result.stdout


@pytest.mark.slow
def test_sessions_empty(root: Path) -> None:
    result = run_cli("sessions")
    assert result.returncode == 0 and "no sessions in root" in result.stdout


@pytest.mark.slow
def test_commands_print_a_relative_root_as_an_absolute_path(tmp_path: Path) -> None:
    """`--root runs` typed in a folder is printed as the absolute path: the line is pasted and
    read away from the folder the command ran in."""
    (tmp_path / "runs").mkdir()
    result = subprocess.run([sys.executable, "-m", "supervisor", "sessions", "--root", "runs"],
                            capture_output=True, text=True, timeout=60, env=cli_env(),
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"no sessions in root {(tmp_path / 'runs').resolve()}"
    missing = subprocess.run([sys.executable, "-m", "supervisor", "sessions", "--root", "typo"],
                             capture_output=True, text=True, timeout=60, env=cli_env(),
                             cwd=tmp_path)
    assert f"root {(tmp_path / 'typo').resolve()} does not exist" in missing.stderr


@pytest.mark.slow
def test_sessions_table_and_json(root: Path) -> None:
    write_session(root, "alpha", start(task=HOSTILE),
                  {"type": "tool_call", "call_id": "c1", "tool": "bash", "args": {"cmd": "ls"}},
                  {"type": "tool_result", "call_id": "c1", "ok": False, "output": "boom",
                   "output_bytes": 4, "output_hash": "h", "error": "exit 1"},
                  {"type": "escalation", "escalation_id": "e1", "level": 3, "reason": "loop",
                   "evidence": [2], "options": ["approve", "abort"], "deadline_ts": None,
                   "fallback": "abort"})
    write_session(root, "beta", start(agent="mini"), {"type": "session_end",
                                                      "status": "completed", "reason": None})
    with open(session_files(root, "beta").events, "ab") as f:
        f.write(b"not json\n")
    table = run_cli("sessions")
    assert table.returncode == 0, table.stderr
    header, *rows = table.stdout.splitlines()
    assert header.split() == ["SESSION", "AGENT", "TASK", "STATUS", "LEVEL", "EVENTS", "ERRORS",
                              "PENDING", "LAST", "ACTIVITY"]
    alpha = next(r for r in rows if r.startswith("alpha"))
    beta = next(r for r in rows if r.startswith("beta"))
    assert "waiting" in alpha and "1 !" in alpha and " 3 " in alpha
    assert "completed" in beta and "+1 bad" in beta
    assert not ESCAPE_BYTES.search(table.stdout)

    listed = run_cli("sessions", "--json")
    assert listed.returncode == 0
    assert not ESCAPE_BYTES.search(listed.stdout)
    rows = {r["session"]: r for r in map(json.loads, listed.stdout.splitlines())}
    assert rows["alpha"]["status"] == "waiting" and rows["alpha"]["pending_escalations"] == ["e1"]
    assert rows["alpha"]["errors"] == 1 and rows["alpha"]["task"] == HOSTILE
    assert rows["beta"]["status"] == "completed" and rows["beta"]["bad_lines"] == 1


@pytest.mark.slow
def test_sessions_with_explicit_root(tmp_path: Path) -> None:
    write_session(tmp_path / "elsewhere", "x1", start())
    result = run_cli("sessions", "--root", str(tmp_path / "elsewhere"), "--json")
    assert [json.loads(r)["session"] for r in result.stdout.splitlines()] == ["x1"]


@pytest.mark.slow
def test_tail_escapes_hostile_text_and_renders_every_event(root: Path) -> None:
    write_session(root, "s", start(),
                  {"type": "message", "role": "assistant", "text": HOSTILE},
                  {"type": "tool_call", "call_id": "c", "tool": "bash",
                   "args": {"cmd": HOSTILE}},
                  {"type": "usage", "input_tokens": 10, "output_tokens": 2, "cost_usd": 0.5},
                  {"type": "future_thing", "x": HOSTILE})
    with open(session_files(root, "s").events, "ab") as f:
        f.write(b'{"broken \x1b]0;t\x07\n')
    result = run_cli("tail", "s")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 6
    assert not ESCAPE_BYTES.search(result.stdout)
    assert "[bold red]markup[/]" in lines[1]  # shown literally, never interpreted
    assert "10 in / 2 out tokens, $0.5000" in lines[3]
    assert "future_thing" in lines[4] and "BAD @" in lines[5]
    last_two = run_cli("tail", "s", "-n", "2")
    assert last_two.stdout.splitlines() == lines[-2:]


@pytest.mark.slow
def test_tail_follow_picks_up_an_appended_event(root: Path) -> None:
    write_session(root, "live", start())
    proc = subprocess.Popen([sys.executable, "-m", "supervisor", "tail", "live", "--follow"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=cli_env())
    watchdog = threading.Timer(30, proc.kill)  # a hang fails the test instead of blocking it
    watchdog.start()
    try:
        first = proc.stdout.readline()
        assert "session_start" in first
        time.sleep(0.3)
        write_session(root, "live", {"type": "message", "role": "user", "text": "later"})
        second = proc.stdout.readline()
        assert "message" in second and "user: later" in second
    finally:
        watchdog.cancel()
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow
def test_tail_follow_ends_when_the_events_file_is_removed(root: Path) -> None:
    """`tail --follow` said "the log was truncated or replaced; reading from the start" of a
    removed `events.jsonl` and went on waiting: it says the session vanished (as the
    dashboard and `sessions` do) and ends, exit 1, as for a removed folder."""
    write_session(root, "live", start())
    proc = subprocess.Popen([sys.executable, "-m", "supervisor", "tail", "live", "--follow"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=cli_env())
    watchdog = threading.Timer(30, proc.kill)  # a hang fails the test instead of blocking it
    watchdog.start()
    try:
        assert "session_start" in proc.stdout.readline()
        session_files(root, "live").events.unlink()
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 1, out
        assert out.splitlines() == ["-- the session vanished (its events.jsonl was removed) --"]
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.mark.slow
def test_validate_clean_and_bad_files(root: Path, tmp_path: Path) -> None:
    write_session(root, "v", start(), {"type": "heartbeat"})
    clean = run_cli("validate", str(session_files(root, "v").events))
    assert clean.returncode == 0 and "2 events, 0 bad lines" in clean.stdout
    bad = tmp_path / "bad.jsonl"
    good_line = session_files(root, "v").events.read_bytes().splitlines(keepends=True)[0]
    bad.write_bytes(good_line + b"[1]\n" + b'{"v":1,"seq":3,"ts":1,"type":"message"}\n')
    result = run_cli("validate", str(bad), str(session_files(root, "v").events))
    assert result.returncode == 1
    out = result.stdout.splitlines()
    # FILE:LINE: as editors and grep -n read it; the byte offset in words after the reason
    assert out[0] == f"{bad}:2: not a JSON object: '[1]' (byte {len(good_line)})"
    assert out[1].startswith(f"{bad}:3: missing field 'role'")
    assert out[1].endswith(f" (byte {len(good_line) + 4})")
    assert f"{bad}: 1 events, 2 bad lines" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("tail", "../etc"), "invalid session id '../etc'"),
        (("tail", "nosuch"), "no session 'nosuch'"),
        (("validate", "/no/such/file.jsonl"), "no such file: /no/such/file.jsonl"),
        (("tail", "x", "-n", "-3"), "-n/--lines must be 0 or more"),
    ],
)
@pytest.mark.slow
def test_errors_are_one_line_without_traceback(root: Path, args: tuple, message: str) -> None:
    if "x" in args:
        write_session(root, "x", start())
    result = run_cli(*args)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"supervisor: error: {message}"] or (
        result.stderr.startswith(f"supervisor: error: {message}")
        and len(result.stderr.splitlines()) == 1
    ), result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_unusable_root_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = run_cli("tail", "s", "--root", str(blocker / "sub"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.slow
def test_validate_reports_seq_that_does_not_increase(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    lines = [b'{"v":1,"seq":%d,"ts":1,"type":"heartbeat"}\n' % n for n in (1, 2, 2, 5, 3)]
    path.write_bytes(b"".join(lines))
    result = run_cli("validate", str(tmp_path))
    assert result.returncode == 1
    width = len(lines[0])
    assert result.stdout.splitlines() == [
        f"{path}:3: seq 2 does not increase (previous 2) (byte {2 * width})",
        f"{path}:5: seq 3 does not increase (previous 5) (byte {4 * width})",
        f"{path}: 5 events, 0 bad lines, 2 seq errors",
    ]


@pytest.mark.slow
def test_validate_control_file(root: Path) -> None:
    from supervisor.store.writer import control_writer

    with control_writer(root, "c") as w:
        w.append({"type": "decision", "decision_id": "d", "escalation_id": None,
                  "action": "approve", "text": None, "checkpoint_id": None, "operator": "me"})
    result = run_cli("validate", str(session_files(root, "c").control))
    assert result.returncode == 0 and "1 events, 0 bad lines" in result.stdout
    as_events = run_cli("validate", "--kind", "events", str(session_files(root, "c").control))
    assert as_events.returncode == 0  # a decision in an events file is an unknown type, kept
