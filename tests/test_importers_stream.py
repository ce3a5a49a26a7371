"""Streamed reading of run files (issue 41): what is read a line or an element at a time reads
exactly what a whole parse reads, at every buffer boundary, and refuses what a whole parse
refuses (broken text, nesting too deep) with one line."""

import json
from pathlib import Path

import pytest

from supervisor.importers import FormatError, jsonstream, load_runs
from supervisor.importers.document import HEAD_LINE, Records, read_document
from supervisor.importers.jsonstream import ObjectIndex, StreamError
from supervisor.protocol.bounded import depth_of
from supervisor.protocol.names import MAX_JSON_DEPTH

DOC = {"environment": "swe_main", "n": 12345, "pi": -1.5e-3, "flag": True, "none": None,
       "trajectory": [{"action": f"echo {i}", "text": "é☃𝄞" * i, "n": i * 1001}
                      for i in range(40)],
       "history": [], "info": {"exit_status": "submitted", "deep": [[["x"]]]}}


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1 << 20])
@pytest.mark.parametrize("indent", [None, 2])
def test_every_member_and_element_is_read_as_a_whole_parse_reads_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, indent: int | None) -> None:
    monkeypatch.setattr(jsonstream, "CHUNK", chunk)  # every value cut by the buffer somewhere
    path = tmp_path / "run.traj"
    path.write_text(json.dumps(DOC, ensure_ascii=False, indent=indent), encoding="utf-8")
    index = ObjectIndex.scan(path)
    assert list(index.members) == list(DOC)
    for key, value in DOC.items():
        if isinstance(value, list):
            assert list(index.elements(key)) == value
            assert index.length(key) == len(value)
        else:
            assert index.get(key) == value


@pytest.mark.parametrize("text", [
    '{"a": [1, 2', '{"a": [1 2]}', '{"a": 1,}', '{"a" 1}', '[1, 2]', '{"a": 1} x', '{a: 1}',
    '{"a": [' + "[" * (MAX_JSON_DEPTH + 5) + "]" * (MAX_JSON_DEPTH + 5) + "]}",
])
def test_broken_or_too_deep_text_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(StreamError):
        ObjectIndex.scan(path)


def test_a_broken_trajectory_gets_the_whole_parse_error_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.traj"
    path.write_text(json.dumps(DOC)[:-40])
    with pytest.raises(FormatError, match=r"invalid JSON: .* at line 1 column"):
        load_runs(path)


def test_json_lines_are_told_from_one_document_by_their_first_line(tmp_path: Path) -> None:
    lines = tmp_path / "a.jsonl"
    lines.write_bytes(b'\xef\xbb\xbf\n\n{"a": 1}\n\n{"b": [2]}\n')
    pretty = tmp_path / "b.json"
    pretty.write_text(json.dumps({"a": [1, 2]}, indent=2))
    one = tmp_path / "c.json"
    one.write_text('  {"a": 1}  \n\n')
    assert read_document(lines).kind == "jsonl"
    assert list(read_document(lines).records()) == [{"a": 1}, {"b": [2]}]
    assert read_document(pretty).kind == "json" and read_document(pretty).value == {"a": [1, 2]}
    assert read_document(one).kind == "json" and read_document(one).records() == [{"a": 1}]


def test_a_first_line_longer_than_the_head_is_judged_whole(tmp_path: Path) -> None:
    long = {"text": "x" * (HEAD_LINE + 10)}
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(long) + "\n" + json.dumps({"b": 1}) + "\n")
    document = read_document(path)
    assert document.kind == "jsonl"
    assert list(document.records()) == [long, {"b": 1}]


def test_records_are_read_again_on_each_walk_and_name_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps({"i": i}) + "\n" for i in range(100)) + "{oops\n")
    records = read_document(path).records()
    assert isinstance(records, Records)
    assert records[0] == {"i": 0} and records[:3] == [{"i": 0}, {"i": 1}, {"i": 2}]
    assert bool(records)
    for _ in range(2):  # each walk reads the file again, up to its broken line 101
        with pytest.raises(FormatError, match="invalid JSON Lines: line 101"):
            list(records)


