"""Which shell lines a person's prompt asks for (`engine/asked.py`)."""

from supervisor.engine.asked import asked_for, prompt_text

PROMPT = prompt_text("Now run `bun tsc -b`, `bun tsc --noEmit`, and `bun tsc -b --noEmit`.\n"
                     "Then run npm test and tell me. Also try pytest tests/test_a.py -x")


def test_a_line_the_prompt_spells_out_whole_is_asked_for() -> None:
    for line in ("bun tsc -b", "bun tsc --noEmit", "bun  tsc -b\n--noEmit", "npm test",
                 "pytest tests/test_a.py -x"):
        assert asked_for(PROMPT, line, []) is not None, line


def test_a_part_of_a_longer_command_or_another_line_is_not() -> None:
    for line in ("pytest tests/test_a.py", "pytest", "bun tsc", "npm test -x",
                 "npm run test", "rm -rf .next"):
        assert asked_for(PROMPT, line, []) is None, line


def test_each_request_is_answered_once_and_short_lines_are_not_matched() -> None:
    assert asked_for(PROMPT, "npm test", ["npm test"]) is None
    assert asked_for(prompt_text("run ls and make"), "make", []) is None
    assert asked_for("", "npm test", []) is None and asked_for(PROMPT, None, []) is None


def test_a_run_the_prompt_names_is_asked_for_through_any_output_filter() -> None:
    """The agent's own `| tail -30` or `2>&1` only chooses which lines it reads of the run
    the person asked for (`shell.run_text`); a rerun through another filter is the agent's."""
    prompt = prompt_text("Please run `pytest -x` and fix what fails.")
    assert asked_for(prompt, "pytest -x 2>&1 | tail -30", []) == "pytest -x"
    assert asked_for(prompt, "pytest -x | grep FAIL", []) == "pytest -x"
    assert asked_for(prompt, "pytest -x | grep FAIL", ["pytest -x"]) is None
    assert asked_for(prompt, "pytest -x | tee out.log", []) is None  # tee writes: another run
    assert asked_for(prompt, "pytest -x tests | tail -5", []) is None
    spelled = prompt_text("run `npm test | tail -5` for me")
    assert asked_for(spelled, "npm test | tail -5", []) == "npm test"
