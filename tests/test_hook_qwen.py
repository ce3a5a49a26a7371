"""The Qwen Code target on the payloads the real Qwen Code 0.24.4 sent (tests/data/qwen_code/,
recorded against the fake Chat Completions server), its answers, its chat-file reader and its
installer."""

import dataclasses
import json
import re
import time
from pathlib import Path

import pytest

from supervisor.engine.edits import edit_failure, edits_of
from supervisor.hooks.budget import Budget
from supervisor.hooks.qwen_code import CALL_WAITS_S, TARGET
from supervisor.hooks.qwen_code.payload import NO_TEXT, map_payload
from supervisor.hooks.qwen_code.transcript import read_chat
from supervisor.hooks.runtime import handle
from supervisor.hooks.step import read_payload
from supervisor.hooks.targets import load, names
from tests.conftest import run_cli
from tests.hook_helpers import events

DATA = Path(__file__).parent / "data" / "qwen_code"


def captured(event: str) -> list[dict]:
    payloads = [json.loads(line)["payload"]
                for line in (DATA / "session.payloads.jsonl").read_text().splitlines()]
    return [p for p in payloads if p["hook_event_name"] == event]


def step(payload: dict):
    return map_payload(read_payload(json.dumps(payload).encode()))


def test_registered() -> None:
    assert "qwen-code" in names() and load("qwen-code") is TARGET


def test_start_prompt_and_stop() -> None:
    start = step(captured("SessionStart")[0])
    assert start.kind == "start" and start.start["agent"] == "qwen-code"
    assert start.message == {"role": "system", "text": "Qwen Code session start (startup)"}
    assert start.start["qwen_session_id"] == captured("SessionStart")[0]["session_id"]
    prompt = step(captured("UserPromptSubmit")[0])
    assert prompt.kind == "prompt" and prompt.message == {"role": "user", "text": "fix foo.py"}
    stop = step(captured("Stop")[0])
    assert stop.kind == "stop" and stop.message == {"role": "assistant", "text": "All done."}


def test_the_empty_prompt_between_turns_is_no_prompt() -> None:
    """Qwen fires UserPromptSubmit with an empty prompt after every batch of calls: recording it
    as a prompt would start a new cycle (and reset the per-cycle limits) on every turn."""
    empty = [p for p in captured("UserPromptSubmit") if p["prompt"] == ""]
    assert len(empty) == 4
    for payload in empty:
        mapped = step(payload)
        assert mapped.kind == "notification" and mapped.message is None


def test_the_call_id_is_the_models_in_every_event() -> None:
    """`tool_use_id` is a fresh `toolu_...` in PreToolUse and PostToolUse but the model's call
    id in PostToolBatch: `tool_call_id` is the same in all three."""
    pre = captured("PreToolUse")[0]
    assert pre["tool_use_id"].startswith("toolu_")
    call = step(pre)
    assert call.kind == "call" and call.call is not None
    assert call.call["call_id"] == pre["tool_call_id"]
    assert call.call["tool"] == "read_file"
    result = step(captured("PostToolUse")[0])
    assert result.result is not None and result.result["call_id"] == pre["tool_call_id"]
    batch = step(captured("PostToolBatch")[0])
    assert [b["call"]["call_id"] for b in batch.batch] == [pre["tool_call_id"]]


def test_outcomes() -> None:
    read, edited, shell = (step(p).result for p in captured("PostToolUse"))
    assert read is not None and read["ok"]
    assert read["output"] == "def add(a, b):\n    return a - b\n"
    assert edited is not None and edited["ok"] and edited["output"].startswith("The file: ")
    assert shell is not None and shell["ok"] and "Output: ok" in shell["output"]
    (failed,) = (step(p).result for p in captured("PostToolUseFailure"))
    assert failed is not None and failed["ok"] is False and failed["tool"] == "edit"
    assert failed["error"].startswith("Failed to edit, 0 occurrences found for old_string")
    assert edit_failure(failed["output"], failed["error"]) == "not_found"


def test_a_failing_shell_command_reads_as_for_gemini() -> None:
    payload = {**captured("PreToolUse")[0], "hook_event_name": "PostToolUseFailure",
               "tool_name": "run_shell_command", "tool_input": {"command": "ls missing-dir"},
               "error": "Command: ls missing-dir\nDirectory: (root)\nOutput: ls: cannot access "
                        "'missing-dir': No such file or directory\nError: (none)\nExit Code: 2\n"
                        "Signal: (none)\nProcess Group PGID: (none)", "is_interrupt": False}
    result = step(payload).result
    assert result is not None and result["ok"] is False
    assert result["error"] == "Exit code 2\nls: cannot access 'missing-dir': No such file or " \
        "directory"


def test_qwens_edit_is_a_replacement_the_engine_reads() -> None:
    args = captured("PreToolUse")[1]["tool_input"]
    (edit,) = edits_of("edit", args)
    assert (edit.kind, edit.path, edit.search, edit.text) == (
        "replace", "/home/dev/myapp/foo.py", "return a * b", "return a + b")


