"""The SDK's misuse is an error at the call that made it, naming what is wrong, instead of a
session that silently goes wrong: a result for a call never asked (or recorded twice), arguments
or usage or a role the event log's own reader refuses as bad lines, a closed session, a second
`Session` on a session open in this process, a session that has ended opened again (every call
would be `stop`), a working directory that is not there. And what an LLM API's loop has to
report is taken as the API gives it: tokens and the model (priced here), a turn's calls as one
batch."""

import asyncio
import shutil
from pathlib import Path

import pytest

from supervisor.guard import Guard, GuardSettings, Session, ToolRefused, Verdict
from supervisor.protocol.bad_line import BadLine
from supervisor.protocol.codec import parse_line
from supervisor.runenv import RUN_SESSION_ENV
from tests.guard_helpers import events, of_type

OFF = GuardSettings(checkpoints=False)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    w = tmp_path / "work"
    w.mkdir()
    return w


def open_session(root: Path, work: Path, sid: str = "s1", **kw: object) -> Session:
    return Session("agent", task="the task", cwd=work, root=root, session_id=sid, settings=OFF,
                   heartbeat_s=None, **kw)


def bad_lines(root: Path, sid: str) -> list[BadLine]:
    raw = (root / "sessions" / sid / "events.jsonl").read_bytes().splitlines()
    return [p for p in (parse_line(line) for line in raw) if isinstance(p, BadLine)]


def test_a_result_needs_a_call_asked_and_is_recorded_once(root: Path, work: Path) -> None:
    with open_session(root, work) as s:
        with pytest.raises(ValueError, match="no call 'c9' of this session awaits its result"):
            s.after_call("c9", "out")
        with pytest.raises(ValueError, match="needs the verdict of before_call"):
            s.after_call(Verdict("allow"), "out")
        v = s.before_call("bash", {"command": "ls"})
        s.after_call(v, "a")
        with pytest.raises(ValueError, match="its result was recorded already"):
            s.after_call(v, "b")
        refused = s.before_call("bash", {"command": "ls"})
        s.after_call(refused.call_id or "", "ran anyway")  # by its id: recorded
    results = of_type(events(root, "s1"), "tool_result")
    assert [(r["call_id"], r["output"]) for r in results] == [("c1", "a"), ("c2", "ran anyway")]


def test_what_the_log_would_refuse_is_refused_at_the_call(root: Path, work: Path) -> None:
    with open_session(root, work) as s:
        with pytest.raises(TypeError, match="args must be a dict"):
            s.before_call("bash", "ls")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="tool must be the tool's name"):
            s.before_call("", {})
        with pytest.raises(ValueError, match="input_tokens must be a count"):
            s.usage(-5, 10)
        with pytest.raises(ValueError, match="output_tokens must be a count"):
            s.usage(5, 1.5)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="cost_usd must be dollars"):
            s.usage(5, 10, cost_usd=float("nan"))
        with pytest.raises(ValueError, match="role must be one of assistant, user, system"):
            s.message("robot", "hi")
        s.usage(5, 10, cost_usd=0)
        s.message("assistant", "hi")
    assert bad_lines(root, "s1") == []
    assert not of_type(events(root, "s1"), "tool_call")


def test_bytes_are_recorded_as_the_text_the_tool_printed(root: Path, work: Path) -> None:
    with open_session(root, work) as s:
        s.after_call(s.before_call("bash", {"command": "cat f"}), "é\n".encode() + b"\xff")
    (result,) = of_type(events(root, "s1"), "tool_result")
    assert result["output"] == "é\n\ufffd"


def test_a_closed_session_says_so(root: Path, work: Path) -> None:
    s = open_session(root, work)
    v = s.before_call("bash", {"command": "ls"})
    s.close()
    for call in (lambda: s.before_call("bash", {}), lambda: s.after_call(v, ""),
                 lambda: s.usage(1, 1), lambda: s.message("user", "hi")):
        with pytest.raises(RuntimeError, match=r"session 's1' is closed \(completed\)"):
            call()


def test_one_session_open_once_per_process(root: Path, work: Path) -> None:
    with open_session(root, work) as first:
        with pytest.raises(RuntimeError, match="'s1' is already open in this process"):
            open_session(root, work)
        first.before_call("bash", {"command": "ls"})
        with open_session(root, work, sid="s2"):  # another session is fine
            pass
    assert [e["status"] for e in of_type(events(root, "s1"), "session_end")] == ["completed"]
    with open_session(root, work, sid="s3"):  # closed: the id may be opened again elsewhere
        pass


