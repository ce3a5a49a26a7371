"""A call's facts (`engine/facts.py`): read once, the same answers every station gave on its own,
and what the guard hands the engine is what a replay of the log reads."""

from pathlib import Path
from typing import Any

import pytest

from supervisor.engine import Engine, Policy, workspace
from supervisor.engine.categories import classify, file_path, is_file_read
from supervisor.engine.edits import edits_of
from supervisor.engine.facts import facts_of
from supervisor.engine.shell import commands
from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings
from supervisor.protocol.names import MAX_LINE_BYTES
from tests.guard_helpers import events, of_type

PATCH = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: n.py\n+x = 1\n*** End Patch\nEOF"
CALLS: list[tuple[str, Any]] = [
    ("Bash", {"command": "sed -n '1,9p' src/a.py | cat -n"}),
    ("Bash", {"command": "python reproduce.py > out.txt && rm a.py"}),
    ("exec_command", {"cmd": PATCH}),
    ("shell", {"command": ["bash", "-lc", "pytest -q tests/test_x.py"]}),
    ("Edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"}),
    ("MultiEdit", {"file_path": "a.py", "edits": [{"old_string": "a", "new_string": "b"}]}),
    ("Write", {"file_path": "w.sh", "content": "#!/bin/sh\nrm b.py\n"}),
    ("str_replace_editor", {"command": "view", "path": "a.py"}),
    ("Read", {"file_path": "a.py"}),
    ("Grep", {"pattern": "x"}),
    ("Bash", "not an object"),
]


@pytest.mark.parametrize(("tool", "args"), CALLS)
def test_facts_say_what_each_station_said_reading_the_call_itself(tool: str, args: Any) -> None:
    policy = Policy.profile()
    facts = facts_of(tool, args, policy)
    plain = args if isinstance(args, dict) else {}
    assert facts.category == classify(tool, plain, policy)
    assert facts.path == file_path(tool, plain, policy)
    assert facts.is_read == is_file_read(tool, plain, policy)
    assert list(facts.edits) == edits_of(tool, plain)
    planned = workspace.plan(tool, plain) if facts.category in ("mutate", "run") else []
    assert facts.plan == planned
    if facts.line is not None:
        assert [c.words for c in facts.commands] == [c.words for c in commands(facts.line)]


def test_an_acp_adapters_tool_is_read_as_the_agents_own() -> None:
    engine = Engine()
    facts = engine.facts("mcp__acp__Edit", {"file_path": "a.py", "old_string": "a",
                                            "new_string": "b"})
    assert (facts.tool, facts.category, facts.edited_paths) == ("Edit", "mutate", ["a.py"])
    assert engine.planned_paths(facts) == ["a.py"]
    assert engine.facts("mcp__acp__Read", {"file_path": "a.py"}).read_path == "a.py"


@pytest.mark.slow
def test_a_call_the_log_cuts_is_judged_as_the_log_holds_it(tmp_path: Path) -> None:
    """The guard reads the facts from the arguments it was given; when the log has to cut a
    huge call, the engine reads the call as written instead, so a replay of the log judges the
    same call the live run judged (same signature, same category)."""
    work = tmp_path / "work"
    work.mkdir()
    settings = GuardSettings(checkpoints=False, checkpoint_at_start=False, checkpoint_every=0)
    huge = {"command": "echo " + "x" * MAX_LINE_BYTES + " > a.txt"}
    small = {"command": "rm b.txt"}
    cut: list[bool] = []
    with Guard.open(tmp_path / "store", "s1", cwd=work, settings=settings) as guard:
        guard.start("t")
        for i, args in enumerate((huge, small)):
            assert guard.pre_call("Bash", args, call_id=f"c{i}").proceed
            live = guard.journal.engine.pending_step(f"c{i}")
            assert live is not None
            guard.post_call(f"c{i}", "", ok=True)
            logged = of_type(events(tmp_path / "store", "s1"), "tool_call")[-1]
            cut.append(len(logged["args"]["command"]) < len(args["command"]))
            replay = Engine()
            replay.check(logged, logged["ts"])
            step = replay.pending_step(f"c{i}")
            assert step is not None
            assert (live["signature"], live["category"], live["args"]) == (
                step["signature"], step["category"], step["args"])
    assert cut == [True, False]  # the huge call was cut in the log, the small one was not


def test_a_plain_command_line_is_split_as_the_shell_lexer_splits_it() -> None:
    """A line with no quote, escape or punctuation skips `shlex` (its lexer was most of the
    facts of `cat module_01.txt`): the words are the lexer's, whatever blanks and other
    characters it holds, and a line that is not plain still goes through the lexer."""
    import random

    from supervisor.engine import shell

    chars = "ab c\t\r-_./*?=~$#%@!{}[]:,+^\x0b\x0c\xa0é\u2003"
    rng = random.Random(40)
    plain = 0
    for _ in range(20_000):
        line = "".join(rng.choice(chars) for _ in range(rng.randint(0, 14)))
        assert shell._PLAIN.fullmatch(line)
        assert shell._tokens(line) == shell._lexed(line), repr(line)
        plain += bool(line.strip())
    assert plain > 10_000
    for line in ("cat 'a b'", 'echo "x y"', "a\\ b", "a;b", "a && b", "x > f", "a\nb", "(a)"):
        assert not shell._PLAIN.fullmatch(line)
        assert shell._tokens(line) == shell._lexed(line)
    assert [c.words for c in commands("cat  module_01.txt\t-n")] == [
        ["cat", "module_01.txt", "-n"]]
