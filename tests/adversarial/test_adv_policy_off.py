"""A policy that silently switches supervision off is shown to the operator (issue 24, "not yet
tried"): every detector off or out of reach (thresholds of 10^9) and hard limits of 10^9 is a
valid policy, and nothing said so. Now `policy show` warns, the session records the warning as
a system message when it starts (the dashboard shows it with the session), and `sessions`
lists it. The real command line and the real hook."""

import json
from pathlib import Path

import pytest

from supervisor.engine.detectors import REGISTRY
from tests.conftest import run_cli
from tests.hook_helpers import events, payload, run_hook


def _silencing_policy(path: Path) -> Path:
    lines = []
    for i, detector in enumerate(REGISTRY):
        lines.append(f"[detectors.{detector.name}]")
        # some switched off, the others set out of reach: both are "off"
        reach = [k for k in ("nudge", "block", "escalate") if k in detector.defaults]
        lines.append("enabled = false" if i % 2 or not reach else
                     "\n".join(f"{k} = 1000000000" for k in reach))
    for limit in ("iterations_per_session", "errors_per_session", "tokens"):
        lines.append(f"[limits.{limit}]\nlimit = 1000000000")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
def test_policy_show_warns(tmp_path: Path) -> None:
    policy = _silencing_policy(tmp_path / "quiet.toml")
    done = run_cli("policy", "show", "--policy", str(policy))
    assert done.returncode == 0, done.stderr
    assert "warning: this policy leaves agents unsupervised: loop detection is off" \
        in done.stderr
    assert "hard limits out of reach" in done.stderr
    plain = run_cli("policy", "show")
    assert "warning" not in plain.stderr  # the default profile says nothing


@pytest.mark.slow
def test_a_session_under_it_shows_the_warning(tmp_path: Path) -> None:
    policy = _silencing_policy(tmp_path / "quiet.toml")
    root, ws = tmp_path / "store", tmp_path / "ws"
    ws.mkdir()
    done = run_hook(payload("SessionStart", cwd=ws, source="startup"), root)
    assert done.returncode == 0
    (root / "policy.toml").write_text(policy.read_text())  # the root's policy file
    done = run_hook(payload("SessionStart", session="quiet-1", cwd=ws, source="startup"), root)
    assert done.returncode == 0, done.stderr
    told = [e["text"] for e in events(root, "quiet-1") if e["type"] == "message"]
    assert any("leaves the agent unsupervised: loop detection is off" in t for t in told), told
    assert not any("unsupervised" in e.get("text", "") for e in events(root, "loop-1"))
    listed = run_cli("sessions", "--root", str(root))
    assert "warning: quiet-1: loop detection is off" in listed.stdout
    assert "loop-1: " not in listed.stdout
    rows = [json.loads(x) for x in run_cli("sessions", "--root", str(root), "--json")
            .stdout.splitlines()]
    quiet = next(r for r in rows if r["session"] == "quiet-1")
    assert quiet["policy_warnings"] and not next(
        r for r in rows if r["session"] == "loop-1")["policy_warnings"]