def test_an_ended_session_is_not_opened_again(root: Path, work: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with open_session(root, work):
        pass
    with pytest.raises(RuntimeError, match=r"session 's1' has ended \(completed\); a new "
                                           "session needs another session_id$"):
        open_session(root, work)
    monkeypatch.setenv(RUN_SESSION_ENV, "s1")
    with pytest.raises(RuntimeError, match="one `supervisor run` is one session"):
        Session("agent", cwd=work, root=root, settings=OFF, heartbeat_s=None)
    with pytest.raises(RuntimeError, match="has ended"):  # not marked open by the refusals
        open_session(root, work)


def test_a_resumed_session_gets_its_task(root: Path, work: Path) -> None:
    """A session started before (a crashed agent's, or `supervisor run`'s own when the agent
    starts late) keeps going; the task the agent names is recorded rather than dropped."""
    crashed = Guard.open(root, "s1", cwd=work, settings=OFF)
    crashed.start("agent", None, pid=None)
    crashed.close()  # its process died without ending the session
    with Session("agent", task="resumed task", cwd=work, root=root, session_id="s1",
                 settings=OFF, heartbeat_s=None) as s:
        s.before_call("bash", {"command": "ls"})
    evs = events(root, "s1")
    assert len(of_type(evs, "session_start")) == 1
    assert [t["title"] for t in of_type(evs, "task_start")] == ["resumed task"]


def test_a_missing_working_directory_is_an_error(root: Path, work: Path) -> None:
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        Session("agent", cwd=work / "nope", root=root, session_id="s1", heartbeat_s=None)
    assert not (root / "sessions" / "s1").exists()


def test_an_end_that_fails_does_not_hide_what_ended_the_block(root: Path, work: Path) -> None:
    """The store broken (or full) under a session whose block raised: the agent's code still gets
    its own exception, which says the session could not be ended, not the store's error."""
    s = open_session(root, work)
    with pytest.raises(LookupError, match="the model's answer") as raised, s:
        s.before_call("bash", {"command": "ls"})
        shutil.rmtree(root / "sessions" / "s1")
        (root / "sessions" / "s1").write_text("not a directory any more")
        raise LookupError("the model's answer had no tool call")
    (note,) = raised.value.__notes__
    assert note.startswith("and the session 's1' could not be ended as 'failed': ")
    with pytest.raises(RuntimeError, match="is closed"):  # closed all the same
        s.before_call("bash", {})
    with open_session(root, work, sid="s2"):  # nothing of it is left open in the process
        pass


def test_a_verdict_of_another_session_is_refused(root: Path, work: Path) -> None:
    """Call ids are numbered per session (c1, c2, ...): two sessions of one loop have a `c1`
    each, and a verdict handed to the wrong one would record its result there."""
    with open_session(root, work, sid="a") as a, open_session(root, work, sid="b") as b:
        va = a.before_call("bash", {"command": "ls"})
        vb = b.before_call("bash", {"command": "ls"})
        assert va.call_id == vb.call_id == "c1"
        with pytest.raises(ValueError, match="is not the one this session \\('b'\\) gave"):
            b.after_call(va, "a's output")
        b.after_call(vb, "b's output")
        a.after_call(va, "a's output")
    for sid in ("a", "b"):
        (result,) = of_type(events(root, sid), "tool_result")
        assert result["output"] == f"{sid}'s output"


def test_usage_with_a_model_is_priced_and_counts_in_the_budgets(root: Path, work: Path) -> None:
    """An SDK loop reports what the provider's API gives it (tokens, the model); without a
    price of its own the cost was unknown, and a daily budget in dollars never held it."""
    root.mkdir()
    (root / "policy.toml").write_text("[budgets.store]\ncost_usd_per_day = 5.0\n")
    with open_session(root, work, wait_timeout=0.0) as s:
        s.usage(0, 1_000_000, model="gpt-5-codex", cache_read_tokens=0, cache_write_tokens=0)
        s.usage(10, 10, model="no-such-model")
        held = s.before_call("bash", {"command": "ls"})
    usage = of_type(events(root, "s1"), "usage")
    assert [(u["cost_usd"], u.get("model")) for u in usage] == [
        (10.0, "gpt-5-codex"), (None, "no-such-model")]
    assert usage[0]["cache_read_tokens"] == 0
    assert held.action == "block"
    (escalation,) = of_type(events(root, "s1"), "escalation")
    assert escalation["kind"] == "budget"


def test_calls_of_one_model_turn_share_a_batch(root: Path, work: Path) -> None:
    with open_session(root, work) as s:
        for path in ("a.py", "b.py"):
            s.after_call(s.before_call("read", {"path": path}, batch="turn-1"), "")
    assert [c.get("batch") for c in of_type(events(root, "s1"), "tool_call")] == [
        "turn-1", "turn-1"]


def test_an_async_tool_is_guarded_around_what_it_awaits(root: Path, work: Path) -> None:
    """`@s.tool` on an `async def` (the tools of async agent frameworks): its result is what
    the coroutine returns, recorded when it has run (it was the coroutine's repr, recorded
    before the tool ran), and its exceptions are the tool's failures."""

    async def loop(s: Session) -> list[str]:
        @s.tool
        async def fetch(url: str) -> str:
            await asyncio.sleep(0)
            if "bad" in url:
                raise ConnectionError("refused")
            return f"page of {url}"

        seen = [await fetch("https://example.org")]
        for _ in range(10):  # the same failing call again and again, until it is refused
            try:
                await fetch("https://bad.example")
            except ConnectionError as exc:
                seen.append(str(exc))
            except ToolRefused as refused:
                seen.append("refused: " + str(refused))
                break
        return seen

    with open_session(root, work) as s:
        seen = asyncio.run(loop(s))
    assert seen[0] == "page of https://example.org"
    assert seen[1] == "refused" and seen[-1].startswith("refused: ")
    results = of_type(events(root, "s1"), "tool_result")
    assert results[0]["output"] == "page of https://example.org"
    assert results[1]["ok"] is False and results[1]["error"] == "ConnectionError: refused"
