"""The closest match of a failed edit's search text (supervisor.engine.closest): every kind of
difference agents make, the region shown, and the bounds."""

import pytest

from supervisor.engine import closest
from supervisor.engine.closest import closest_match

SOURCE = """\
import os


def add(a, b):
    total = a + b
    return total


def sub(a, b):
    return a - b


class Box:
    def __init__(self, size):
        self.size = size

    def grow(self, by):
        self.size += by
        return self.size
"""


def test_text_in_the_file_once_is_found_with_its_line() -> None:
    m = closest_match(SOURCE, "    total = a + b\n")
    assert m.kind == "found"
    assert (m.start, m.end) == (5, 5)
    assert m.occurrences == (5,)


def test_text_occurring_twice_lists_every_occurrence() -> None:
    m = closest_match(SOURCE, "(a, b):")
    assert m.kind == "ambiguous"
    assert m.occurrences == (4, 9)
    shown = dict(m.shown)
    assert "def add(a, b):" in shown[4] and "def sub(a, b):" in shown[9]


def test_changed_indentation_is_named_with_its_widths() -> None:
    m = closest_match(SOURCE, "def grow(self, by):\n    self.size += by\n    return self.size")
    assert m.kind == "indentation"
    assert (m.start, m.end) == (17, 19)
    assert m.detail == "line 18 is indented by 8 spaces in the file and by 4 spaces in your text"


def test_tabs_against_spaces_is_an_indentation_difference() -> None:
    m = closest_match(SOURCE, "def add(a, b):\n\ttotal = a + b\n\treturn total")
    assert m.kind == "indentation"
    assert m.detail == "the file indents with spaces, your text with tabs"


def test_spaces_inside_and_at_the_end_of_lines_are_whitespace() -> None:
    m = closest_match(SOURCE, "def add(a,  b):\n    total = a + b  \n    return total")
    assert m.kind == "whitespace"
    assert (m.start, m.end) == (4, 6)
    assert "spaces inside or at the end of lines" in m.detail


def test_a_missing_blank_line_is_whitespace() -> None:
    m = closest_match(SOURCE, "    return total\n\ndef sub(a, b):")
    assert m.kind == "whitespace"
    assert "blank lines" in m.detail
    assert (m.start, m.end) == (6, 9)


def test_a_changed_line_is_named_with_both_versions() -> None:
    m = closest_match(SOURCE, "def add(a, b):\n    total = a * b\n    return total")
    assert m.kind == "changed"
    assert (m.start, m.end) == (4, 6)
    (diff,) = m.differences
    assert (diff.line, diff.file_text, diff.search_text) == (5, "    total = a + b",
                                                            "    total = a * b")


def test_a_line_the_agent_left_out_is_found_and_named() -> None:
    m = closest_match(SOURCE,
                      "class Box:\n    def __init__(self, size):\n\n    def grow(self, by):")
    assert m.kind == "changed"
    assert (m.start, m.end) == (13, 17)
    assert [(d.line, d.file_text, d.search_text) for d in m.differences] == [
        (15, "        self.size = size", None)]


def test_a_line_only_the_search_text_has_is_named() -> None:
    m = closest_match(SOURCE, "def sub(a, b):\n    assert b\n    return a - b")
    assert m.kind == "changed"
    assert (m.start, m.end) == (9, 10)
    assert [(d.line, d.search_text) for d in m.differences] == [(None, "    assert b")]


def test_line_number_prefixes_copied_from_a_view_are_recognised() -> None:
    # as an OpenHands agent really copied them from `cat -n` (corpus: ponyc-4588)
    m = closest_match(SOURCE, "def sub(a, b):\n    10\t    return a - b")
    assert m.kind == "line_numbers"
    assert (m.start, m.end) == (9, 10)
    assert m.detail == "    10\t"
    for prefix in ("10→", "10|", "10:"):
        assert closest_match(SOURCE, f"def sub(a, b):\n{prefix}    return a - b").kind == \
            "line_numbers"


def test_numbers_that_do_not_count_up_are_not_prefixes() -> None:
    text = "d = {\n    1: 'one',\n    2: 'two',\n}\n"
    assert closest_match(text, "1: 'one',\n3: 'two',").kind != "line_numbers"


def test_literal_backslash_n_is_recognised() -> None:
    m = closest_match(SOURCE, "def sub(a, b):\\n    return a - b")
    assert m.kind == "escaped"
    assert (m.start, m.end) == (9, 10)


