"""`supervisor import` through real subprocesses: sessions on disk that `validate` accepts."""

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.importer_helpers import DATA, fixture


def read_events(root: Path, name: str) -> list[dict]:
    path = root / "sessions" / name / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_import_every_fixture_then_validate(tmp_path: Path) -> None:
    out = tmp_path / "store"
    proc = run_cli("import", str(DATA), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    sessions = sorted(p.name for p in (out / "sessions").iterdir())
    assert "ProntoQA_1" in sessions and "ProntoQA_2" in sessions
    assert "pydicom-1458-edit-retries" in sessions
    assert len(sessions) == 23
    assert proc.stdout.splitlines()[-1] == f"imported 23 runs from 22 files into {out}"
    check = run_cli("validate", *[str(out / "sessions" / s) for s in sessions])
    assert check.returncode == 0, check.stdout
    assert " 0 bad lines" in check.stdout and "bad lines" in check.stdout
    events = read_events(out, "pydicom-1458-edit-retries")
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["type"] == "session_start" and events[0]["agent"] == "swe-agent"
    assert (out / "sessions").stat().st_mode & 0o777 == 0o700
    listing = run_cli("sessions", "--root", str(out))
    assert "pydicom-1458-edit-retries" in listing.stdout


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_directory_import_skips_our_own_session_files(tmp_path: Path) -> None:
    mixed = tmp_path / "runs"
    shutil.copytree(DATA / "swe-agent", mixed)
    first = tmp_path / "store"
    assert run_cli("import", str(mixed), "-o", str(first)).returncode == 0
    shutil.copytree(first / "sessions", mixed / "already-imported")
    out = tmp_path / "store2"
    proc = run_cli("import", str(mixed), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert len(list((out / "sessions").iterdir())) == 3


@pytest.mark.slow
def test_unknown_files_found_in_a_directory_are_skipped_with_a_warning(tmp_path: Path) -> None:
    batch = tmp_path / "batch"
    shutil.copytree(DATA / "mini-swe-agent", batch)
    (batch / "preds.json").write_text('{"i1": {"instance_id": "i1", "model_patch": ""}}')
    out = tmp_path / "store"
    proc = run_cli("import", str(batch), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        f"supervisor: warning: skipped {batch / 'preds.json'}: unknown format (JSON object with "
        "keys: i1); use --format to force one of: swe-agent, mini-swe-agent, openhands, "
        "claude-code, codex, gemini-cli, copilot-cli, opencode, pi"]
    assert len(list((out / "sessions").iterdir())) == 4
    (batch / "cut.traj.json").write_text('{"messages": [')  # a broken run file is an error
    proc = run_cli("import", str(batch), "-o", str(tmp_path / "store2"))
    assert proc.returncode == 1
    assert f"supervisor: error: {batch / 'cut.traj.json'}: invalid JSON" in proc.stderr
    named = run_cli("import", str(batch / "preds.json"), "-o", str(tmp_path / "store3"))
    assert named.returncode == 1 and "supervisor: error: " in named.stderr


@pytest.mark.slow
def test_openhands_session_directories_are_one_run_each(tmp_path: Path) -> None:
    sessions = tmp_path / "openhands-sessions"
    for sid in ("s1", "s2"):
        events_dir = sessions / sid / "events"
        events_dir.mkdir(parents=True)
        for event in json.loads(fixture("openhands/event-stream-vue-todo.json").read_text()):
            (events_dir / f"{event['id']}.json").write_text(json.dumps(event))
    out = tmp_path / "store"
    proc = run_cli("import", str(sessions), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (out / "sessions").iterdir()) == ["s1", "s2"]
    analyzed = run_cli("analyze", "--json", str(sessions))
    assert [json.loads(line)["session"] for line in analyzed.stdout.splitlines()] == ["s1", "s2"]


@pytest.mark.slow
def test_import_detect_records_what_the_engine_saw(tmp_path: Path) -> None:
    """`--detect`: the engine's detections and verdicts are in the session, marked replayed,
    numbered so their evidence names the failing calls; `analyze` of the written session finds
    exactly what it records; the dashboard's model shows them, and the run ends as recorded
    (no escalation: nobody was asked, nothing waits in the queue)."""
    from supervisor.store.follower import Follower
    from supervisor.tui.model import DashboardModel

    out = tmp_path / "store"
    source = fixture("swe-agent/pydicom-1458-edit-retries.traj")
    proc = run_cli("import", "--detect", str(source), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    events = read_events(out, "pydicom-1458-edit-retries")
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    by_seq = {e["seq"]: e for e in events}
    added = [e for e in events if e.get("replayed")]
    assert {e["type"] for e in added} <= {"detection", "verdict", "limit"}
    assert not any(e["type"] == "escalation" for e in events)
    calls = [e for e in events if e["type"] == "tool_call"]
    verdicts = [e for e in events if e["type"] == "verdict"]
    assert [v["call_id"] for v in verdicts] == [c["call_id"] for c in calls]  # one per call
    detections = [e for e in events if e["type"] == "detection"]
    assert detections and all(e.get("replayed") for e in detections)
    assert any(v["action"] == "block" for v in verdicts)
    for d in detections:  # evidence names the run's own calls and results
        assert d["evidence"] and all(by_seq[s]["type"] in ("tool_call", "tool_result")
                                     and not by_seq[s].get("replayed") for s in d["evidence"])
    found = run_cli("analyze", "--json", str(out / "sessions" / "pydicom-1458-edit-retries"))
    assert found.returncode == 0, found.stderr
    findings = json.loads(found.stdout)["findings"]
    recorded = [(d["detector"], d["level"]) for d in detections]
    assert [(f["detector"], f["level"]) for f in findings
            if not f["detector"].startswith("limit:")] == recorded
    for f in findings:  # each finding's event is followed by the detection it recorded
        after = [e for e in events if e["seq"] > f["seq"] and e.get("replayed")]
        assert any(e["type"] == "detection" and e["detector"] == f["detector"]
                   for e in after[:8])
    model = DashboardModel(out)
    model.apply(Follower(out).scan())
    st = model.sessions["pydicom-1458-edit-retries"]
    assert [(d.detector, d.level) for d in st.detections] == recorded
    assert [d.evidence for d in st.detections] == [d["evidence"] for d in detections]
    assert model.status("pydicom-1458-edit-retries", 2e9) == "completed"  # as recorded
    assert model.queue(2e9) == [] and model.stale(2e9) == []


@pytest.mark.slow
def test_import_without_detect_records_no_engine_events(tmp_path: Path) -> None:
    out = tmp_path / "store"
    source = fixture("swe-agent/pydicom-1458-edit-retries.traj")
    assert run_cli("import", str(source), "-o", str(out)).returncode == 0
    events = read_events(out, "pydicom-1458-edit-retries")
    assert not any(e["type"] in ("detection", "verdict") or e.get("replayed") for e in events)
    bad = run_cli("import", "--profile", "default", str(source), "-o", str(tmp_path / "x"))
    assert bad.returncode == 2 and bad.stderr.startswith("supervisor: error: ")
    assert "--detect" in bad.stderr


@pytest.mark.filterwarnings("error::ResourceWarning",
                            "error::pytest.PytestUnraisableExceptionWarning")
def test_every_imported_runs_spool_is_closed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's events wait in a spool (a temporary file once the run outgrows memory): import,
    the replay of `--detect` and `load_runs` (analyze, the dashboard's open) close it when the
    run is taken, so no file is left to the garbage collector (a `ResourceWarning`, an error
    here). The spool is made to spill to disk, as a long run's does."""
    from supervisor.cli import main
    from supervisor.importers import base, load_runs

    monkeypatch.setattr(base, "SPOOL_MEMORY", 64)
    source = fixture("codex/rollout-myapp-hoge.jsonl")
    assert main(["import", str(source), "-o", str(tmp_path / "a")]) == 0
    assert main(["import", "--detect", str(source), "-o", str(tmp_path / "b")]) == 0
    (run,) = load_runs(source)
    assert run.steps == 5
    assert "imported 1 runs" in capsys.readouterr().out


@pytest.mark.slow
def test_a_pi_session_file_imports_and_analyzes(tmp_path: Path) -> None:
    """A real (cut) Oh My Pi session through `supervisor import` and `analyze`, detected by
    its content: the store's session validates and reads back as Pi's steps."""
    source = fixture("pi/ohmypi-preloop-dbb9327f.jsonl")
    out = tmp_path / "store"
    proc = run_cli("import", str(source), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    name = "01a0169f-6726-7000-8972-4a9019c2c76d"
    check = run_cli("validate", str(out / "sessions" / name))
    assert check.returncode == 0, check.stdout
    events = read_events(out, name)
    assert events[0]["agent"] == "pi" and events[0]["imported"]["format"] == "pi"
    (result,) = [e for e in events if e["type"] == "tool_result"]
    assert (result["ok"], result["error"]) == (False, "Exit code 1")
    report = run_cli("analyze", str(source), "--json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["steps"] == 1
