"""What an agent is told when an edit fails (supervisor.engine.edit_hint), with real files read
by the guard's bounded reader: whitespace, indentation, a line changed by another edit, a file
rewritten outside the session, a text occurring twice, a binary, a huge and a missing file."""

from pathlib import Path

import pytest

from supervisor.engine.edit_hint import (
    HINT_CHARS,
    FileVersion,
    change_note,
    changed_lines,
    failed_edit_hint,
)
from supervisor.engine.filestate import FileRead
from supervisor.guard import fileread


def read_file(path: str) -> FileRead:
    """The guard's read of a file of a work tree (its directory)."""
    return fileread.read_file(path, cwd=Path(path).parent)


APP = """\
def load(path):
    with open(path) as fh:
        data = fh.read()
    return parse(data)


def parse(data):
    rows = data.splitlines()
    return [r.split(",") for r in rows]
"""


@pytest.fixture
def app(tmp_path: Path) -> Path:
    path = tmp_path / "app.py"
    path.write_text(APP, encoding="utf-8")
    return path


def hint(path: Path, search: str, **kwargs) -> str:
    text = failed_edit_hint("app.py", search, "not_found", read_file(str(path)), **kwargs)
    assert len(text) <= HINT_CHARS
    return text


def test_whitespace_only(app: Path) -> None:
    text = hint(app, "def parse(data):\n    rows = data.splitlines( )\n")
    assert text.startswith("The text is in app.py at lines 7-8, but differs in whitespace "
                           "(spaces inside or at the end of lines).")
    assert "  8 │     rows = data.splitlines()" in text
    assert text.endswith("Copy these lines exactly, whitespace included.")


def test_changed_indentation(app: Path) -> None:
    text = hint(app, "with open(path) as fh:\n    data = fh.read()")
    assert text.startswith("The text is in app.py at lines 2-3, but indented differently: "
                           "line 3 is indented by 8 spaces in the file and by 4 spaces in your "
                           "text.")


def test_a_line_changed_by_another_edit_of_the_session(app: Path) -> None:
    read = FileVersion(4, read_file(str(app)).digest or "", APP)
    app.write_text(APP.replace("return parse(data)", "return parse(data.strip())"))
    mine = FileVersion(9, read_file(str(app)).digest or "", None, "Edit")
    text = hint(app, "    return parse(data)\n", read=read, writes=(mine,))
    first, second = text.split("\n")[:2]
    assert first == ("app.py changed since you last read it, by your own edit since then "
                     "(Edit). Changed lines:")
    assert second == "  line 4 now `return parse(data.strip())` (was `return parse(data)`)"
    assert "The closest text is at line 4" in text
    assert "line 4 is `return parse(data.strip())` in the file, `return parse(data)` in your " \
        "text" in text


def test_a_file_rewritten_outside_the_session(app: Path) -> None:
    read = FileVersion(4, read_file(str(app)).digest or "", APP)
    mine = FileVersion(6, read.digest, None, "Edit")  # the session's last edit left it as read
    app.write_text(APP.replace("def parse(data):", "def parse(data, sep=','):"))
    text = hint(app, "def parse(data):\n    rows", read=read, writes=(mine,))
    assert text.startswith("app.py changed since you last read it, not by an edit of this "
                           "session the supervisor saw (another process, or a command of yours "
                           "that wrote it). Changed lines:\n  line 7 now `def parse(data, "
                           "sep=','):` (was `def parse(data):`)")


def test_unchanged_since_read_is_said(app: Path) -> None:
    read = FileVersion(4, read_file(str(app)).digest or "", APP)
    text = hint(app, "return parse(data)\n\n\ndef parse(data): ", read=read)
    assert text.startswith("app.py has not changed since you last read it.\n")


def test_a_text_occurring_twice(app: Path) -> None:
    text = failed_edit_hint("app.py", "(data)", "ambiguous", read_file(str(app)))
    assert text.startswith("The text you searched for occurs 2 times in app.py, at lines 4 "
                           "and 7.")
    assert "  7 │ def parse(data):" in text


def test_binary_file(tmp_path: Path) -> None:
    (tmp_path / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0")
    text = failed_edit_hint("x.png", "a", "not_found", read_file(str(tmp_path / "x.png")))
    assert text == ("The edit of x.png failed; the file is binary (it holds NUL bytes), so a "
                    "text edit cannot apply to it.")


def test_huge_file_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "big.sql"
    with path.open("wb") as fh:
        fh.truncate(64 * 1024 ** 2)
    text = failed_edit_hint("big.sql", "a", "not_found", read_file(str(path)))
    assert text == ("The edit of big.sql failed; the file is too large to show the closest text "
                    "(64.0 MiB, over the 1.0 MiB read). Search it for a distinctive line "
                    "(grep -n) instead.")


def test_missing_file(tmp_path: Path) -> None:
    text = failed_edit_hint("gone.py", "a", "not_found", read_file(str(tmp_path / "gone.py")))
    assert text.startswith("gone.py does not exist.")


def test_nothing_similar(app: Path) -> None:
    text = hint(app, "class Handler(BaseHTTPRequestHandler):")
    assert text.startswith("Nothing in app.py (9 lines) resembles the text you searched for.")
    assert "│" not in text


def test_the_hint_stays_within_its_budget(tmp_path: Path) -> None:
    wide = "\n".join(f"item_{i} = '{'v' * 180}{i}'" for i in range(400)) + "\n"
    path = tmp_path / "wide.py"
    path.write_text(wide)
    read = FileVersion(1, "old", wide.replace("'v", "'w"))
    search = "\n".join(f"item_{i} = '{'v' * 180}{i + 1}'" for i in range(100, 160))
    text = failed_edit_hint("wide.py", search, "not_found", read_file(str(path)), read=read)
    assert len(text) <= HINT_CHARS
    assert "│" in text  # some of the region still fits


def test_change_note_needs_a_read_on_record(app: Path) -> None:
    assert change_note("app.py", read_file(str(app)), None) == ""


def test_changed_lines_added_and_removed() -> None:
    assert changed_lines("a\nb\nc", "a\nc\nd") == [
        "  removed after line 1: `b`", "  line 3 added: `d`"]
