"""Extreme values give clear one-line messages, never tracebacks, and a policy typo is an error
at every entry point (issue 18, "Smaller"): `stats` over a 400-digit usage number and a malformed
recorded limit, a pid too large for `os.kill`, the hook with `[detectors.exact_repeat] nuge = 2`."""

import json
import os
from pathlib import Path

import pytest

from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings
from supervisor.store.liveness import pid_alive
from tests.conftest import run_cli
from tests.hook_helpers import payload, run_hook

TYPO = "[detectors.exact_repeat]\nnuge = 2\n"


def _session(root: Path, session: str, lines: list[dict]) -> None:
    directory = root / "sessions" / session
    directory.mkdir(parents=True, mode=0o700)
    os.chmod(root, 0o700)
    os.chmod(root / "sessions", 0o700)
    text = "".join(json.dumps({"v": 1, "seq": i + 1, "ts": 1.0 + i, **line}) + "\n"
                   for i, line in enumerate(lines))
    (directory / "events.jsonl").write_text(text.replace('"HUGE"', "1" + "0" * 400))


@pytest.mark.slow
def test_stats_over_extreme_values_says_what_it_could_not_use(tmp_path: Path) -> None:
    root = tmp_path / "store"
    _session(root, "x1", [
        {"type": "session_start", "agent": "a", "task": None, "cwd": None, "pid": None,
         "policy": {"limits": {"tokens": {"limit": "abc", "action": "pause"}}}},
        {"type": "usage", "input_tokens": "HUGE", "output_tokens": 1},
        {"type": "tool_call", "call_id": "c1", "tool": "Bash", "args": {}},
    ])
    done = run_cli("stats", "x1", "--root", str(root))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "recorded policy: 'limits.tokens.limit'" in done.stdout
    assert "the limits shown are the default profile's" in done.stdout
    data = json.loads(run_cli("stats", "x1", "--root", str(root), "--json").stdout)
    assert "limits.tokens.limit" in data["policy_problem"]
    assert next(g for g in data["limits"] if g["name"] == "tokens")["value"] == 0


@pytest.mark.slow
def test_stats_replays_under_the_policy_a_real_session_recorded(tmp_path: Path) -> None:
    """The validator takes a real session's recorded (complete) policy: no false problem."""
    from supervisor.engine import Policy

    root = tmp_path / "store"
    policy = Policy.from_dict({"limits": {"tokens": {"limit": 1234, "action": "stop"}}})
    with Guard.open(root, "r1", policy=policy, settings=GuardSettings(checkpoints=False)) as g:
        g.start("sdk", "t")
        g.pre_call("Bash", {"command": "ls"})
    (root / "sessions" / "r1" / "state.json").unlink()  # make stats replay the log
    data = json.loads(run_cli("stats", "r1", "--root", str(root), "--json").stdout)
    assert data["source"] == "replay" and data["policy_problem"] is None
    assert next(g for g in data["limits"] if g["name"] == "tokens")["limit"] == 1234


def test_a_pid_too_large_for_os_kill_is_a_dead_process() -> None:
    assert pid_alive(2**70) is False  # was OverflowError
    assert pid_alive(os.getpid()) is True


@pytest.mark.slow
def test_the_hook_refuses_a_policy_with_a_mistyped_key_like_policy_show(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir(mode=0o700)
    (root / "policy.toml").write_text(TYPO)
    shown = run_cli("policy", "show", "--policy", str(root / "policy.toml"))
    assert shown.returncode == 2 and "nuge" in shown.stderr
    done = run_hook(payload("PreToolUse", "typo-1", tool_name="Bash",
                            tool_input={"command": "ls"}, tool_use_id="toolu_1"), root)
    assert done.returncode == 0  # the agent is never blocked for the supervisor's own trouble
    lines = (root / "sessions" / "typo-1" / "events.jsonl").read_text().splitlines()
    errors = [json.loads(x)["message"] for x in lines if '"supervisor_error"' in x]
    # said, with the key, in the session: the default profile runs instead (was silently used)
    assert any("nuge" in e and "using the default profile" in e for e in errors), errors
    start = json.loads(lines[0])
    assert start["policy"]["detectors"]["exact_repeat"].get("nuge") is None