def test_cleaning_is_reported_when_other_differences_remain() -> None:
    m = closest_match(SOURCE, "def sub(a, b):\\n  return a - b")
    assert m.kind == "indentation"
    assert m.cleaned == ("escaped",)


def test_nothing_similar() -> None:
    m = closest_match(SOURCE, "SELECT name FROM users WHERE id = 1")
    assert m.kind == "none"
    assert m.shown == ()


def test_look_alikes_lose_to_the_right_lines_with_one_left_out() -> None:
    text = ("DEF(tilde);\n  INFIX_BUILD();\n  TOKEN(NULL, TK_TILDE);\n  DONE();\n\n"
            "DEF(idseqsingle);\n  PRINT_INLINE();\n  AST_NODE(TK_LET);\n"
            "  TOKEN(\"variable name\", TK_ID);\n  DONE();\n")
    m = closest_match(text, "DEF(idseqsingle);\n  AST_NODE(TK_LET);\n"
                            "  TOKEN(\"variable name\", TK_ID);\n  DONE();")
    assert (m.kind, m.start, m.end) == ("changed", 6, 10)
    assert [d.file_text for d in m.differences] == ["  PRINT_INLINE();"]


def test_a_left_out_line_costs_less_than_look_alike_lines() -> None:
    m = closest_match(SOURCE, "def add(a, b):\n    return total")
    assert (m.kind, m.start, m.end) == ("changed", 4, 6)
    assert [d.file_text for d in m.differences] == ["    total = a + b"]


def test_context_lines_around_the_region() -> None:
    m = closest_match(SOURCE, "def sub(a, b):\n    return a-b")
    assert [n for n, _ in m.shown] == [7, 8, 9, 10, 11, 12]
    assert "def sub(a, b):" in m.region_text


def test_a_long_region_shows_the_part_around_its_first_difference() -> None:
    lines = [f"value_{i} = compute({i}, 'label {i}')" for i in range(200)]
    search = "\n".join(lines[20:120]).replace("compute(90,", "compute(900,")
    m = closest_match("\n".join(lines) + "\n", search)
    assert m.kind == "changed"
    assert (m.start, m.end) == (21, 120)
    shown = [n for n, _ in m.shown]
    assert len(shown) == closest.SHOWN_LINES
    assert 91 in shown


def test_first_line_numbers_a_slice() -> None:
    m = closest_match("a = 1\nb = 2\nc = 3\n", "b = 3", first_line=41)
    assert (m.kind, m.start) == ("changed", 42)
    assert m.shown[0][0] == 41


def test_long_lines_are_cut_when_shown() -> None:
    text = "x = '" + "y" * 1000 + "'\n"
    m = closest_match(text, "x = '" + "y" * 990 + "z'")
    assert len(m.shown[0][1]) < closest.LINE_CHARS + 30


def test_crlf_files_match_by_line() -> None:
    m = closest_match("a = 1\r\nb = 2\r\n", "a = 1\nb = 2")
    assert m.kind == "whitespace"
    assert (m.start, m.end) == (1, 2)


def test_too_many_lines_are_not_searched(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(closest, "MAX_FILE_LINES", 100)
    m = closest_match("x\n" * 101, "y")
    assert (m.kind, m.total_lines) == ("too_large", 101)


def test_a_blank_search_text() -> None:
    assert closest_match(SOURCE, "  \n\n").kind == "empty"


def test_an_empty_file() -> None:
    assert closest_match("", "return a + b").kind == "none"


@pytest.mark.parametrize("search", ["\0\0\0", "}" * 5000, "\n".join(["x"] * 1000), "é" * 50])
def test_odd_search_texts_give_a_match(search: str) -> None:
    got = closest_match(SOURCE + "}\n" * 30, search)
    assert got.kind in ("found", "ambiguous", "changed", "none", "whitespace")


def test_a_distinctive_line_is_tried_even_when_common_lines_outvote_it() -> None:
    names = [f"rule{i:02d}" for i in range(40)]
    names[25] = "thistype"
    text = "".join(f"DEF({n});\n  TOKEN(NULL, TK_{n.upper()});\n  DONE();\n\n// {n}\n"
                   for n in names)
    m = closest_match(text, "  DONE();\n\nDEF(thistype);")  # the comment line left out
    assert m.kind == "changed"
    assert "DEF(thistype);" in m.region_text
    assert [d.file_text for d in m.differences] == ["// rule24"]