def test_answers() -> None:
    assert json.loads(TARGET.answers.stop("Stop", "keep going")) == {
        "decision": "block", "reason": "keep going"}
    assert TARGET.answers.stop("Stop", None) == ""


def test_the_chat_file_reader() -> None:
    chat = DATA / "session.transcript.jsonl"
    entries, offset = read_chat(str(chat), 0)
    assert [e for e in entries if isinstance(e, str)] == ["Looking.", "All done."]
    spent = [e for e in entries if isinstance(e, dict) and "key" in e]
    assert spent and all(s["model"] == "fake-model" and s["counts"] == {
        "input_tokens": 100, "cache_read_tokens": 0, "output_tokens": 10} for s in spent)
    assert len({s["key"] for s in spent}) == len(spent)
    assert offset == chat.stat().st_size


def test_the_chat_file_reader_names_the_calls_each_answer_issued() -> None:
    """An answer's `functionCall` ids are the hooks' `tool_call_id`s (the call's id): the
    runtime knows which calls an answer it read asked for, under the answer's `uuid`."""
    entries, _ = read_chat(str(DATA / "session.transcript.jsonl"), 0)
    issued = [e for e in entries if isinstance(e, dict) and "issued" in e]
    calls = [p["tool_call_id"] for p in captured("PreToolUse")]
    assert [i["issued"] for i in issued] == [[c] for c in calls] and len(calls) == 4
    answers = [json.loads(line) for line in LateChat.LINES]
    asking = [a["uuid"] for a in answers if a["type"] == "assistant"
              and any("functionCall" in p for p in a["message"]["parts"])]
    assert [i["batch"] for i in issued] == asking


class LateChat:
    """The recorded session's chat file as Qwen Code's queue of writes leaves it on a loaded
    machine: its lines up to `written` are there when the Stop hook (or a hook given
    `lands=True`) first reads it, the rest land just after that read (as read through the real
    reader). `stop_waits_s`: the target's wait for the answer Stop names."""

    LINES = (DATA / "session.transcript.jsonl").read_text().splitlines(keepends=True)

    def __init__(self, tmp_path: Path, written: int, stop_waits_s: float | None = None) -> None:
        self.root, self.chat, self.cwd = tmp_path / "store", tmp_path / "chat.jsonl", tmp_path
        self.root.mkdir()
        (self.root / "policy.toml").write_text("[guard]\ncheckpoints = false\n")
        self.chat.write_text("".join(self.LINES[:written]))
        self.rest = self.LINES[written:]
        self.reads = 0
        """Reads of the chat file by the last hook."""
        waits = TARGET.stop_waits_s if stop_waits_s is None else stop_waits_s
        self.target = dataclasses.replace(TARGET, transcript=self.read, stop_waits_s=waits)

    def read(self, path: str, offset: int) -> tuple[list, int]:
        found = read_chat(path, offset)
        self.reads += 1
        if self.landing and self.rest:
            with self.chat.open("a") as handle:  # the queue catches up
                handle.write("".join(self.rest))
            self.rest = []
        return found

    def hook(self, payload: dict, lands: bool | None = None) -> str:
        self.reads = 0
        self.landing = payload["hook_event_name"] == "Stop" if lands is None else lands
        body = {**payload, "transcript_path": str(self.chat), "cwd": str(self.cwd)}
        return handle(self.target, json.dumps(body).encode(), self.root, Budget(60))

    def events(self, kind: str) -> list[dict]:
        session = captured("Stop")[0]["session_id"]
        return [e for e in events(self.root, session) if e["type"] == kind]


def test_a_stop_reads_on_until_the_chat_file_holds_the_answer_it_names(tmp_path: Path) -> None:
    """Qwen Code queues its chat-file writes: on a loaded machine the answer that asked for
    the last call and the last answer both landed after the Stop hook read the file (CI
    rehearsal: two usage records of four). Stop is the last hook of a headless run, so they
    were never counted. The Stop now reads on until the answer it names is there: every
    answer counted once, the last text recorded once."""
    chat = LateChat(tmp_path, written=16)  # up to the fourth answer (it asks for a call)
    chat.hook(captured("SessionStart")[0])
    assert len(chat.events("usage")) == 3
    started = time.monotonic()
    assert chat.hook(captured("Stop")[0]) == ""
    assert len(chat.events("usage")) == 5 == sum(
        "usageMetadata" in line for line in LateChat.LINES)
    assert time.monotonic() - started < TARGET.stop_waits_s  # ended once the answer was there
    assert chat.reads == 2
    said = [m["text"] for m in chat.events("message") if m["role"] == "assistant"]
    assert said == ["Looking.", "All done."]


