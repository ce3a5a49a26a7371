"""Keys from `$SUPERVISOR_CONFIG/config.toml` (`[keys]`, `[keys.commands]`,
`[keys.navigation]`): checked before anything changes, refused with one clear line per problem,
and, in a real terminal, a remapped approve is the prompt's key, shown and confirmed like `a`,
and remapped navigation keys open, leave and help."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tui_support import escalation, start, write_events

from supervisor.protocol.decisions import KINDS
from supervisor.tui import keys, nav_keys
from supervisor.tui.keys import configure, main_screens
from tests.terminal import Terminal, env, terminals

__all__ = ["env", "terminals"]


@pytest.fixture
def registry() -> Iterator[None]:
    """The registry's keys as they were (a test that applies keys puts them back)."""
    kept = {name: (kind.key, kind.command_key) for name, kind in KINDS.items()}
    yield
    for name, (key, command_key) in kept.items():
        KINDS[name].key, KINDS[name].command_key = key, command_key  # type: ignore[misc]
    nav_keys.reset()


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


def test_wrong_navigation_keys_are_refused_and_change_nothing(tmp_path: Path,
                                                               registry: None) -> None:
    for text, said in (
        ('[keys.navigation]\nopn = "o"\n', "[keys.navigation] has no action 'opn' (one of quit,"),
        ('[keys.navigation]\nopen = "oo"\n', "open = 'oo' is not a key"),
        ('[keys.navigation]\nopen = ""\n', "open = '' is not a key"),
        ('[keys.navigation]\nopen = 3\n', "open = 3 is not a key"),
        ('[keys.navigation]\nhelp = "ctrl+p"\n', "ctrl+p opens the command palette"),
        ('[keys]\nnavigation = 3\n', "[keys.navigation] must be a table"),
    ):
        problems = configure(config(tmp_path, text))
        assert len(problems) == 1 and said in problems[0], (text, problems)
        assert nav_keys.key("open") == "enter" and nav_keys.key("help") == "question_mark"
    # one wrong navigation line: the decision keys beside it are not taken either
    assert configure(config(tmp_path, '[keys]\napprove = "o"\n[keys.navigation]\n'
                                      'open = "nope"\nhelp = "f1"\n'))
    assert KINDS["approve"].key == "a" and nav_keys.key("help") == "question_mark"


def test_navigation_keys_apply(tmp_path: Path, registry: None) -> None:
    assert nav_keys.app_clashes(main_screens()) == []  # the defaults
    assert configure(config(tmp_path, '[keys.navigation]\nopen = "o"\nhelp = "F1"\n'
                                      'filter = "|"\nback = "b"\n')) == []
    assert [nav_keys.key(n) for n in ("open", "help", "filter", "back", "quit")] == \
        ["o", "f1", "vertical_line", "b", "q"]


def test_changed_keys_are_checked_against_the_screens_opened_later(
        tmp_path: Path, registry: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the built-in keys (which the test above checks against every main screen) the
    start does not import the later screens; a changed key is checked against them all."""
    monkeypatch.setenv("SUPERVISOR_CONFIG", str(tmp_path))
    assert keys.as_built()
    assert keys.load_app().__name__ == "SupervisorApp"
    config(tmp_path, '[keys.navigation]\nhelp = "w"\n')  # the session screen's side bar
    with pytest.raises(ValueError, match="the session screen binds 'w' to 'toggle_side'"):
        keys.load_app()
    nav_keys.reset()
    config(tmp_path, '[keys.commands]\npause = "Z"\n')
    assert keys.load_app().__name__ == "SupervisorApp" and not keys.as_built()


@pytest.mark.slow
def test_a_navigation_key_taken_twice_stops_the_dashboard(root: Path, tmp_path: Path) -> None:
    """On one screen (the screen's own check as it binds), and an app-wide key that a main
    screen uses (it would be shadowed there): the dashboard does not start, and says which."""
    folder = tmp_path / "config"
    folder.mkdir(exist_ok=True)
    for text, said in (
        ('[keys.navigation]\nsort = "n"\n',
         "config.toml: [keys]: the sessions screen: the key 'n' is bound to both 'cycle_sort' "
         "and \"run('new')\": choose another key"),
        ('[keys.navigation]\nhelp = "w"\n',
         "config.toml: [keys.navigation] help = 'w': the session screen binds 'w' to "
         "'toggle_side': choose another key"),
    ):
        config(folder, text)
        done = subprocess.run([sys.executable, "-m", "supervisor", "dashboard", "--root",
                               str(root)], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "SUPERVISOR_CONFIG": str(folder)})
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().endswith(said), done.stderr


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


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_remapped_navigation_keys_in_a_real_terminal(root: Path, tmp_path: Path, env,
                                                     terminals) -> None:
    """`open = "o"`, `back = "b"`, `help = "f1"`: those keys open a session, go back and show
    the help; the footer and the help name them instead of the defaults."""
    (Path(env["SUPERVISOR_CONFIG"])).mkdir(parents=True, exist_ok=True)
    config(Path(env["SUPERVISOR_CONFIG"]),
           '[keys.navigation]\nopen = "o"\nback = "b"\nhelp = "f1"\n')
    write_events(root, "s1", [start(pid=os.getpid(), host=os.uname().nodename)])
    term = Terminal("navkeys", [sys.executable, "-m", "supervisor", "dashboard", "--root",
                                str(root)], env, tmp_path)
    terminals.append(term)
    term.wait_for(lambda s: "Needs you: 0" in s and "s1" in s, "the session's row")
    shown = term.press_until("o", lambda s: "Needs you" not in s and " b Back " in s,
                             "the session, its footer naming b")
    assert "esc Back" not in shown
    term.press_until("b", lambda s: "Needs you: 0" in s, "the sessions screen")
    shown = term.press_until("F1", lambda s: "Everywhere" in s, "the help")
    assert re.search(r"\bf1\s+Help\b", shown) and re.search(r"\bo\s+Open\b", shown), shown
