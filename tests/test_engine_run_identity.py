"""A run's identity leaves out the output filters its line ends with: `python r.py`,
`python r.py 2>&1 | tail -20` and `python r.py | grep FAIL` are one check run three times,
seen through three filters. The rules that ask whether a check was run again (`ineffective_edits`)
key on it; outputs are still compared only through the same filter."""

import pytest

from supervisor.engine import Engine
from supervisor.engine.shell import output_filter, run_text, run_words
from tests.engine_helpers import SessionBuilder, alarms, detectors, replay

FAIL = ("Traceback (most recent call last):\n  File \"reproduce.py\", line 2, in <module>\n"
        "    main()\n  File \"/r/app/core.py\", line 9, in main\n    total = 1 + '2'\n"
        "TypeError: unsupported operand type(s) for +: 'int' and 'str'")
FILTERED = {  # what each filter shows of FAIL
    "python reproduce.py": FAIL,
    "python reproduce.py 2>&1 | tail -1": FAIL.splitlines()[-1],
    "python reproduce.py 2>&1 | tail -n 3": "\n".join(FAIL.splitlines()[-3:]),
    "python reproduce.py 2>&1 | grep -i error | head -5": FAIL.splitlines()[-1],
}


@pytest.mark.parametrize("line", [
    "python r.py 2>&1 | tail -20", "python r.py | tail -n 20", "python r.py 2>&1 | head -50",
    "python r.py | grep -v Warning | head -n 5", "python r.py 2>&1 | grep -q passed",
    "python r.py |& tail", "python r.py 2>&1", "python r.py | egrep 'a|b' | sort | uniq -c",
    "python r.py | wc -l", "python r.py | rg -n FAIL", "python r.py 2>&1 | sed -n '1,80p'",
    "python r.py | grep -e FAIL -e ERROR", "python r.py | cat",
    "python r.py | tail -20  # again", "python r.py;\n",
])
def test_output_filters_at_the_end_are_not_part_of_the_run(line: str) -> None:
    assert run_words(line) == ["python", "r.py"]


@pytest.mark.parametrize("line", [
    "python r.py | tee out.log",          # writes the file it names
    "python r.py | tail -5 > out.log",    # so does a redirection
    "python r.py | grep FAIL out.log",    # reads the file, not the pipe
    "python r.py | sort -o sorted.txt",
    "python r.py | awk '{print $1}'",     # a script: it computes
    "python r.py | sed 's/a/b/'",
    "python r.py | xargs rm",             # runs commands
    "python r.py | python3 -c 'import sys; print(len(sys.stdin.read()))'",
])
def test_what_is_not_a_pure_output_filter_stays_part_of_the_run(line: str) -> None:
    assert run_words(line) != ["python", "r.py"]


def test_only_the_end_of_the_line_is_cut() -> None:
    assert run_words("cd /r && python r.py | tail -5") == ["cd", "/r", "&&", "python", "r.py"]
    assert run_words("python a.py | tail -5; python b.py")[-2:] == ["python", "b.py"]
    assert "a.py" in run_words("python a.py | tail -5; python b.py")
    assert run_words("(python r.py | sort) | head") == ["(", "python", "r.py", "|", "sort", ")"]
    assert run_words('python -c "print(1|2)" | wc -l') == ["python", "-c", "print(1|2)"]
    assert not output_filter(["head", "notes.txt"])
    assert run_words("python r.py &") == ["python", "r.py", "&"]  # a launch is another run
    # a here-document's body is part of the run: two different scripts are two runs
    one = run_words("cat > t.py << 'EOF'\nprint(1)\nEOF\npython t.py | tail -3")
    two = run_words("cat > t.py << 'EOF'\nprint(2)\nEOF\npython t.py | tail -3")
    assert one != two and one[-2:] == ["python", "t.py"]


def test_one_run_through_two_filters_shares_the_run_not_the_signature() -> None:
    engine = Engine()
    a = engine.check({"call_id": "a", "tool": "Bash", "args": {"command": "pytest -x"}}, 1.0)
    b = engine.check({"call_id": "b", "tool": "Bash",
                      "args": {"command": "pytest -x 2>&1 | tail -20"}}, 2.0)
    engine.check({"call_id": "c", "tool": "Bash",
                  "args": {"command": "pytest -x", "cwd": "/elsewhere"}}, 3.0)
    runs = [step["run"] for step in engine.st.pending.values()]
    assert a.signature != b.signature
    assert runs[0] == runs[1]          # the filter is not part of the run
    assert runs[2] != runs[0]          # another argument still is
    d = engine.check({"call_id": "d", "tool": "Read", "args": {"file_path": "/r/a.py"}}, 4.0)
    assert [*engine.st.pending.values()][-1]["run"] == d.signature  # not a shell call


