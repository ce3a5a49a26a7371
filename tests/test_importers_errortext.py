"""`known_error` reads its patterns in one pass and still answers as the ordered list says:
the first pattern (in `_KNOWN_ERRORS` order) that matches at a line start of the output's head,
a traceback only at the very start."""

import itertools

import pytest

from supervisor.importers.errortext import _KNOWN_ERRORS, known_error


def one_pattern_at_a_time(output: object) -> str | None:
    """What `known_error` means, written the slow way: each pattern searched in turn."""
    if not isinstance(output, str):
        return None
    head = output[:4096].lstrip()
    for pattern, label in _KNOWN_ERRORS:
        match = pattern.search(head)
        if match and (match.start() == 0 or label != "python traceback"):
            return label
    return None


LINES = [
    "[Your proposed edit has introduced new syntax error(s).", "No file open. Use the `open` "
    "command first.", "[No exact match found in a.py for", "No replacement was performed.",
    "ERROR:", "ERROR: x", "Error: y", "Usage: open <file>", "bash: line 3: foo: command not found",
    "foo: command not found", "File a.py not found", "[File b.py does not exist]",
    "Invalid `view_range` parameter", "EXECUTION TIMED OUT", "The command ls was cancelled "
    "because it took more than 30 seconds", "Traceback (most recent call last):", "hello",
    "  ", "", "x ERROR: quoted", "\r", "1|import os",
]


@pytest.mark.parametrize("separator", ["\n", "\r\n", " ", ""])
def test_every_pair_and_order_of_lines_answers_as_the_ordered_patterns(separator: str) -> None:
    for parts in itertools.product(LINES, repeat=2):
        output = separator.join(parts)
        assert known_error(output) == one_pattern_at_a_time(output), repr(output)


def test_triples_of_lines_answer_as_the_ordered_patterns() -> None:
    for parts in itertools.product(LINES, repeat=3):
        output = "\n".join(parts)
        assert known_error(output) == one_pattern_at_a_time(output), repr(output)


def test_the_first_pattern_in_order_wins_wherever_it_is() -> None:
    # "ERROR:" followed by a newline runs into the next line: that line is still read
    assert known_error("ERROR:\n[Your proposed edit has introduced new syntax error") \
        == "edit: syntax errors"
    assert known_error("Usage: x\nERROR: y") == "tool error"
    assert known_error("ok\nTraceback (most recent call last):") is None
    assert known_error("Traceback (most recent call last):\nfoo: command not found") \
        == "command not found"
    assert known_error("\n\n  Traceback (most recent call last):") == "python traceback"
    assert known_error("x" * 4096 + "\nERROR: late") is None  # past the head
    assert known_error(None) is None and known_error(b"ERROR: x") is None
