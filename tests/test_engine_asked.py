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
