"""The recovery turn (supervisor.engine.recovery): built from the evidence only, short, and the
engine's first nudge of a loop."""

from typing import Any

from supervisor.engine import Engine
from supervisor.engine.recovery import (
    HEADLINE,
    NEXT_FOR_DETECTOR,
    NEXT_STEP,
    STEP_BACK_CHARS,
    output_line,
    recovery_turn,
    step_back,
)


def step(seq: int, tool: str = "Bash", args: str = '{"command":"pytest -q"}', *,
         category: str = "run", ok: bool | None = False, error: str = "test_failure",
         error_id: str = "", outcome: str = "h1", line: str = "", path: str | None = None,
         workspace: str = "w1", changed: list[str] | None = None, time: float = 0.0
         ) -> dict[str, Any]:
    return {"seq": seq, "result_seq": seq + 1, "tool": tool, "args": args, "path": path,
            "category": category, "ok": ok, "error": error if ok is False else "",
            "error_id": error_id, "outcome": outcome, "last_line": line,
            "signature": f"{tool}{args}", "workspace": workspace, "changed": changed or [],
            "returned": [], "time": time}


def test_the_same_call_with_the_same_error() -> None:
    steps = [step(s, error_id="AssertionError: assert # == #") for s in (12, 15, 18)]
    assert step_back("exact_repeat", steps) == (
        "Loop: step back. Your last 3 runs did not get you further. "
        'Tried: Bash {"command":"pytest -q"} (3 times, the same call each time). '
        "Same each time: each failed with “AssertionError: assert # == #” (numbers shown as "
        "#); no file changed between them. "
        "Next, do something different: the tests fail the same way; read the failing "
        "assertion and change the code before running them again.")


def test_different_edits_with_the_same_error_name_their_file() -> None:
    steps = [step(s, "Edit", f'{{"file_path":"/w/app.py","old_string":"v{s}"}}',
                  category="mutate", error="search_string_not_found", path="/w/app.py",
                  error_id="String to replace not found in file.", workspace=f"w{s}")
             for s in (4, 8)]
    text = step_back("recurring_error", steps)
    assert 'Tried: Edit /w/app.py (twice, 2 different calls).' in text
    assert "each failed with “String to replace not found in file.”." in text
    assert "no file changed" not in text  # different calls: the workspace is not the point
    assert text.endswith("re-read the exact lines first and copy them verbatim (whitespace "
                         "included), or replace a smaller unique part.")


def test_edits_that_do_not_change_a_tests_output_are_what_was_tried() -> None:
    hist = [step(1, ok=True, outcome="same", line="1 failed, 4 passed"),
            step(3, "Edit", "a", category="mutate", ok=True, outcome="e1", changed=["a.py"]),
            step(5, ok=True, outcome="same", line="1 failed, 4 passed"),
            step(6, "Read", "r", category="read", ok=True, outcome="r1"),
            step(7, "Edit", "b", category="mutate", ok=True, outcome="e2", changed=["a.py"]),
            step(9, ok=True, outcome="same", line="1 failed, 4 passed")]
    text = recovery_turn("ineffective_edits", [1, 5, 9], hist)
    assert "Your last 2 edits did not get you further. Tried: Edit a; Edit b." in text
    assert ('Same each time: Bash {"command":"pytest -q"}: each gave the same output, '
            "ending “1 failed, 4 passed”.") in text
    assert text.endswith(f"{NEXT_FOR_DETECTOR['ineffective_edits']}.")


def test_nothing_is_claimed_that_the_steps_do_not_show() -> None:
    mixed = [step(1, ok=True, outcome="a"), step(2, ok=False, workspace="w2")]
    assert "Same each time" not in step_back("no_progress", mixed)
    unknown = [step(1, ok=False, error=""), step(2, ok=False, error="")]
    assert "Same each time: each failed" not in step_back("exact_repeat", unknown)
    pending = [step(1, ok=None), step(2, ok=None)]
    assert "each" not in step_back("exact_repeat", pending).split("Next")[0].split("Tried")[0]
    moved = [step(1, ok=True, workspace="w1"), step(2, ok=True, workspace="w2")]
    assert "no file changed" not in step_back("exact_repeat", moved)
    assert step_back("exact_repeat", [{"tool": "x"}]) == ""  # no event to cite
    assert recovery_turn("exact_repeat", [40, 41], [step(1)]) == ""  # evidence no longer known


