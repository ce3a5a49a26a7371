"""The hook platform's runtime with the Claude Code target, in-process (real guard, real files):
PostToolBatch, assistant text from the transcript, task notifications, the session's task, and
the target registry."""

import fcntl
import json
import os
from pathlib import Path

import pytest

from supervisor.hooks import targets
from supervisor.hooks.budget import Budget
from supervisor.hooks.policy import hook_settings
from supervisor.hooks.runtime import run_safely
from tests.hook_helpers import CAPTURED, events, payload

SESSION = "loop-1"
NOT_FOUND = "String to replace not found in file.\nString: foo()"
EDIT = {"file_path": "/w/parser.py", "old_string": "foo()", "new_string": "bar()",
        "replace_all": False}


class Hook:
    """Runs hook calls of one Claude Code session against a store root, in this process."""

    def __init__(self, root: Path, cwd: Path, transcript: Path) -> None:
        self.root, self.cwd, self.transcript = root, cwd, transcript
        self.complaints: list[str] = []

    def __call__(self, event: str, timeout: float = 60, **fields: object) -> dict | None:
        body = {**payload(event, session=SESSION, cwd=self.cwd, **fields),
                "transcript_path": str(self.transcript)}
        text = run_safely("claude-code", json.dumps(body).encode(), self.root,
                          Budget(timeout), self.complaints.append)
        assert self.complaints == []
        return json.loads(text) if text else None

    def said(self, *texts: str) -> None:
        """The model's turn as Claude Code writes it to the transcript: text, then a call."""
        with self.transcript.open("a") as handle:
            for text in texts:
                handle.write(json.dumps({"type": "assistant", "message": {
                    "role": "assistant", "content": [{"type": "text", "text": text}]}}) + "\n")

    def events(self, kind: str | None = None) -> list[dict]:
        found = events(self.root, SESSION)
        return [e for e in found if kind is None or e["type"] == kind]


@pytest.fixture
def hook(tmp_path: Path) -> Hook:
    cwd = tmp_path / "ws"
    cwd.mkdir()
    root = tmp_path / "store"
    root.mkdir()
    (root / "policy.toml").write_text("[guard]\ncheckpoints = false\n")
    transcript = tmp_path / "transcript.jsonl"
    return Hook(root, cwd, transcript)


def _batch(*calls: tuple[str, str, dict, object]) -> dict:
    """PostToolBatch fields for (tool_use_id, tool, input, response) calls."""
    return {"tool_calls": [{"tool_name": tool, "tool_input": args, "tool_use_id": cid,
                            "tool_response": response} for cid, tool, args, response in calls]}


def _refused(cid: str) -> tuple[str, str, dict, object]:
    """An Edit Claude Code refused before PreToolUse (`old_string` not in the file)."""
    return cid, "Edit", EDIT, f"<tool_use_error>{NOT_FOUND}</tool_use_error>"


def test_a_batch_of_calls_seen_before_is_answered_without_the_memorys_lock(hook: Hook) -> None:
    """The common batch (every call went through PreToolUse) reads the hook memory as last
    saved, without its lock: a hook of the session holding it does not hold the batch up
    (before, the batch waited for it until its deadline)."""
    read = {"tool_name": "Read", "tool_input": {"file_path": "/w/a.py"}, "tool_use_id": "t1"}
    assert hook("PreToolUse", **read) is None
    done = {**read, "tool_response": {"file": {"content": "x"}}}
    assert hook("PostToolUse", **done) is None
    logged = len(hook.events())
    lock = os.open(hook.root / "sessions" / SESSION / "hook.lock", os.O_RDWR)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert hook("PostToolBatch", timeout=2, **_batch(
            ("t1", "Read", read["tool_input"], done["tool_response"]))) is None
    finally:
        os.close(lock)
    assert len(hook.events()) == logged  # nothing to record: the call was seen
    unseen = ("t2", "Read", {"file_path": "/w/b.py"}, {"file": {"content": "y"}})
    assert hook("PostToolBatch", **_batch(unseen)) is None
    assert [e["call_id"] for e in hook.events("tool_call")] == ["t1", "t2"]