def test_a_call_reads_on_until_the_answer_that_asked_for_the_call_before_is_there(
    tmp_path: Path,
) -> None:
    """The same queue can hold the answer that asked for a call past the next call's
    PreToolUse (a limit then held two calls late, once in twelve runs at load 17-20). That
    PreToolUse knows the call before's answer is unread (the chat file names each answer's
    calls) and reads on until it lands, for at most `CALL_WAITS_S`: counted before this call
    is judged. A call's own answer unwritten is never waited for (one read)."""
    lines = LateChat.LINES
    asking = [i for i, line in enumerate(lines) if '"functionCall"' in line
              and '"type":"assistant"' in line]
    assert TARGET.call_waits_s == CALL_WAITS_S > 0  # Qwen Code waits (Claude Code does not)
    chat = LateChat(tmp_path, written=asking[1])  # the second call's answer is not written
    # a cap far above any hook's time on a busy machine: ending well before it is ending on
    # the answer's landing, not on the cap (Qwen Code's own is CALL_WAITS_S)
    chat.target = dataclasses.replace(chat.target, call_waits_s=30)
    chat.rest = lines[asking[1]:asking[2]]  # it lands during the third call's PreToolUse
    recorded = [json.loads(line)["payload"]
                for line in (DATA / "session.payloads.jsonl").read_text().splitlines()]
    calls = 0
    for payload in recorded:
        if payload["hook_event_name"] == "PreToolUse":
            calls += 1
            if calls == 2:
                chat.hook(payload)
                assert chat.reads == 1 and len(chat.events("usage")) == 1
                continue
            if calls == 3:
                break
        chat.hook(payload)
    started = time.monotonic()
    assert chat.hook(payload, lands=True) == ""
    assert time.monotonic() - started < 15  # ended once it was there, not at the cap
    assert chat.reads == 2
    session = captured("Stop")[0]["session_id"]
    kinds = [e["type"] for e in events(tmp_path / "store", session)
             if e["type"] in ("usage", "tool_call")]
    assert kinds == ["usage", "tool_call", "tool_call", "usage", "tool_call"]


def test_a_stop_whose_answer_never_comes_waits_no_longer_than_its_target_says(
    tmp_path: Path,
) -> None:
    chat = LateChat(tmp_path, written=16, stop_waits_s=0.3)
    chat.rest = []  # the last lines never land
    chat.hook(captured("SessionStart")[0])
    started = time.monotonic()
    assert chat.hook(captured("Stop")[0]) == ""
    assert 0.3 <= time.monotonic() - started < 2
    assert len(chat.events("usage")) == 3
    assert [m["text"] for m in chat.events("message") if m["role"] == "assistant"] == [
        "Looking.", "All done."]  # Stop's own word for it


def test_a_stop_without_text_neither_waits_nor_records_qwens_placeholder(
    tmp_path: Path,
) -> None:
    """An answer without text is sent as `[no response text]`, Qwen's words, not the
    model's: no message, and nothing to recognise the answer by in the chat file."""
    chat = LateChat(tmp_path, written=16)
    chat.hook(captured("SessionStart")[0])
    started = time.monotonic()
    chat.hook({**captured("Stop")[0], "last_assistant_message": NO_TEXT})
    assert time.monotonic() - started < TARGET.stop_waits_s
    assert chat.reads == 1
    assert [m["text"] for m in chat.events("message") if m["role"] == "assistant"] == [
        "Looking."]


def test_a_stop_without_a_chat_file_does_not_wait(tmp_path: Path) -> None:
    """Qwen Code with `chatRecording` off writes no chat file: a Stop waiting for its answer
    there would wait out `stop_waits_s` at every turn."""
    chat = LateChat(tmp_path, written=0)
    chat.chat.unlink()
    chat.rest = []
    chat.hook(captured("SessionStart")[0])
    started = time.monotonic()
    assert chat.hook(captured("Stop")[0]) == ""
    assert time.monotonic() - started < TARGET.stop_waits_s / 2
    assert [m["text"] for m in chat.events("message") if m["role"] == "assistant"] == [
        "All done."]


@pytest.mark.slow
def test_install_and_uninstall(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True)
    mine = '{\n  "security": {"auth": {"selectedType": "openai"}}\n}\n'
    settings.write_text(mine)
    done = run_cli("install", "qwen-code", "--user", "--timeout", "2000", HOME=str(home))
    assert done.returncode == 0, done.stderr
    data = json.loads(settings.read_text())
    assert data["security"] == {"auth": {"selectedType": "openai"}}
    ours = {event: groups[-1]["hooks"][0] for event, groups in data["hooks"].items()}
    assert set(ours) == {e for e, _ in TARGET.settings.events}
    # Qwen waits 60 s for a PreToolUse answer and 15 s for a PostToolBatch one whatever the
    # entry says, then goes on as if allowed: a long hold is bounded below that, and the hook
    # is told so (its fallback answers in time)
    assert ours["PreToolUse"]["timeout"] == 60 and ours["PostToolUse"]["timeout"] == 60
    assert re.search(r" qwen-code --timeout 60(\s|$)", ours["PreToolUse"]["command"])
    assert ours["PostToolBatch"]["timeout"] == 15
    assert re.search(r" qwen-code --timeout 15(\s|$)", ours["PostToolBatch"]["command"])
    project = run_cli("install", "qwen-code", "--project", str(tmp_path / "p"),
                      HOME=str(home))
    assert project.returncode == 0 and "trusted folder" in project.stdout
    assert (tmp_path / "p" / ".qwen" / "settings.json").exists()
    undone = run_cli("uninstall", "qwen-code", "--user", HOME=str(home))
    assert undone.returncode == 0, undone.stderr
    assert settings.read_text() == mine
