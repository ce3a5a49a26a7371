"""The Cline target against the real binary (`cline`, pinned) and a scripted Chat Completions
model: the plugin installed by `supervisor install cline --project WORK` into
`WORK/.cline/plugins/`, the session run in the CLI's own process
(`CLINE_SESSION_BACKEND_MODE=local`, see cline_runner). The scenarios every CLI shares run in
`test_scenarios.py` (`drivers/cline.py`); here, the hub daemon's."""

import json
import time

from tests.agent_cli.cline_runner import Cline
from tests.agent_cli.e2e import (
    ESCALATE_SOON,
    FAILING,
    GUIDANCE,
    SOURCE,
    of_type,
    only_session,
    results_by_call,
)
from tests.agent_cli.plugin_runs import count_client_runs
from tests.agent_cli.script import Script, ToolCall, say, turn

OPERATOR_READS_S = 4.0
"""The operator answers after Cline's 3 s limit on a plugin hook (no person answers faster)."""


def shell(command: str) -> ToolCall:
    return ToolCall("run_commands", {"commands": [command]})


def told(cline: Cline) -> list[str]:
    return [m.text for m in cline.server.tool_messages()]


def test_the_plugin_refuses_a_call_in_clines_hub_daemon(cline: Cline) -> None:
    """By default Cline runs the session, and the plugin, in its hub daemon (started by the
    first run, outliving it): the refusal still reaches the model, and the session is recorded
    in the workspace Cline gave the plugin."""
    cline.use_hub()
    cline.install_hooks()
    cline.server.script = Script(main=[turn(shell(FAILING))] * 4 + [say("Giving up.")])

    run = cline.run("list missing-dir")

    assert run.returncode == 0, run.describe()
    assert cline.hub_pids(), "no hub daemon served the run"
    results = told(cline)
    _session, events = only_session(cline.sandbox)
    assert len(results) == 4 and json.loads(results[3])["error"].startswith(f"{SOURCE}:"), (
        results, [(e.get("kind"), e.get("decision"), e.get("ts")) for e in events],
        run.describe())
    assert events[0]["cwd"] == str(cline.sandbox.work)


def test_the_plugin_asks_the_resident_server_itself(cline: Cline) -> None:
    """No process per step: the plugin sends the steps to the resident server over its socket
    (in node), and runs the hook client only until the server it started is up; every call and
    its result are recorded."""
    cline.install_hooks()
    client_runs = count_client_runs(cline.plugin_path, cline.sandbox.base)
    cline.server.script = Script(
        main=[turn(shell(f"echo {i} > f{i}.txt")) for i in range(4)] + [say("Done.")])

    run = cline.run("write four files")

    assert run.returncode == 0, run.describe()
    assert 1 <= client_runs() <= 3, client_runs()  # 4 calls and their results: 8 steps
    _session, events = only_session(cline.sandbox)
    pairs = results_by_call(events)
    assert len(pairs) == 4 and all(r is not None and r["ok"] for _, r in pairs), pairs


def test_an_escalation_outlasting_clines_hook_limit_waits_for_the_operator_across_calls(
        cline: Cline) -> None:
    """Cline fails a run whose plugin hook takes 3 s, and no operator answers that fast: the
    escalated call is refused as on hold, and so is every call after it (the run goes on), until
    the operator's answer, which the next call brings to the model."""
    cline.sandbox.write_policy(ESCALATE_SOON)
    cline.install_hooks("--timeout", "90")
    meanwhile = [turn(shell(f"echo {i}")) for i in range(40)]  # distinct: no loop of its own
    cline.server.script = Script(main=[turn(shell(FAILING))] * 4 + meanwhile + [say("Done.")])

    # Cline ends a run after 6 failed calls in a row (`--retries`): refused ones count
    running = cline.start("list missing-dir", args=("--retries", "100"))
    session, escalation = cline.sandbox.wait_for_event("escalation", timeout=120)
    time.sleep(OPERATOR_READS_S)
    answered = cline.sandbox.supervisor("answer", session, "--guidance", GUIDANCE)
    run = running.wait()

    assert answered.returncode == 0, answered.stderr
    assert run.returncode == 0, run.describe()
    assert "timed out" not in run.stdout + run.stderr, run.describe()
    results = told(cline)
    assert "on hold" in json.loads(results[3])["error"], results[3]
    assert "on hold" in json.loads(results[4])["error"], results[4]  # the run went on
    assert cline.server.received(GUIDANCE), "the operator's guidance never reached the model"
    applied = of_type(cline.sandbox.events(session), "decision_applied")
    assert [a["escalation_id"] for a in applied] == [escalation["escalation_id"]]
