"""The Factory Droid target on the payloads and the transcript the real Droid 0.225.2 wrote
(tests/data/droid/, recorded against the fake Chat Completions server): its tool names, its
pairing of calls without ids, the failures read from the transcript, and its installer."""

import json
import shlex
from pathlib import Path

import pytest

from supervisor.engine import Policy
from supervisor.engine.categories import classify
from supervisor.engine.edits import edit_failure
from supervisor.hooks import memory as hook_memory
from supervisor.hooks.droid import TARGET
from supervisor.hooks.droid.payload import map_payload, pair_key
from supervisor.hooks.droid.transcript import assistant_texts
from supervisor.hooks.installed import unresolved
from supervisor.hooks.step import read_payload
from supervisor.hooks.targets import load
from tests.conftest import run_cli

DATA = Path(__file__).parent / "data" / "droid"
TRANSCRIPT = DATA / "session.transcript.jsonl"


def captured(event: str) -> list[dict]:
    payloads = [json.loads(line)["payload"]
                for line in (DATA / "session.payloads.jsonl").read_text().splitlines()]
    return [p for p in payloads if p["hook_event_name"] == event]


def step(payload: dict):
    return map_payload(read_payload(json.dumps(payload).encode()))


def test_registered_with_its_events() -> None:
    assert load("droid") is TARGET
    assert {e for e, _ in TARGET.settings.events} == {
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
        "SubagentStop", "Notification", "SessionEnd"}


def test_calls_are_recorded_under_claude_codes_names_and_pair_by_key() -> None:
    calls = [step(p) for p in captured("PreToolUse")]
    assert [c.call["tool"] for c in calls if c.call] == [
        "Read", "Bash", "Edit", "Edit", "Edit", "Write"]
    assert all(c.pair and c.call and c.pair == c.call["call_id"] for c in calls)
    bash = calls[1].call
    assert bash is not None and bash["args"] == {  # the model's notes: one description
        "command": "ls missing-dir", "description": "list (risk: low read only)"}
    policy = Policy.profile("default")
    assert classify("Bash", bash["args"], policy) == "read"  # ls: the shell's command decides
    assert classify("Write", calls[5].call["args"], policy) == "mutate"  # type: ignore[index]
    results = [step(p) for p in captured("PostToolUse")]
    assert [r.pair for r in results] == [calls[0].pair, calls[5].pair]
    assert all(r.result and r.result["ok"] for r in results)


def test_start_and_end_name_droid() -> None:
    start = step(captured("SessionStart")[0])
    assert start.start["agent"] == "droid" and start.start["droid_session_id"]
    assert start.message == {"role": "system", "text": "Factory Droid session start (startup)"}
    end = step(captured("SessionEnd")[0])
    assert end.end == {"status": "completed", "reason": "Factory Droid session ended (other)"}


def test_the_transcript_gives_the_text_and_the_failures_no_hook_reported() -> None:
    entries, offset = assistant_texts(str(TRANSCRIPT), 0)
    assert offset == TRANSCRIPT.stat().st_size
    assert [e for e in entries if isinstance(e, str)] == ["Looking.", "All done."]
    failures = [e for e in entries if not isinstance(e, str)]
    calls = [step(p) for p in captured("PreToolUse")]
    assert [f["pair"] for f in failures] == [c.pair for c in calls[1:5]]
    shell = failures[0]["result"]
    assert (shell["tool"], shell["ok"]) == ("Bash", False)
    assert shell["error"] == "Exit code 2\nls: cannot access 'missing-dir': No such file or " \
        "directory"
    edit = failures[1]["result"]
    assert edit["error"].startswith("The text to replace was not found in the file.")
    assert edit_failure(edit["output"], edit["error"]) == "not_found"


def test_the_reader_finds_the_same_in_a_transcript_written_with_spaces(tmp_path: Path) -> None:
    """The reader parses only the lines that can hold what it reads (an assistant message, a
    failed result), found by their bytes: JSON written with spaces after its colons (another
    writer than Droid's) gives the same texts and failures."""
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text("".join(json.dumps(json.loads(line)) + "\n"
                              for line in TRANSCRIPT.read_text().splitlines()))
    assert b'"is_error": true' in spaced.read_bytes()
    assert assistant_texts(str(spaced), 0)[0] == assistant_texts(str(TRANSCRIPT), 0)[0]


def test_a_failure_whose_call_was_read_before_is_found_behind_the_offset() -> None:
    """The call (an assistant line) is usually read at its PreToolUse and its failed result
    only at the next hook: the reader looks back for it."""
    data = TRANSCRIPT.read_bytes()
    failed = data.index(b'"is_error":true')
    cut = data.rfind(b"\n", 0, failed) + 1
    assert b'"tool_use"' not in data[cut:failed]  # its call lies before the offset
    later, _ = assistant_texts(str(TRANSCRIPT), cut)
    failures = [e for e in later if not isinstance(e, str)]
    assert len(failures) == 4
    assert failures[0]["pair"] == pair_key("Execute", json.loads(json.dumps(
        captured("PreToolUse")[1]["tool_input"])))


def test_a_failure_pairs_with_the_oldest_waiting_call() -> None:
    """The failure of call N is read at the PreToolUse of call N+1, which may be the same
    call again: it is N's."""
    memory = hook_memory.Memory()
    first = memory.pair_call("k")
    second = memory.pair_call("k")
    assert memory.pair_result("k") == first and memory.waiting == {"k": [second]}


@pytest.mark.slow
def test_install_and_uninstall(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = home / ".factory" / "settings.json"
    settings.parent.mkdir(parents=True)
    mine = '{"customModels": [{"model": "m", "provider": "generic-chat-completion-api"}]}\n'
    settings.write_text(mine)
    done = run_cli("install", "droid", "--timeout", "120", HOME=str(home))
    assert done.returncode == 0, done.stderr
    data = json.loads(settings.read_text())
    assert data["customModels"][0]["model"] == "m"
    ours = {event: groups[-1]["hooks"][0] for event, groups in data["hooks"].items()}
    assert set(ours) == {e for e, _ in TARGET.settings.events}
    assert ours["PreToolUse"]["timeout"] == 120
    assert data["hooks"]["PreToolUse"][-1]["matcher"] == "*"
    assert " droid --timeout 120" in ours["PreToolUse"]["command"]
    # `sh -c` (dash) would fork the client and wait: the client takes the shell's place
    assert ours["PreToolUse"]["command"].startswith("exec /")
    problem, program = unresolved(ours["PreToolUse"]["command"])  # (doctor's check)
    assert problem is None and program == shlex.split(ours["PreToolUse"]["command"])[1]
    assert run_cli("uninstall", "droid", HOME=str(home)).returncode == 0
    assert settings.read_text() == mine
