"""`supervisor stats` on a terminal: its sentences (what the loops cost, the silence not
counted, where the figures come from) are broken between words at the terminal's width, the
table as it was; through a pipe every line is whole. A sentence the terminal wrapped by
itself broke words at column 80 and read as several."""

from pathlib import Path

import pytest
from tui_support import call, escalation, start, write_events

from tests.conftest import run_cli, run_cli_in_terminal

SESSION = "a-session-with-a-long-name-for-stats"


def _looping_idle_session(root: Path) -> None:
    """Three answers and calls, a loop escalated (its cost said), then silence (the idle
    note), and no saved guard state (the replay note)."""
    events = [start()]
    for n in range(1, 4):
        events += [{"type": "usage", "input_tokens": 100, "output_tokens": 10,
                    "cost_usd": 0.25}, *call(n)]
    write_events(root, SESSION, [*events, escalation(evidence=[6, 9])])


@pytest.mark.slow
@pytest.mark.parametrize("columns", [80, 120])
def test_stats_sentences_are_broken_between_words_at_the_terminals_width(
        root: Path, columns: int) -> None:
    _looping_idle_session(root)
    piped = run_cli("stats", SESSION, "--root", str(root))
    assert piped.returncode == 0, piped.stderr
    silence = next(line for line in piped.stdout.splitlines()
                   if line.startswith("(duration_s is the working time"))
    assert len(silence) > 120  # whole through a pipe: one line, however long
    shown = run_cli_in_terminal("stats", SESSION, "--root", str(root), columns=columns)
    lines = shown.splitlines()
    assert all(len(line) < columns for line in lines), shown
    # nothing lost, no word broken: the same words in the same order
    assert shown.split() == piped.stdout.split()
    assert len(lines) > len(piped.stdout.splitlines())  # the silence's sentence was broken
    first = lines.index(next(line for line in lines if line.startswith("(duration_s is")))
    assert lines[first + 1].startswith("  ") and not lines[first + 1].startswith("   ")
    assert "inside its loops (from each escalation's onset): $0.50 over 2 calls" in lines
    table = next(n for n, line in enumerate(lines) if line.startswith("LIMIT "))
    assert lines[table + 1].split()[0] == "consecutive_tool_calls"  # the table as it was


@pytest.mark.slow
def test_a_long_replay_is_announced_before_it_starts(root: Path) -> None:
    """200,000 events without the guard's saved state took 86 s at a load of 20 and said
    nothing until the table: a long replay is announced on stderr; a short one is not."""
    _looping_idle_session(root)
    assert run_cli("stats", SESSION, "--root", str(root)).stderr == ""
    events = [start()]
    for n in range(1, 10_001):
        events += call(n, cmd=f"make step{n}")
    write_events(root, "long", events)
    out = run_cli("stats", "long", "--root", str(root), timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ("supervisor: no saved guard state: replaying the session's 20,001 "
                          "events through the engine…\n")
    assert out.stdout.startswith("session long: ") and "10,000 tool calls" in out.stdout