def test_a_big_file_is_read_again_rather_than_kept(tmp_path: Path) -> None:
    from supervisor.importers.document import KEEP_BYTES

    path = tmp_path / "big.jsonl"
    line = json.dumps({"text": "y" * 1000}) + "\n"
    path.write_text(line * (KEEP_BYTES // len(line) + 10))
    records = read_document(path).records()
    first = sum(1 for _ in records)
    assert first == sum(1 for _ in records) == len(records) > 1000
    assert records._all is None  # nothing held between walks


def test_a_small_document_is_parsed_once_and_indexed_as_the_scan_indexes_it(
        tmp_path: Path) -> None:
    path = tmp_path / "run.traj"
    path.write_text(json.dumps(DOC, indent=1))
    document = read_document(path)
    index = document.object_index()
    scanned = ObjectIndex.scan(path, keep=True)
    assert index is not None and list(index.members) == list(scanned.members) == list(DOC)
    for key in DOC:
        assert index.is_array(key) == scanned.is_array(key)
        assert index.get(key) == scanned.get(key)
        assert index.first(key) == scanned.first(key)
        assert index.length(key) == scanned.length(key)
        assert list(index.elements(key)) == list(scanned.elements(key))
    # one parse: the index holds the very lists of the document's value
    assert index.members["trajectory"].kept is document.value["trajectory"]


@pytest.mark.parametrize("text", ['[{"trajectory": []}]', '"text"', "{" + ", ".join(
    f'"k{i}": {i}' for i in range(jsonstream.MAX_MEMBERS + 1)) + "}"])
def test_a_small_document_the_scan_refuses_has_no_index(tmp_path: Path, text: str) -> None:
    path = tmp_path / "doc.json"
    path.write_text(text)
    with pytest.raises(StreamError):
        ObjectIndex.scan(path)
    assert read_document(path).object_index() is None


def test_nesting_is_measured_on_the_parsed_value(tmp_path: Path) -> None:
    def deep(levels: int) -> str:
        return "[" * levels + "]" * levels

    at_limit, over = tmp_path / "at.json", tmp_path / "over.json"
    at_limit.write_text('{"a": ' + deep(MAX_JSON_DEPTH - 1) + "}")
    over.write_text('{"a": ' + deep(MAX_JSON_DEPTH) + "}")
    assert depth_of(read_document(at_limit).value) == MAX_JSON_DEPTH
    with pytest.raises(FormatError, match=f"JSON nested deeper than {MAX_JSON_DEPTH} levels"):
        _ = read_document(over).value
    # too deep as a whole, not element by element: the streaming scan still indexes it
    index = read_document(over).object_index()
    assert index is not None and index.length("a") == 1
    far = tmp_path / "far.json"  # past the parser's own recursion limit
    far.write_text(deep(50_000))
    with pytest.raises(FormatError, match="nested deeper than"):
        _ = read_document(far).value


@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH + 1, 50_000])
def test_a_line_with_many_brackets_is_read_and_a_deep_one_refused_with_its_number(
        tmp_path: Path, levels: int) -> None:
    wide = {"blocks": [[i] for i in range(200)]}  # 201 brackets, 2 levels
    at_limit = json.loads("[" * (MAX_JSON_DEPTH - 1) + "{}" + "]" * (MAX_JSON_DEPTH - 1))
    good, deep = tmp_path / "good.jsonl", tmp_path / "deep.jsonl"
    good.write_text(f"{json.dumps(wide)}\n{json.dumps(at_limit)}\n")
    deep.write_text(good.read_text() + "[" * levels + "]" * levels + "\n")
    assert list(read_document(good).records()) == [wide, at_limit]
    refusal = f"invalid JSON Lines: line 3: JSON nested deeper than {MAX_JSON_DEPTH} levels"
    with pytest.raises(FormatError, match=refusal):
        list(read_document(deep).records())