def test_a_check_rerun_through_another_filter_each_time_is_still_a_round() -> None:
    """The agent edits the code and re-runs its reproduction through one filter, then another
    (`| tail -1`, `| tail -n 3`, ...): the output each filter shows never changes. Each filter
    alone was seen at most three times, two rounds: the loop went unseen."""
    lines = list(FILTERED)
    b = SessionBuilder()
    b.call("Bash", {"command": lines[0]}, FILTERED[lines[0]], ok=False)
    b.call("Bash", {"command": lines[1]}, FILTERED[lines[1]], ok=True)  # `tail` exits 0
    runs = []
    for k in range(6):
        b.call("Edit", {"file_path": "/r/app/core.py", "old_string": f"v{k}",
                        "new_string": f"v{k + 1}"}, "The file has been updated.")
        line = lines[k % 2]
        runs.append(b.call("Bash", {"command": line}, FILTERED[line], ok=line != lines[0]))
    found = [a for a in alarms(replay(b.end())) if a[1] == "ineffective_edits"]
    assert found and found[0] == (runs[2], "ineffective_edits", "nudge")


def test_a_first_look_through_a_new_filter_neither_counts_nor_resets() -> None:
    """A filter not used before shows other lines of the output: it is no evidence that the
    output changed (the edits took effect) nor that it stayed the same."""
    lines = list(FILTERED)
    b = SessionBuilder()
    b.call("Bash", {"command": lines[0]}, FAIL, ok=False)
    for k, line in enumerate([lines[0], lines[2], lines[3], lines[0]]):
        b.call("Edit", {"file_path": "/r/app/core.py", "old_string": f"v{k}",
                        "new_string": f"v{k + 1}"}, "The file has been updated.")
        b.call("Bash", {"command": line}, FILTERED[line], ok=line != lines[0])
    # rounds: the first re-run, then two new filters (no round, no reset), then the first
    # filter again: two rounds, no nudge yet
    assert "ineffective_edits" not in detectors(replay(b.end()))
    b.call("Edit", {"file_path": "/r/app/core.py", "old_string": "v9", "new_string": "v10"},
           "The file has been updated.")
    last = b.call("Bash", {"command": lines[2]}, FILTERED[lines[2]], ok=True)
    found = [a for a in alarms(replay(b.end())) if a[1] == "ineffective_edits"]
    assert found == [(last, "ineffective_edits", "nudge")]


def test_different_filters_of_a_changing_output_are_not_one_unchanged_output() -> None:
    """Through two filters the output differs every time, and through each it changes after
    every edit: the edits take effect, whatever filter shows it."""
    b = SessionBuilder()
    b.call("Bash", {"command": "python reproduce.py | tail -1"}, "total: 0")
    for k in range(6):
        b.call("Edit", {"file_path": "/r/app/core.py", "old_string": f"v{k}",
                        "new_string": f"v{k + 1}"}, "The file has been updated.")
        line = "python reproduce.py | tail -1" if k % 2 else "python reproduce.py | head -1"
        b.call("Bash", {"command": line}, f"total: {k + 1}")
    assert "ineffective_edits" not in detectors(replay(b.end()))


def test_the_rerun_through_a_new_filter_is_refused_after_the_rounds() -> None:
    """After three rounds and one more edit, the check is refused whatever filter it is run
    through this time: it would run what ran three times without effect."""
    lines = list(FILTERED)
    b = SessionBuilder()
    b.call("Bash", {"command": lines[0]}, FAIL, ok=False)
    for k in range(3):  # three rounds: the nudge
        b.call("Edit", {"file_path": "/r/app/core.py", "old_string": f"v{k}",
                        "new_string": f"v{k + 1}"}, "The file has been updated.")
        b.call("Bash", {"command": lines[0]}, FAIL, ok=False)
    b.call("Edit", {"file_path": "/r/app/core.py", "old_string": "v8", "new_string": "v9"},
           "The file has been updated.")
    refused = b.call("Bash", {"command": lines[3]}, FILTERED[lines[3]], ok=True)
    assert (refused, "ineffective_edits", "block") in alarms(replay(b.end()))


def test_a_runs_text_is_the_line_up_to_its_output_filters() -> None:
    """`shell.run_text`: the run as a person writes it (quotes kept), for the prompt's
    requests and the failure memory's keys."""
    assert run_text("pytest -x 2>&1 | tail -30") == "pytest -x"
    assert run_text('pytest -k "a or b" | grep FAIL') == 'pytest -k "a or b"'
    assert run_text('python -c "print(1|2)" | wc -l') == 'python -c "print(1|2)"'
    assert run_text("python r.py | tail -20  # again") == "python r.py"
    assert run_text("python r.py | tee out.log") == "python r.py | tee out.log"
    assert run_text("pytest") == "pytest"
