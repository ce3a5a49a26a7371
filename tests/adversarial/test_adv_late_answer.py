"""The losing operator of a simultaneous answer learns it was late (issue 41, held but mend).

Two operators answer one escalation at once: both pass the checks, both lines are written, the
agent applies the first and ignores the second. The second operator was told "written; not
picked up yet" and never learned it lost. Now, once written, the answer is compared with the
control file's order and the loser is told at once (exit 1). The real guard's files."""

import argparse
from pathlib import Path

import pytest

from supervisor.cli.followup import send_and_follow
from supervisor.operator.send import send_decision
from supervisor.store.local import LocalStore
from tests.adversarial.sessions import held_guard


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
