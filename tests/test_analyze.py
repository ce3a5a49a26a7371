"""`supervisor analyze`: replay through the real CLI, the JSON shape, tables, sources, quality."""

import json
import re
from pathlib import Path

import pytest

from supervisor.analysis.evaluate import evaluate
from supervisor.analysis.replay import analyze_events
from supervisor.analysis.sources import Run, SourceError, load_runs, register_loader
from supervisor.engine import Policy
from tests.conftest import run_cli, run_cli_in_terminal
from tests.engine_helpers import SessionBuilder

DEVSET = Path(__file__).parent / "data" / "devset"


def _write(path: Path, events: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def _loop_session() -> list[dict]:
    b = SessionBuilder()
    b.call("Read", {"file_path": "/r/a.py"}, "A = 1", cost=0.01)
    for _ in range(5):
        b.call("Bash", {"command": "python a.py"}, "NameError: name 'x' is not defined",
               ok=False, cost=0.02)
    return b.end()


@pytest.mark.slow
def test_analyze_json_shape_through_the_cli(tmp_path: Path) -> None:
    session = _write(tmp_path / "store" / "sessions" / "s-1" / "events.jsonl", _loop_session())
    clean = SessionBuilder()
    clean.call("Read", {"file_path": "/r/b.py"}, "B = 2")
    other = _write(tmp_path / "clean.jsonl", clean.end())
    out = run_cli("analyze", str(session.parent), str(other), "--json")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(lines) == 2
    first, second = lines
    assert list(first) == ["session", "source", "steps", "findings", "first"]
    assert first["session"] == "s-1" and first["source"] == str(session)
    assert first["steps"] == 6
    assert list(first["first"]) == ["nudge", "block", "escalate", "stop"]
    assert first["first"]["nudge"] == 3 and first["first"]["block"] == 4
    finding = first["findings"][0]
    assert list(finding) == ["step", "seq", "detector", "level", "action", "message",
                             "confidence", "basis"]
    assert finding["confidence"] == "strong" and "identical calls" in finding["basis"]
    assert finding["detector"] == "exact_repeat" and finding["action"] == "nudge"
    assert second == {"session": "clean", "source": str(other), "steps": 1, "findings": [],
                      "first": {"nudge": None, "block": None, "escalate": None, "stop": None}}


@pytest.mark.slow
def test_analyze_table_and_store_root(tmp_path: Path) -> None:
    root = tmp_path / "store"
    _write(root / "sessions" / "s-1" / "events.jsonl", _loop_session())
    b = SessionBuilder()
    b.call("Bash", {"command": "echo \x1b]0;pwned\x07hi"}, "hi")
    _write(root / "sessions" / "s-2" / "events.jsonl", b.end())
    out = run_cli("analyze", str(root), "--profile", "seed-strict")
    assert out.returncode == 0, out.stderr
    assert "s-1" in out.stdout and "s-2" in out.stdout
    assert "exact_repeat" in out.stdout and "stop" in out.stdout
    assert "\x1b" not in out.stdout


def test_a_path_without_runs_says_what_it_is(tmp_path: Path) -> None:
    """An empty store root and an empty folder were "not a protocol file, session directory
    or known run format", and a session's control file an unknown format to force with
    --format: each is said as what it is."""
    (tmp_path / "store" / "sessions").mkdir(parents=True)
    with pytest.raises(SourceError, match=r"store: a store root with no sessions in it$"):
        load_runs(tmp_path / "store")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match=r"empty: an empty folder$"):
        load_runs(tmp_path / "empty")
    control = _write(tmp_path / "s1" / "control.jsonl", [{"v": 1, "seq": 1, "ts": 1.0,
                                                         "type": "decision", "action": "skip"}])
    with pytest.raises(SourceError, match=re.escape(
            "the operators' decisions of a session, not its run: analyze its folder or its "
            "events.jsonl")):
        load_runs(control)


