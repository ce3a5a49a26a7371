"""The losing operator of a simultaneous answer learns it was late (issue 41, held but mend).

Two operators answer one escalation at once: both pass the checks, both lines are written, the
agent applies the first and ignores the second. The second operator was told "written; not
picked up yet" and never learned it lost. Now, once written, the answer is compared with the
control file's order and the loser is told at once (exit 1); a command that looks only after
the agent applied the first answer is told who gave it (exit 2). The real guard's files."""

import argparse
from pathlib import Path

import pytest

from supervisor.cli.followup import send_and_follow
from supervisor.operator.send import send_decision
from supervisor.store.local import LocalStore
from tests.adversarial.sessions import held_guard
from tests.conftest import run_cli


def test_the_second_of_two_simultaneous_answers_is_told_it_lost(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "store"
    guard, esc = held_guard(root, tmp_path)
    # alice's answer lands between ana's checks and ana's write
    send_decision(root, "s1", "skip", escalation_id=esc, operator="alice")
    store = LocalStore(root)
    code = send_and_follow(store, "s1", "approve", argparse.Namespace(operator="ana", wait=5),
                           escalation_id=esc)
    out = capsys.readouterr().out
    assert code == 1
    assert "too late: alice answered it first (skip)" in out
    assert "not picked up yet" not in out
    guard.poll()
    guard.close()


def test_the_first_answer_is_not_told_it_lost(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "store"
    guard, esc = held_guard(root, tmp_path)
    guard.close()
    code = send_and_follow(LocalStore(root), "s1", "approve",
                           argparse.Namespace(operator="ana", wait=0), escalation_id=esc)
    assert code == 0 and "too late" not in capsys.readouterr().out


def test_an_answer_that_looks_after_the_other_was_applied_is_told_who_answered(
        tmp_path: Path) -> None:
    """Two operators at once, but the agent read alice's answer before ana's command looked:
    nothing is pending any more, and ana is told by whom it was answered, not only that
    nothing is pending (the real command line)."""
    root = tmp_path / "store"
    guard, esc = held_guard(root, tmp_path)
    send_decision(root, "s1", "skip", escalation_id=esc, operator="alice")
    guard.poll()  # the agent applies alice's answer
    out = run_cli("answer", "s1", "--root", str(root), "--approve", "--operator", "ana")
    assert out.returncode == 2
    assert (f"session 's1' has no pending escalation (the last, {esc}: already answered by "
            "alice: skip)") in out.stderr
    assert (root / "sessions" / "s1" / "control.jsonl").read_bytes().count(b"\n") == 1
    guard.close()
