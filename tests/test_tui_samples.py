"""The shipped recordings and the long-session generator: coverage, determinism, 20k events."""

import filecmp
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
    assert max(g.ratio for g in hard.gauges()) == 1.0
    assert len(model.sessions["malformed-lines"].bad_lines) == 5
    assert model.queue(FROZEN_NOW) and model.queue(FROZEN_NOW)[0][0] == "waiting-for-operator"


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