def test_calls_only_in_a_batch_are_recorded_as_failures_and_answered(hook: Hook) -> None:
    hook("SessionStart", source="startup")
    answers = []
    for i in range(5):  # the 6th escalates (held: see the next test)
        answers.append(hook("PostToolBatch", **_batch(_refused(f"toolu_{i}"))))
    calls = hook.events("tool_call")
    results = hook.events("tool_result")
    assert [c["call_id"] for c in calls] == [f"toolu_{i}" for i in range(5)]
    assert all(r["ok"] is False and r["error"] == NOT_FOUND for r in results)
    assert "<tool_use_error>" not in json.dumps(results)
    # the supervisor's text reaches the model by the 4th identical failure
    told = [i for i, a in enumerate(answers) if a is not None]
    assert told and told[0] <= 3
    blocks = [a for a in answers if a and a.get("decision") == "block"]
    assert blocks, answers
    assert blocks[0]["reason"].startswith("Agent Supervisor: ")
    assert "Edit" in blocks[0]["reason"]
    verdicts = [v["action"] for v in hook.events("verdict")]
    assert "block" in verdicts


def test_a_batch_never_records_a_call_twice(hook: Hook) -> None:
    hook("PreToolUse", tool_name="Read", tool_input={"file_path": "/w/a.py"},
         tool_use_id="toolu_r")
    hook("PostToolUse", tool_name="Read", tool_input={"file_path": "/w/a.py"},
         tool_use_id="toolu_r", tool_response={"file": {"content": "x = 1\n"}})
    batch = _batch(("toolu_r", "Read", {"file_path": "/w/a.py"}, "x = 1\n"), _refused("toolu_e"))
    told = hook("PostToolBatch", **batch)  # one failure: where the edit's text is
    assert "The edit of /w/parser.py failed" in told["hookSpecificOutput"]["additionalContext"]
    assert hook("PostToolBatch", **batch) is None  # delivered again: nothing new
    assert [c["call_id"] for c in hook.events("tool_call")] == ["toolu_r", "toolu_e"]
    assert [(r["call_id"], r["ok"]) for r in hook.events("tool_result")] == [
        ("toolu_r", True), ("toolu_e", False)]


def test_an_escalation_from_a_batch_is_held_and_answered_by_the_fallback(hook: Hook) -> None:
    (hook.root / "policy.toml").write_text(
        "[guard]\ncheckpoints = false\nescalation_deadline_s = 1\nfallback = 'skip'\n")
    hook("SessionStart", source="startup")
    answers = [hook("PostToolBatch", timeout=30, **_batch(_refused(f"toolu_{i}")))
               for i in range(7)]
    assert hook.events("escalation"), [v["action"] for v in hook.events("verdict")]
    applied = hook.events("decision_applied")
    assert applied and applied[0]["decision_id"] == "fallback"
    last = [a for a in answers if a and "decision" in a][-1]
    assert last["decision"] == "block" and last["reason"].startswith("Agent Supervisor: ")


def _consecutive(hook: Hook) -> list[float]:
    return [v["gauges"]["consecutive_tool_calls"] for v in hook.events("verdict")]


def test_assistant_text_from_the_transcript_resets_consecutive_calls(hook: Hook) -> None:
    hook("SessionStart", source="startup")
    hook("UserPromptSubmit", prompt="tidy the repo")
    for i in range(4):
        hook.said(f"Now I look at file {i}, which is the next one to tidy.")
        hook("PreToolUse", tool_name="Read", tool_input={"file_path": f"/w/f{i}.py"},
             tool_use_id=f"toolu_{i}")
    for i in range(4, 7):  # calls with no text between them
        hook("PreToolUse", tool_name="Read", tool_input={"file_path": f"/w/f{i}.py"},
             tool_use_id=f"toolu_{i}")
    assert _consecutive(hook) == [1, 1, 1, 1, 2, 3, 4]
    said = [m["text"] for m in hook.events("message") if m["role"] == "assistant"]
    assert said == [f"Now I look at file {i}, which is the next one to tidy." for i in range(4)]
    # Stop repeats the last text the transcript already gave: recorded once
    hook.said("All tidy.")
    hook("Stop", stop_hook_active=False, last_assistant_message="All tidy.")
    said = [m["text"] for m in hook.events("message") if m["role"] == "assistant"]
    assert said.count("All tidy.") == 1


def test_claude_codes_own_notices_in_the_transcript_are_not_the_models_text(hook: Hook) -> None:
    """A usage-limit notice is written as an assistant line of model `<synthetic>`: three of
    them (as in a session of batch 8) are not the model repeating itself, say nothing and
    spend nothing."""
    text = "You're out of extra usage · resets 6:30pm (Asia/Calcutta)"
    notice = {"type": "assistant", "isApiErrorMessage": True, "error": "rate_limit",
              "message": {"id": "n1", "model": "<synthetic>", "role": "assistant",
                          "type": "message", "usage": {"input_tokens": 0, "output_tokens": 0},
                          "content": [{"type": "text", "text": text}]}}
    hook("SessionStart", source="startup")
    hook("UserPromptSubmit", prompt="tidy the repo")
    for i in range(3):
        with hook.transcript.open("a") as handle:
            handle.write(json.dumps({**notice, "uuid": f"n{i}"}) + "\n")
        hook("PreToolUse", tool_name="Read", tool_input={"file_path": f"/w/f{i}.py"},
             tool_use_id=f"toolu_{i}")
    assert [m for m in hook.events("message") if m["role"] == "assistant"] == []
    assert hook.events("usage") == []
    assert _consecutive(hook) == [1, 2, 3]


