"""Broken and unknown files give one clear error line; forcing a format is checked too."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supervisor.importers import FormatError, detect_format, load_runs
from tests.conftest import cli_env
from tests.importer_helpers import check_protocol, fixture

BROKEN: dict[str, tuple[bytes, str]] = {
    "truncated.traj": (fixture("swe-agent/portalocker-no-file-open.traj").read_bytes()[:900],
                       "invalid JSON"),
    "empty.json": (b"", "empty file"),
    "blank.jsonl": (b"\n  \n", "empty file"),
    "binary.traj": (bytes(range(256)) * 4, "binary file"),
    "latin1.json": ('{"a": "caf\xe9"}'.encode("latin-1"), "not UTF-8"),
    "wrong-shape.json": (b'{"name": "not a run", "items": [1, 2]}', "unknown format"),
    "number.json": (b"42", "unknown format"),
    "list-of-numbers.json": (b"[1, 2, 3]", "unknown format"),
    "bad-line.jsonl": (b'{"type": "user", "sessionId": "a"}\n{"type": \n', "line 2"),
    "plain.txt": (b"hello, this is not a run\n", "invalid JSON"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_files_raise_one_clear_line(name: str, tmp_path: Path) -> None:
    data, expected = BROKEN[name]
    path = tmp_path / name
    path.write_bytes(data)
    assert detect_format(path) is None
    with pytest.raises(FormatError) as info:
        load_runs(path)
    message = str(info.value)
    assert expected in message and "\n" not in message and len(message) < 300


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="no such file"):
        load_runs(tmp_path / "absent.traj")
    with pytest.raises(FormatError, match="directory"):
        load_runs(tmp_path)


def test_unknown_format_name_is_refused() -> None:
    with pytest.raises(FormatError, match="unknown format 'aider'"):
        load_runs(fixture("swe-agent/portalocker-no-file-open.traj"), "aider")


@pytest.mark.parametrize(("path", "forced"), [
    ("swe-agent/portalocker-no-file-open.traj", "openhands"),
    ("mini-swe-agent/bare-list.traj.json", "swe-agent"),
    ("openhands/event-stream-vue-todo.json", "claude-code"),
    ("claude-code/7f2abd2d-session.jsonl", "mini-swe-agent"),
])
def test_forcing_the_wrong_format_is_a_clear_error(path: str, forced: str) -> None:
    with pytest.raises(FormatError) as info:
        load_runs(fixture(path), forced)
    assert str(info.value).startswith("not a")


def test_forcing_the_right_format_works() -> None:
    (run,) = load_runs(fixture("swe-agent/portalocker-no-file-open.traj"), "swe-agent")
    assert run.steps == 3


def test_wrong_shape_inside_a_known_format(tmp_path: Path) -> None:
    doc = json.loads(fixture("swe-agent/portalocker-no-file-open.traj").read_text())
    doc["trajectory"].append("not a step")
    path = tmp_path / "x.traj"
    path.write_text(json.dumps(doc))
    with pytest.raises(FormatError, match="trajectory step 3 is not an object"):
        load_runs(path)
    records = [json.loads(line) for line in
               fixture("openhands/legacy-v1.5-output-pairs.jsonl").read_text().splitlines()]
    records.append({"id": "x", "history": "nope"})
    path = tmp_path / "output.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(FormatError, match="line 3"):
        load_runs(path)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["role", "content", "action", "observation", "history",
                                       "trajectory", "messages", "type", "id", "source", "args",
                                       "info", "sessionId", "message", "tool_calls", "extras"]),
                      inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=JSON_VALUES, fmt=st.sampled_from([None, "swe-agent", "mini-swe-agent", "openhands",
                                               "claude-code", "codex", "gemini-cli",
                                               "copilot-cli", "opencode", "pi"]))
def test_arbitrary_json_gives_runs_or_a_format_error(value: object, fmt: str | None,
                                                      tmp_path: Path) -> None:
    path = tmp_path / "any.json"
    path.write_text(json.dumps(value))
    try:
        runs = load_runs(path, fmt)
    except FormatError as exc:
        assert "\n" not in str(exc)
        return
    for run in runs:
        check_protocol(run)


@pytest.mark.slow
def test_cli_reports_each_bad_file_and_goes_on(tmp_path: Path) -> None:
    bad = tmp_path / "empty.json"
    bad.write_bytes(b"")
    unknown = tmp_path / "other.json"
    unknown.write_text('{"hello": 1}')
    good = fixture("mini-swe-agent/bare-list.traj.json")
    out = tmp_path / "store"
    proc = subprocess.run(
        [sys.executable, "-m", "supervisor", "import", str(bad), str(good), str(unknown),
         "-o", str(out)],
        capture_output=True, text=True, env=cli_env(), timeout=60,
    )
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("supervisor: error:")]
    assert errors == [f"supervisor: error: {bad}: empty file",
                      f"supervisor: error: {unknown}: unknown format (JSON object with keys: "
                      "hello); use --format to force one of: swe-agent, mini-swe-agent, "
                      "openhands, claude-code, codex, gemini-cli, copilot-cli, opencode, pi"]
    assert "Traceback" not in proc.stderr
    assert (out / "sessions" / "bare-list" / "events.jsonl").is_file()


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


FIXTURES = sorted(p for p in fixture("").rglob("*") if p.is_file() and p.suffix != ".md")


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_real_files_with_one_value_replaced_never_crash(data: st.DataObject,
                                                        tmp_path: Path) -> None:
    """A recorded file with any one value replaced: valid runs, or one clear error line."""
    source = data.draw(st.sampled_from(FIXTURES))
    text = source.read_text()
    lines = source.suffix == ".jsonl"
    doc = [json.loads(line) for line in text.splitlines()] if lines else json.loads(text)
    where = data.draw(st.sampled_from(_paths(doc)[1:]))
    node = doc
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = data.draw(JSON_VALUES)
    path = tmp_path / source.name
    path.write_text("\n".join(json.dumps(r) for r in doc) if lines else json.dumps(doc))
    try:
        runs = load_runs(path)
    except FormatError as exc:
        assert "\n" not in str(exc)
        return
    for run in runs:
        check_protocol(run)
