"""The Cline target against the real binary (`cline`, pinned) and a scripted Chat Completions
model: the plugin installed by `supervisor install cline --project WORK` into
`WORK/.cline/plugins/`, the session run in the CLI's own process
(`CLINE_SESSION_BACKEND_MODE=local`, see cline_runner). The scenarios every CLI shares run in
`test_scenarios.py` (`drivers/cline.py`); here, the hub daemon's."""

import json

from tests.agent_cli.cline_runner import Cline
from tests.agent_cli.e2e import (
    FAILING,
    SOURCE,
    only_session,
    results_by_call,
)
from tests.agent_cli.plugin_runs import count_client_runs
from tests.agent_cli.script import Script, ToolCall, say, turn


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
    assert len(results) == 4 and json.loads(results[3])["error"].startswith(f"{SOURCE}:")
    _session, events = only_session(cline.sandbox)
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