def test_the_transcript_is_read_incrementally_and_tolerantly(hook: Hook) -> None:
    hook("SessionStart", source="startup")
    with hook.transcript.open("a") as handle:
        handle.write('{"type": "user", "message": {"role": "user", "content": "hi"}}\n')
        handle.write("not json at all\n")
        handle.write('{"type": "assistant", "message": {"content": [{"type": "thinking", '
                     '"thinking": "hmm"}, {"type": "tool_use", "id": "t", "name": "Read"}]}}\n')
        handle.write('{"type": "assistant", "message": {"content": [{"type": "text", '
                     '"text": "half a line')  # not yet complete: read once it is
    hook("PreToolUse", tool_name="Read", tool_input={"file_path": "/w/a"}, tool_use_id="t1")
    assert [m for m in hook.events("message") if m["role"] == "assistant"] == []
    with hook.transcript.open("a") as handle:
        handle.write(' done."}]}}\n')
    hook("PreToolUse", tool_name="Read", tool_input={"file_path": "/w/b"}, tool_use_id="t2")
    said = [m["text"] for m in hook.events("message") if m["role"] == "assistant"]
    assert said == ["half a line done."]
    assert _consecutive(hook) == [1, 1]


def test_a_resumed_session_does_not_replay_old_transcript_text(hook: Hook) -> None:
    hook.said("Text from an earlier run of this conversation.")
    hook("SessionStart", source="resume")
    hook("PreToolUse", tool_name="Read", tool_input={"file_path": "/w/a"}, tool_use_id="t1")
    assert [m for m in hook.events("message") if m["role"] == "assistant"] == []


def test_a_task_notification_is_no_new_cycle(hook: Hook) -> None:
    hook("SessionStart", source="startup")
    hook("UserPromptSubmit", prompt="fix the parser")
    for i in range(3):
        hook("PreToolUse", tool_name="Read", tool_input={"file_path": f"/w/f{i}.py"},
             tool_use_id=f"toolu_{i}")
    note = "<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>"
    hook("UserPromptSubmit", prompt=note)
    hook("PreToolUse", tool_name="Read", tool_input={"file_path": "/w/g.py"}, tool_use_id="g")
    cycle = [v["gauges"]["iterations_per_cycle"] for v in hook.events("verdict")]
    assert cycle == [1, 2, 3, 4]  # not reset by the notification
    messages = [(m["role"], m["text"][:19]) for m in hook.events("message")]
    assert ("system", "<task-notification>") in messages
    assert [t["title"] for t in hook.events("task_start")] == ["fix the parser"]
    hook("UserPromptSubmit", prompt="now the lexer")  # a person: a new cycle, same task
    hook("PreToolUse", tool_name="Read", tool_input={"file_path": "/w/h.py"}, tool_use_id="h")
    assert hook.events("verdict")[-1]["gauges"]["iterations_per_cycle"] == 1
    assert len(hook.events("task_start")) == 1


def test_every_registered_target_loads_and_is_complete() -> None:
    for name in targets.names():
        target = targets.load(name)
        assert target.name == name and target.settings.target == name
        assert target.label and callable(target.read)
        for method in ("pre_tool", "context", "stop", "batch"):
            assert callable(getattr(target.answers, method))
    with pytest.raises(KeyError):
        targets.load("no-such-agent")


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_a_target_that_batches_says_so_and_only_it_keeps_the_calls_seen(
        tmp_path: Path, name: str) -> None:
    """`Target.batches`: a batch records only the calls PreToolUse did not see, so a target
    whose payloads make batch steps must keep the seen calls; the others keep none (the hook
    memory writes that list at every call)."""
    from supervisor.hooks import memory as hook_memory
    from supervisor.hooks.step import read_payload
    from supervisor.store.paths import session_files

    target = targets.load(name)
    data = CAPTURED[name]
    bodies = [json.dumps(json.loads(line)["payload"]).encode()
              for line in data.read_text().splitlines() if line.strip()]
    kinds = {target.read(read_payload(body)).kind for body in bodies}
    assert target.batches == ("batch" in kinds)
    assert "call" in kinds
    root = tmp_path / "store"
    complaints: list[str] = []
    for body in bodies:
        run_safely(name, body, root, Budget(60), complaints.append)
    assert complaints == []
    seen = []
    for directory in (root / "sessions").iterdir():
        with hook_memory.remembered(session_files(root, directory.name)) as memory:
            seen += memory.seen
    assert bool(seen) == target.batches


