"""Decision keys from `$SUPERVISOR_CONFIG/config.toml` (`[keys]`, `[keys.commands]`): checked
before anything changes, refused with one clear line per problem, and, in a real terminal, a
remapped approve is the prompt's key, shown and confirmed like `a`."""

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_tui_e2e import Terminal, env, terminals
from tui_support import escalation, start, write_events

from supervisor.protocol.decisions import KINDS
from supervisor.tui.keys import configure

__all__ = ["env", "terminals"]


@pytest.fixture
def registry() -> Iterator[None]:
    """The registry's keys as they were (a test that applies keys puts them back)."""
    kept = {name: (kind.key, kind.command_key) for name, kind in KINDS.items()}
    yield
    for name, (key, command_key) in kept.items():
        KINDS[name].key, KINDS[name].command_key = key, command_key  # type: ignore[misc]


def config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_wrong_keys_are_refused_and_change_nothing(tmp_path: Path, registry: None) -> None:
    for text, said in (
        ('[keys]\naprove = "o"\n', "[keys] has no action 'aprove' (one of approve,"),
        ('[keys.commands]\napprove = "Z"\n', "[keys.commands] has no action 'approve'"),
        ('[keys]\napprove = "s"\n', "decision kinds 'approve' and 'skip' share the key 's'"),
        ('[keys]\napprove = "ctrl+o"\n', "its key must be one letter, not 'ctrl+o'"),
        ('[keys.commands]\npause = "X"\n', "share the command_key 'X'"),
        ('keys = 3\n', "[keys] must be a table"),
        ('[keys\n', "config.toml"),
    ):
        problems = configure(config(tmp_path, text))
        assert len(problems) == 1 and said in problems[0], (text, problems)
        assert KINDS["approve"].key == "a" and KINDS["pause"].command_key == "P"
    assert configure(tmp_path / "none.toml") == []


def test_keys_apply_to_the_registry(tmp_path: Path, registry: None) -> None:
    assert configure(config(tmp_path, '[keys]\napprove = "o"\n[keys.commands]\n'
                                      'pause = "Z"\n')) == []
    assert KINDS["approve"].key == "o" and KINDS["pause"].command_key == "Z"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_remapped_approve_is_the_prompts_key_in_a_real_terminal(
        root: Path, tmp_path: Path, env, terminals) -> None:
    import os

    (Path(env["SUPERVISOR_CONFIG"])).mkdir(parents=True, exist_ok=True)
    config(Path(env["SUPERVISOR_CONFIG"]), '[keys]\napprove = "o"\n')
    write_events(root, "s1", [start(pid=os.getpid(), host=os.uname().nodename),
                              escalation(deadline_ts=None)])
    term = Terminal("keys", [sys.executable, "-m", "supervisor", "dashboard", "--root",
                             str(root)], env, tmp_path)
    terminals.append(term)
    term.wait_for(lambda s: "Needs you: 1" in s, "the escalation in the queue")
    screen = term.press_until("e", lambda s: "Escalation esc-1" in s, "the prompt")
    assert " o  approve" in screen and " a  approve" not in screen
    term.keys("a")
    time.sleep(1.5)
    assert "y: yes" not in term.screen()  # `a` is no key here any more
    term.press_until("o", lambda s: "y: yes" in s, "the question")
    term.press_until("y", lambda s: "waiting for the agent" in s or "applied" in s,
                     "the answer sent")
    lines = (root / "sessions" / "s1" / "control.jsonl").read_text().splitlines()
    assert [json.loads(line)["action"] for line in lines] == ["approve"]

    # a key the prompt already uses: the dashboard does not start, and says why
    config(Path(env["SUPERVISOR_CONFIG"]), '[keys]\napprove = "n"\n')
    done = subprocess.run([sys.executable, "-m", "supervisor", "dashboard", "--root",
                           str(root)], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "config.toml: [keys]: the escalation prompt: the key 'n' is bound to both "
        "\"decide('approve')\" and 'next_pending': choose another key")