@pytest.mark.slow
def test_analyze_of_a_store_without_sessions_says_so(tmp_path: Path) -> None:
    (tmp_path / "sessions").mkdir()
    out = run_cli("analyze", "--store", str(tmp_path))
    assert (out.returncode, out.stdout) == (0, "")
    assert out.stderr == f"supervisor: warning: no sessions in root {tmp_path}\n"
    out = run_cli("analyze", "--store", str(tmp_path / "typo"))
    assert out.stderr.endswith(f"no sessions in root {tmp_path / 'typo'} (it does not exist)\n")


@pytest.mark.slow
def test_analyze_reports_bad_lines_and_errors(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", _loop_session())
    with path.open("a") as fh:
        fh.write("{not json\n")
    out = run_cli("analyze", str(path), "--json")
    assert out.returncode == 0
    assert json.loads(out.stdout)["steps"] == 6
    assert "bad line" in out.stderr
    missing = run_cli("analyze", str(tmp_path / "nope"))
    assert missing.returncode == 1 and "no such file" in missing.stderr
    (tmp_path / "x.txt").write_text("hello")
    unknown = run_cli("analyze", str(tmp_path / "x.txt"))
    assert unknown.returncode == 1 and str(tmp_path / "x.txt") in unknown.stderr
    (tmp_path / "p.toml").write_text("[detectors]\nfoo = 1\n")
    bad = run_cli("analyze", str(path), "--policy", str(tmp_path / "p.toml"))
    assert bad.returncode == 2 and "unknown" in bad.stderr and "Traceback" not in bad.stderr


def test_run_report_totals() -> None:
    report = analyze_events(_loop_session(), Policy.profile("default"), session="s", source="x")
    assert report.steps == 6
    assert report.cost_usd == pytest.approx(0.11)
    assert report.tokens == 6 * 1100
    assert report.loop_steps == 5  # every repeat of the failing command
    assert report.loop_cost_usd == pytest.approx(0.10)
    assert report.signatures[0]["detector"] == "exact_repeat"
    assert report.signatures[0]["steps"] == 5
    full = report.to_dict()
    assert full["loop_steps"] == 5 and "signatures" in full


def test_recorded_decisions_are_replayed() -> None:
    events = _loop_session()
    events.insert(-3, {"v": 1, "seq": 999, "ts": events[-4]["ts"], "type": "decision_applied",
                       "escalation_id": None, "decision_id": "d1", "action": "skip",
                       "outcome": "task skipped"})
    report = analyze_events(events, Policy.profile("default"), session="s", source="x")
    assert report.first["escalate"] is None


def test_registered_loaders_are_used(tmp_path: Path) -> None:
    fmt = tmp_path / "run.custom"
    fmt.write_text("3")

    def loader(path: Path) -> list[Run] | None:
        if path.suffix != ".custom":
            return None
        b = SessionBuilder()
        for _ in range(int(path.read_text())):
            b.call("Bash", {"command": "false"}, "", ok=False)
        return [Run("custom", str(path), b.end())]

    register_loader("test-custom", loader)
    runs = load_runs(tmp_path)
    assert [r.session for r in runs] == ["custom"]
    with pytest.raises(SourceError):
        load_runs(tmp_path / "missing")


@pytest.mark.slow
def test_devset_quality_default_profile() -> None:
    """Every detector on its synthetic loops and traps (the dev set is the detectors' unit
    test, not the quality figure: that is the labelled corpus, benchmarks/bench_quality.py):
    recall > 95 %, false alarms < 5 %, detection within two steps (median). `error_rate` is off
    by default, so only its own loops go unseen without it."""
    default = evaluate(DEVSET / "labels.json", Policy.profile("default"))
    assert {r.kind for r in default.loops if not r.detected} <= {"error_rate"}
    score = evaluate(DEVSET / "labels.json",
                     Policy.from_dict({"detectors": {"error_rate": {"enabled": True}}}))
    assert len(score.loops) >= 30 and len(score.clean) >= 30
    missed = [r.name for r in score.loops if not r.detected]
    alarms = [(r.name, r.detector) for r in score.clean if r.false_alarm]
    assert score.recall > 0.95, missed
    assert score.false_alarm_rate < 0.05, alarms
    assert score.median_delay is not None and score.median_delay <= 2


@pytest.mark.slow
def test_analyze_says_which_hard_limit_stopped_the_recorded_session(tmp_path: Path) -> None:
    """A session a hard limit ended is not "no loop found" and nothing else: the table names
    the limit, its value and its bound, as recorded (the replay's policy may not reach it)."""
    b = SessionBuilder()
    b.call("Read", {"file_path": "/r/a.py"}, "A = 1")
    events = b.end()
    end = events.pop()
    seq = max(e["seq"] for e in events) + 1
    events.append({"v": 1, "seq": seq, "ts": end["ts"], "type": "limit",
                   "name": "iterations_per_session", "value": 41, "limit": 40.0,
                   "action": "stop"})
    events.append({**end, "seq": seq + 1})
    path = _write(tmp_path / "limit.jsonl", events)
    out = run_cli("analyze", str(path))
    assert out.returncode == 0, out.stderr
    assert "no loop found" in out.stdout
    assert (f"stopped (as recorded) by the hard limit iterations_per_session: 41 of 40 at #{seq}"
            in out.stdout)
    report = analyze_events(events, Policy.profile("default"), session="s", source="x")
    assert report.to_dict()["stopped_by"] == {"name": "iterations_per_session", "value": 41,
                                              "limit": 40.0, "seq": seq}


@pytest.mark.slow
def test_analyze_fits_an_80_column_terminal() -> None:
    """Every line of the tables (header, limit line, findings, loops, per-run rows) fits in 80
    columns on a terminal, cut with `…` rather than wrapped into a wall."""
    samples = Path(__file__).parent.parent / "sample_sessions" / "sessions"
    out = run_cli_in_terminal("analyze", str(samples / "similar-calls-guidance"),
                         str(samples / "hard-limit-stop"), str(samples / "no-progress-abort"),
                         "--profile", "seed-strict", columns=80)
    lines = out.splitlines()
    assert any("most common loops" in line for line in lines)
    assert any("per run" in line for line in lines)
    assert any(line.startswith("similar-calls-guidance  (") for line in lines)
    assert any("…" in line for line in lines)
    too_wide = [line for line in lines if len(line) >= 80]
    assert not too_wide, too_wide


def test_a_store_root_is_its_sessions_not_the_failure_memory_beside_them(
        root: Path, tmp_path: Path) -> None:
    """`supervisor analyze ROOT` on a root whose guard had learned from a failure warned
    "skipped ROOT/memory/….jsonl: unknown format" for each project's notes: they are the
    store's own, not runs. Only the sessions are read, and nothing is said of the rest."""
    import subprocess as sp

    from supervisor.guard.core import Guard
    from supervisor.guard.settings import GuardSettings

    repo = tmp_path / "repo"
    repo.mkdir()
    sp.run(["git", "init", "-q", str(repo)], check=True)
    sp.run(["git", "-C", str(repo), "remote", "add", "origin",
            "https://example.com/acme/widget.git"], check=True)
    clock = iter(range(1_800_000_000, 1_800_000_100))
    with Guard.open(root, "s1", cwd=repo, clock=lambda: float(next(clock)),
                    settings=GuardSettings(checkpoints=False)) as guard:
        guard.start("test")
        for n, (command, output, ok) in enumerate([
                ("python manage.py test", "bash: python: command not found", False),
                ("python3 manage.py test", "Ran 3 tests\nOK", True)]):
            guard.pre_call("Bash", {"command": command}, call_id=f"c{n}")
            guard.post_call(f"c{n}", output, ok=ok)
    assert list((root / "memory").glob("*.jsonl")), "the guard learned the failure"
    out = run_cli("analyze", str(root))
    assert out.returncode == 0, out.stderr
    assert out.stderr == "" and "s1" in out.stdout
    assert [r.session for r in load_runs(root)] == ["s1"]