def test_the_budget_owns_the_remaining_time() -> None:
    budget = Budget(60, started=0.0)  # started long ago: nothing is left
    assert budget.remaining() == 0 and budget.hold_s() == 1.0 and budget.wait_s() == 0.5
    fresh = Budget(60)
    assert 59 < fresh.remaining() <= 60
    assert 49 < fresh.hold_s() <= 50 and 54 < fresh.wait_s() <= 55


def test_a_hold_is_fitted_to_the_budget_unless_no_operator_could_answer_within_it() -> None:
    """The escalation's deadline is cut to a budget long enough for a person (the fallback
    answers before the agent gives up); an agent that gives a hook a few seconds (Cline's
    plugins: 3 s) keeps the policy's deadline, so the escalation waits across calls for the
    operator instead of its fallback deciding it within a second."""
    policy = {"escalation_deadline_s": 600, "pause_deadline_s": 300}
    roomy = hook_settings(policy, Budget(90))
    assert 79 < roomy.escalation_deadline_s <= 80 and 79 < roomy.pause_deadline_s <= 80
    short = hook_settings(policy, Budget(2.5))
    assert short.escalation_deadline_s == 600 and short.pause_deadline_s == 300
    assert hook_settings({"escalation_deadline_s": 0}, Budget(2.5)).escalation_deadline_s == 0
    assert hook_settings({"escalation_deadline_s": 1}, Budget(2.5)).escalation_deadline_s == 1


def _issued(hook: Hook, message_id: str, *call_ids: str) -> None:
    """Lines of one model answer as Claude Code writes them: a line per tool_use block, each
    with the answer's `message.id`."""
    with hook.transcript.open("a") as handle:
        for call_id in call_ids:
            handle.write(json.dumps({"type": "assistant", "message": {
                "id": message_id, "role": "assistant", "content": [
                    {"type": "tool_use", "id": call_id, "name": "Bash", "input": {}}]}}) + "\n")


def _pr_view(hook: Hook, i: int, result: bool = False) -> dict | None:
    """The PreToolUse of `gh pr view` of pull request 100 + i (with `result`: its PostToolUse)."""
    event = "PostToolUse" if result else "PreToolUse"
    found = {"tool_response": {"stdout": '{"state": "OPEN"}', "stderr": "",
                               "interrupted": False}} if result else {}
    return hook(event, tool_name="Bash", tool_use_id=f"toolu_{i}",
                tool_input={"command": f"gh pr view {100 + i} --json state"}, **found)


def test_parallel_calls_the_transcript_already_shows_are_one_batch(
    hook: Hook, tmp_path: Path
) -> None:
    """Claude Code runs the calls of one answer together and writes each to its transcript as
    it streams in: a call whose line is there when its hook runs gets the answer's id as its
    batch, one whose line comes later gets none (never waited for). Five `gh pr view` of five
    pull requests sent together are then not five alike attempts."""
    hook("SessionStart", source="startup")
    hook("UserPromptSubmit", prompt="review the open pull requests")
    answers = [_pr_view(hook, 0)]  # its line is not written yet
    _issued(hook, "msg_A", *(f"toolu_{i}" for i in range(5)))
    answers += [_pr_view(hook, i) for i in range(1, 5)]
    answers += [_pr_view(hook, i, result=True) for i in range(5)]
    assert [c.get("batch") for c in hook.events("tool_call")] == [None] + ["msg_A"] * 4
    assert answers == [None] * 10 and hook.events("detection") == []

    # the same five, one answer each: five alike calls with one outcome draw a note
    alone = Hook(hook.root.parent / "store-2", hook.cwd, tmp_path / "transcript-2.jsonl")
    alone.root.mkdir()
    (alone.root / "policy.toml").write_text("[guard]\ncheckpoints = false\n")
    alone("SessionStart", source="startup")
    alone("UserPromptSubmit", prompt="review the open pull requests")
    for i in range(5):
        _issued(alone, f"msg_{i}", f"toolu_{i}")
        _pr_view(alone, i)
        _pr_view(alone, i, result=True)
    assert [c.get("batch") for c in alone.events("tool_call")] == [f"msg_{i}" for i in range(5)]
    assert [d["detector"] for d in alone.events("detection")] == ["similar_calls"]
