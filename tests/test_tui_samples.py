"""The shipped recordings and the long-session generator: coverage, determinism, 20k events, and
`supervisor analyze` of each recording finding exactly what the guard and engine recorded."""

import filecmp
import json
import subprocess
import sys
from pathlib import Path

import pytest
from tui_support import FROZEN_NOW, REPO, load, make_app

from supervisor.engine.policy import Policy
from supervisor.store.follower import Follower
from supervisor.tui.model import DashboardModel
from supervisor.tui.widgets.history_view import HistoryView

SAMPLES = REPO / "sample_sessions"
GENERATE = SAMPLES / "generate.py"


def _fold(root: Path) -> DashboardModel:
    model = DashboardModel(root)
    follower = Follower(root)
    model.apply(follower.scan())
    return model


@pytest.mark.slow
def test_recordings_are_what_the_generator_writes(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(GENERATE), "--out", str(tmp_path)], check=True,
                   capture_output=True)
    ours = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.jsonl"))
    shipped = sorted(p.relative_to(SAMPLES) for p in (SAMPLES / "sessions").rglob("*.jsonl"))
    assert ours == shipped
    _, mismatch, errors = filecmp.cmpfiles(tmp_path, SAMPLES, [str(p) for p in ours],
                                           shallow=False)
    assert mismatch == [] and errors == []


def test_recordings_cover_every_detector_decision_and_ending() -> None:
    model = _fold(SAMPLES)
    detectors = {d.detector for st in model.sessions.values() for d in st.detections}
    assert set(Policy.profile("default").data["detectors"]) <= detectors
    applied = {o.action for st in model.sessions.values() for o in st.outcomes.values()
               if o.state == "applied"}
    assert {"approve", "guidance", "rollback", "skip", "abort", "pause", "reset"} <= applied
    assert any(o.state == "ignored" for st in model.sessions.values()
               for o in st.outcomes.values())
    assert any(o.decision_id == "fallback" for st in model.sessions.values()
               for o in st.outcomes.values())
    hard = model.sessions["hard-limit-stop"]
    assert hard.summary.end_status == "terminated" and hard.summary.level == 4
    assert max(g.ratio for g in hard.gauges()) >= 1.0  # the limit was reached
    assert len(model.sessions["malformed-lines"].bad_lines) == 5
    assert model.queue(FROZEN_NOW) and model.queue(FROZEN_NOW)[0][0] == "waiting-for-operator"


def _recorded(path: Path) -> tuple[dict, list[tuple]]:
    """The session_start and, in order, what the engine said: each detection (detector, level,
    message, evidence) and each hard limit reached (not a limit's warning: that is the guard's
    notice to the operator, which no replay sends)."""
    events = []
    for line in path.read_bytes().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # malformed-lines' broken lines
        if isinstance(event, dict) and isinstance(event.get("seq"), int):
            events.append(event)
    said = [(e["detector"], e["level"], e["message"]) if e["type"] == "detection"
            else (f"limit:{e['name']}",) for e in events if e["type"] == "detection"
            or (e["type"] == "limit" and e["action"] != "warn")]
    return events[0], said


@pytest.mark.slow
@pytest.mark.parametrize("session", sorted(p.name for p in (SAMPLES / "sessions").iterdir()))
def test_analyze_of_each_recording_finds_what_it_shows(session: str, tmp_path: Path) -> None:
    """The recordings are the real guard's and engine's: replayed offline under the policy the
    session recorded, `supervisor analyze` finds the same detections with the same messages
    (and the same #seq references in them), in the same order, and the same hard limits."""
    from supervisor.engine.policy_file import toml_text
    from tests.conftest import run_cli

    start, said = _recorded(SAMPLES / "sessions" / session / "events.jsonl")
    assert start["type"] == "session_start" and start["policy"]
    policy = tmp_path / "policy.toml"
    policy.write_text(toml_text(start["policy"]))
    proc = run_cli("analyze", "--json", "--policy", str(policy),
                   str(SAMPLES / "sessions" / session))
    assert proc.returncode == 0, proc.stderr
    found = [(f["detector"],) if f["detector"].startswith("limit:")
             else (f["detector"], f["level"], f["message"])
             for f in json.loads(proc.stdout)["findings"]]
    assert found == said


@pytest.mark.slow
@pytest.mark.anyio
async def test_long_generated_session_scrolls_and_searches(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(GENERATE), "--long", "20000", "--out",
                          str(tmp_path)], check=True, capture_output=True, text=True)
    path = Path(out.stdout.strip())
    assert path.read_bytes().count(b"\n") >= 20000
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        await pilot.press("enter")
        await pilot.pause()
        history = app.screen.query_one(HistoryView)
        assert history.row_count >= 20000 and history.follow
        assert "session_end" in history.render_line(history.size.height - 1).text or any(
            "session_end" in history.render_line(y).text for y in range(history.size.height))
        await pilot.press("home")
        await pilot.pause()
        assert "session_start" in history.render_line(0).text
        await pilot.press("slash", *"Step 990:", "enter")
        await pilot.pause()
        row = history.store.row(history.store_index(history.cursor))
        assert row.type == "message" and "Step 990:" in row.text


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