def test_the_kind_of_tool_chooses_the_next_step() -> None:
    reads = [step(s, "Read", "f", category="read", ok=True, outcome="o") for s in (1, 2, 3)]
    assert step_back("exact_repeat", reads).endswith(f"{NEXT_STEP['read']}.")
    polls = [step(s, "BashOutput", "j", category="poll", ok=True, time=s * 300.0)
             for s in (1, 2, 3, 4)]
    text = step_back("polling", polls)
    assert "each gave the same output over 900 s;" in text
    assert text.endswith(f"{NEXT_STEP['poll']}.")


def test_short_with_long_arguments_and_error_lines() -> None:
    steps = [step(s, "Edit", "x" * 5000, category="mutate", error_id="E" * 5000)
             for s in range(1, 40)]
    text = step_back("recurring_error", steps)
    assert len(text) <= STEP_BACK_CHARS
    assert "; and " not in text  # the same call: said once
    assert "(39 times, the same call each time)" in text


def test_output_line_is_the_normalised_last_line() -> None:
    assert output_line("collected 5 items\n\n1 failed, 4 passed in 0.12s\n\n") == (
        output_line("1 failed, 4 passed in 3.40s"))
    assert output_line("") == "" and output_line("\n \n") == ""
    assert len(output_line("y" * 10_000)) <= 120


def test_the_engine_s_first_nudge_of_a_loop_is_the_recovery_turn() -> None:
    engine = Engine()
    found = []
    for i in range(3):
        engine.check({"call_id": f"c{i}", "seq": 10 * i + 1, "tool": "Bash",
                      "args": {"command": "python -m pytest -q tests/test_io.py"}}, 1000.0 + i)
        found += engine.observe({
            "type": "tool_result", "call_id": f"c{i}", "seq": 10 * i + 2, "ok": False,
            "output": "E   assert 3 == 4\nFAILED tests/test_io.py::test_read - assert 3 == 4\n"
                      "1 failed, 2 passed in 0.05s", "error": "exit code 1"}, 1000.0 + i)
    assert [(f.detector, f.level) for f in found] == [("exact_repeat", 1)]
    text = found[0].message
    assert text.startswith(f"{HEADLINE} Your last 3 runs did not get you further. Tried: "
                           "Bash ")
    assert "(3 times, the same call each time)" in text
    assert "“FAILED tests/test_io.py::test_read - assert # == #” (numbers shown as #); no " \
        "file changed between them." in text
    assert len(text) <= STEP_BACK_CHARS
    # a block later is the detector's own message, not another recovery turn
    blocked = engine.check({"call_id": "c3", "seq": 31, "tool": "Bash",
                            "args": {"command": "python -m pytest -q tests/test_io.py"}}, 1004.0)
    assert blocked.action == "block" and not blocked.message.startswith(HEADLINE)


def test_many_different_calls_keep_the_next_step_within_the_budget() -> None:
    steps = [step(s, "Bash", f'{{"command":"python check_{s}.py {"x" * 60}"}}', ok=True,
                  outcome=f"o{s}") for s in range(1, 12)]
    text = step_back("no_progress", steps)
    assert len(text) <= STEP_BACK_CHARS
    assert text.endswith(f"{NEXT_STEP['run']}.")
    assert "check_11.py" in text and "other calls" in text


def test_a_long_path_keeps_its_file_name() -> None:
    path = "/very/deep/" + "d/" * 60 + "parser.py"
    steps = [step(s, "Edit", "{}", category="mutate", path=path) for s in (1, 2)]
    text = step_back("recurring_error", steps)
    assert "Tried: Edit …" in text and "/d/parser.py (twice, the same call each time)" in text
