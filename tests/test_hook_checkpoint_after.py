"""The periodic checkpoint (`checkpoint_every`) off the agent's path: the resident server takes
the one the next call is due once the previous call's last hook is answered (the model is
thinking), so that call's PreToolUse does not wait for git; it still precedes the call, and a
server killed before it took it leaves it to the next PreToolUse, as without a server. Real
git work tree, real guard, the steps run as the resident server runs them (`Served`)."""

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest

from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings
from supervisor.store.paths import session_files
from tests.test_hook_platform import SESSION, Hook
from tests.test_hook_usage import Served, call, ran

AUTO = "auto: every 3 actions"


@pytest.fixture
def hook(tmp_path: Path) -> Hook:
    cwd = tmp_path / "ws"
    cwd.mkdir()
    (cwd / "a.py").write_text("x = 0\n")
    root = tmp_path / "store"
    root.mkdir()
    (root / "policy.toml").write_text("[guard]\ncheckpoint_every = 3\n")
    return Hook(root, cwd, tmp_path / "transcript.jsonl")


def _order(hook: Hook) -> list[str]:
    """The session's tool calls and its periodic checkpoints, in the log's order."""
    return [e["call_id"] if e["type"] == "tool_call" else "cp"
            for e in hook.events()
            if e["type"] == "tool_call" or (e["type"] == "checkpoint" and e["label"] == AUTO)]


def _run(hook: Hook, calls: Iterable[int], *, answered: bool = False) -> None:
    """Each call in turn, allowed and run; `answered`: its last hook answered after it (the
    model thinking), when the server takes a checkpoint that is due."""
    for n in calls:
        assert call(hook, n) is None
        ran(hook, n)
        if answered:
            assert isinstance(hook, Served)
            hook.answered()


def _in_checkpoint(hook: Hook, event: dict, name: str) -> str:
    """A file as the checkpoint `event` holds it."""
    git_dir = session_files(hook.root, SESSION).checkpoints
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{event['commit']}:{name}"],
                          capture_output=True, text=True, check=True).stdout


def test_the_server_takes_the_due_checkpoint_between_calls_not_in_the_pretooluse(
    hook: Hook,
) -> None:
    served = Served(hook)
    served("SessionStart", source="startup")
    for n in (1, 2):
        assert call(served, n) is None
        (hook.cwd / "a.py").write_text(f"x = {n}\n")  # what the call did to the work tree
        ran(served, n)
        if n == 1:
            served.answered()
    assert _order(served) == ["toolu_1", "toolu_2"]  # the batch's answer did not wait for git
    served.answered()  # call 2's last hook answered: the model is thinking
    assert _order(served) == ["toolu_1", "toolu_2", "cp"]
    (taken,) = [e for e in served.events("checkpoint") if e["label"] == AUTO]
    assert _in_checkpoint(served, taken, "a.py") == "x = 2\n"  # what call 3 starts from
    assert call(served, 3) is None
    assert _order(served) == ["toolu_1", "toolu_2", "cp", "toolu_3"]  # not taken again
    ran(served, 3)
    served.answered()
    _run(served, (4, 5, 6), answered=True)  # the cadence as inline: before calls 3 and 6
    assert _order(served) == ["toolu_1", "toolu_2", "cp", "toolu_3", "toolu_4", "toolu_5", "cp",
                              "toolu_6"]
    assert _order(served) == _inline(hook, 6)[:8]


def _inline(hook: Hook, calls: int) -> list[str]:
    """The same calls through the Python client alone (no server): the checkpoint inline."""
    other = Hook(hook.root.parent / "inline-store", hook.cwd, hook.transcript)
    other.root.mkdir()
    shutil.copy(hook.root / "policy.toml", other.root / "policy.toml")
    other("SessionStart", source="startup")
    _run(other, range(1, calls + 1))
    return _order(other)


def test_a_server_killed_before_it_took_the_checkpoint_leaves_it_to_the_next_pretooluse(
    hook: Hook,
) -> None:
    served = Served(hook)
    served("SessionStart", source="startup")
    _run(served, (1, 2))
    restarted = Served(hook)  # killed after call 2's answer: its later work never ran
    assert _order(restarted) == ["toolu_1", "toolu_2"]
    assert call(restarted, 3) is None
    assert _order(restarted) == ["toolu_1", "toolu_2", "cp", "toolu_3"]  # taken inline


def test_no_checkpoint_is_taken_ahead_when_none_is_due(
    hook: Hook,
) -> None:
    served = Served(hook)
    served("SessionStart", source="startup")
    _run(served, (1,), answered=True)  # one call since the start: none due before call 2
    assert _order(served) == ["toolu_1"]


def test_a_checkpoint_taken_ahead_and_lost_before_the_save_is_read_back_from_the_log(
    tmp_path: Path,
) -> None:
    """A state saved before the checkpoint taken ahead (its save lost) is brought up to date
    from the log: the count comes out as the live guard's, though a message and usage were
    recorded between the checkpoint and the call it was for."""
    work = tmp_path / "ws"
    work.mkdir()
    (work / "a.py").write_text("x = 0\n")
    settings = GuardSettings(checkpoint_every=3, checkpoint_at_start=False)
    live = Guard.open(tmp_path / "store", "s1", cwd=work, settings=settings)
    live.start("claude-code")
    for n in (1, 2):
        live.pre_call("Read", {"file_path": f"/w/f{n}.py"}, call_id=f"c{n}")
        live.post_call(f"c{n}", "x", tool="Read")
    state = live.files.dir / "state.json"
    before = state.read_bytes()
    assert live.checkpoint_ahead() is not None
    assert live.state.since_checkpoint == -1
    live.message("assistant", "reading the next file")
    live.usage(100, 20, 0.01, model="m")
    live.pre_call("Read", {"file_path": "/w/f3.py"}, call_id="c3")
    assert live.state.since_checkpoint == 0  # as inline: the call it was taken for
    state.write_bytes(before)  # as if the save after the checkpoint never happened
    restored = Guard.open(tmp_path / "store", "s1", cwd=work, settings=settings)
    assert restored.state.since_checkpoint == live.state.since_checkpoint
    assert restored.checkpoint_ahead() is None  # not due again
    live.close()
    restored.close()
