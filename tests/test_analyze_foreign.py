"""`supervisor analyze` on foreign run files: detection, --format, errors, the summary."""

import json
from pathlib import Path

import pytest

from supervisor.analysis.replay import analyze_events
from supervisor.cli.analyze_summary import CostCounter, run_line, summary
from supervisor.engine.policy_file import load_policy
from supervisor.importers import load_runs
from tests.conftest import run_cli
from tests.importer_helpers import DATA, fixture

LOOPING = fixture("swe-agent/pydicom-1458-edit-retries.traj")
CLEAN = fixture("swe-agent/portalocker-no-file-open.traj")
KEYS = {"session", "source", "steps", "findings", "first"}


@pytest.mark.slow
def test_json_is_one_object_per_run_in_the_engine_shape() -> None:
    pairs = fixture("openhands/legacy-v1.5-output-pairs.jsonl")
    proc = run_cli("analyze", "--json", str(LOOPING), str(pairs))
    assert proc.returncode == 0, proc.stderr
    objects = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["session"] for o in objects] == ["pydicom-1458-edit-retries", "ProntoQA_1",
                                               "ProntoQA_2"]
    assert all(set(o) == KEYS for o in objects)
    assert objects[0]["source"] == str(LOOPING)
    assert objects[1]["source"] == f"{pairs}#ProntoQA_1"
    assert objects[0]["steps"] == 6
    assert objects[0]["first"]["nudge"] is not None  # three identical failing edits
    assert {f["detector"] for f in objects[0]["findings"]} & {"recurring_error", "exact_repeat"}


def test_human_output_has_the_summary_over_runs() -> None:
    proc = run_cli("analyze", str(DATA))
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "Summary of 23 runs" in text
    assert "runs with loops" in text and "steps inside loops" in text
    assert "cost inside loops" in text and "most common loops" in text
    assert "pydicom-1458-edit-retries" in text.split("per run")[-1]


@pytest.mark.slow
def test_broken_and_unknown_files_are_one_line_each_and_the_rest_go_on(tmp_path: Path) -> None:
    broken = tmp_path / "cut.traj"
    broken.write_bytes(LOOPING.read_bytes()[:500])
    unknown = tmp_path / "other.json"
    unknown.write_text('{"hello": "world"}')
    missing = tmp_path / "absent.traj"
    proc = run_cli("analyze", "--json", str(broken), str(LOOPING), str(unknown), str(missing))
    assert proc.returncode == 1
    errors = proc.stderr.splitlines()
    assert len(errors) == 3 and all(e.startswith("supervisor: error: ") for e in errors)
    assert any(str(missing) in e for e in errors)
    assert any(f"{broken}: invalid JSON" in e for e in errors)
    assert any(f"{unknown}: unknown format" in e for e in errors)
    (only,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert only["session"] == "pydicom-1458-edit-retries"


@pytest.mark.slow
def test_format_forcing(tmp_path: Path) -> None:
    renamed = tmp_path / "run.data"
    renamed.write_bytes(CLEAN.read_bytes())
    forced = run_cli("analyze", "--json", "--format", "swe-agent", str(renamed))
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["steps"] == 3
    wrong = run_cli("analyze", "--json", "--format", "openhands", str(CLEAN))
    assert wrong.returncode == 1 and wrong.stdout == ""
    assert wrong.stderr.startswith(f"supervisor: error: {CLEAN}: not an OpenHands run")
    bad = run_cli("analyze", "--format", "aider", str(CLEAN))
    assert bad.returncode == 2 and "unknown format 'aider'" in bad.stderr


@pytest.mark.slow
def test_analyze_imported_sessions_equals_analyze_of_the_files(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert run_cli("import", str(LOOPING), "-o", str(store)).returncode == 0
    direct = json.loads(run_cli("analyze", "--json", str(LOOPING)).stdout)
    stored = json.loads(run_cli("analyze", "--json",
                                str(store / "sessions" / "pydicom-1458-edit-retries")).stdout)
    assert direct["findings"] == stored["findings"] and direct["first"] == stored["first"]


def test_summary_figures() -> None:
    policy = load_policy(None, None)
    lines = []
    for path in (LOOPING, CLEAN, fixture("mini-swe-agent/v1.1-toolcall-timeouts.traj.json"),
                 fixture("openhands/event-stream-vue-todo.json")):
        (run,) = load_runs(path)
        counter = CostCounter(run.events)
        report = analyze_events(counter, policy, session=run.name, source=str(path))
        lines.append(run_line(report, counter.costed))
    figures = summary(lines)
    assert figures["runs"] == 4 and figures["steps"] == 6 + 3 + 3 + 4
    assert figures["runs_with_loops"] == sum(1 for line in lines if line.loop_steps)
    assert figures["loop_steps"] == sum(line.loop_steps for line in lines) > 0
    pydicom = lines[0]
    assert pydicom.estimated  # SWE-agent records only the run's total cost
    assert pydicom.loop_cost == round(1.26719 * pydicom.loop_steps / 6, 6)
    assert not lines[2].estimated  # mini-swe-agent 1.1 records cost per model call
    assert figures["runs_with_cost"] == 3 and lines[3].cost is None
    assert figures["signatures"] and figures["signatures"][0]["runs"] >= 1
    assert all(sig["example"] for sig in figures["signatures"])  # how it was first described


def test_analysis_sources_find_foreign_runs_through_the_plugin_hook() -> None:
    """`supervisor.analysis.sources.load_runs` reads foreign files too (fresh interpreter: the
    importers register themselves when the analysis layer imports them)."""
    import subprocess
    import sys

    from tests.conftest import cli_env

    code = ("from pathlib import Path; from supervisor.analysis.sources import load_runs; "
            f"runs = load_runs(Path({str(DATA)!r})); "
            "print(len(runs), sorted(r.session for r in runs)[0])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=cli_env(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["23", "019b04ae-b1c6-7c72-a134-a4c2de66058c"]


@pytest.mark.slow
def test_analyze_directory_skips_unknown_files_but_not_broken_ones(tmp_path: Path) -> None:
    import shutil

    batch = tmp_path / "batch"
    shutil.copytree(DATA / "swe-agent", batch)
    (batch / "metadata.json").write_text('{"agent_class": "CodeActAgent"}')
    proc = run_cli("analyze", "--json", str(batch))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith(f"supervisor: warning: skipped {batch / 'metadata.json'}")
    assert len(proc.stdout.splitlines()) == 3
    (batch / "cut.traj").write_bytes(LOOPING.read_bytes()[:300])
    proc = run_cli("analyze", "--json", str(batch))
    assert proc.returncode == 1
    assert f"supervisor: error: {batch / 'cut.traj'}: invalid JSON" in proc.stderr
    assert len(proc.stdout.splitlines()) == 3
