"""`supervisor import` through real subprocesses: sessions on disk that `validate` accepts."""

import json
import shutil
from pathlib import Path

from tests.conftest import run_cli
from tests.importer_helpers import DATA, fixture


def read_events(root: Path, name: str) -> list[dict]:
    path = root / "sessions" / name / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_import_every_fixture_then_validate(tmp_path: Path) -> None:
    out = tmp_path / "store"
    proc = run_cli("import", str(DATA), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    sessions = sorted(p.name for p in (out / "sessions").iterdir())
    assert "ProntoQA_1" in sessions and "ProntoQA_2" in sessions
    assert "pydicom-1458-edit-retries" in sessions
    assert len(sessions) == 15
    assert proc.stdout.splitlines()[-1] == f"imported 15 runs from 14 files into {out}"
    check = run_cli("validate", *[str(out / "sessions" / s) for s in sessions])
    assert check.returncode == 0, check.stdout
    assert " 0 bad lines" in check.stdout and "bad lines" in check.stdout
    events = read_events(out, "pydicom-1458-edit-retries")
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["type"] == "session_start" and events[0]["agent"] == "swe-agent"
    assert (out / "sessions").stat().st_mode & 0o777 == 0o700
    listing = run_cli("sessions", "--root", str(out))
    assert "pydicom-1458-edit-retries" in listing.stdout


def test_import_refuses_to_overwrite_unless_replace(tmp_path: Path) -> None:
    out = tmp_path / "store"
    source = fixture("swe-agent/portalocker-no-file-open.traj")
    assert run_cli("import", str(source), "-o", str(out)).returncode == 0
    before = read_events(out, "portalocker-no-file-open")
    again = run_cli("import", str(source), "-o", str(out))
    assert again.returncode == 1
    assert "already exists" in again.stderr and "--replace" in again.stderr
    assert read_events(out, "portalocker-no-file-open") == before
    replaced = run_cli("import", "--replace", str(source), "-o", str(out))
    assert replaced.returncode == 0, replaced.stderr
    assert len(read_events(out, "portalocker-no-file-open")) == len(before)


def test_same_name_twice_in_one_import_gets_a_suffix(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(fixture("mini-swe-agent/v1-object.traj.json"), copy / "a.traj.json")
    shutil.copy(fixture("mini-swe-agent/v1-object.traj.json"), copy / "b.traj.json")
    out = tmp_path / "store"
    proc = run_cli("import", str(copy / "a.traj.json"), str(copy / "b.traj.json"),
                   "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in (out / "sessions").iterdir())
    assert names == ["swe-agent__test-repo-i1", "swe-agent__test-repo-i1-2"]


def test_forced_format_and_wrong_forced_format(tmp_path: Path) -> None:
    out = tmp_path / "store"
    source = fixture("openhands/event-stream-vue-todo.json")
    ok = run_cli("import", "--format", "openhands", str(source), "-o", str(out))
    assert ok.returncode == 0, ok.stderr
    wrong = run_cli("import", "--format", "swe-agent", str(source), "-o", str(tmp_path / "o2"))
    assert wrong.returncode == 1
    assert wrong.stderr.splitlines()[0] == (
        f"supervisor: error: {source}: not a SWE-agent trajectory (needs an object with "
        "'trajectory' steps)")
    unknown = run_cli("import", "--format", "nope", str(source), "-o", str(out))
    assert unknown.returncode == 2 and "invalid choice" in unknown.stderr
