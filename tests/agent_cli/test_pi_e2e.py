"""The Pi target against the real binary (`@mariozechner/pi-coding-agent`, pinned) and a
scripted Chat Completions model: the extension installed by `supervisor install pi --project
WORK` into `WORK/.pi/extensions/`. The scenarios every CLI shares run in `test_scenarios.py`
(`drivers/pi.py`); here, what only the extension does: it fails open, it talks to the resident
server itself, and a server killed mid-session leaves the next calls supervised."""

import os
import signal
from collections.abc import Iterator

import pytest

from tests.agent_cli.drivers.pi import Pi
from tests.agent_cli.e2e import FAILING, SOURCE, only_session, results_by_call
from tests.agent_cli.plugin_runs import count_client_runs
from tests.agent_cli.script import Script, ToolCall, say, turn
from tests.hookd_helpers import server_pids, stop_servers


def shell(command: str) -> ToolCall:
    return ToolCall("bash", {"command": command})


@pytest.fixture(autouse=True)
def _no_servers_left(sandbox) -> Iterator[None]:  # type: ignore[no-untyped-def]
    yield
    stop_servers(sandbox.store)


def test_an_extension_that_cannot_reach_the_supervisor_lets_the_agent_work(pi: Pi) -> None:
    """Fail open: Pi blocks a call whose `tool_call` handler throws, so the extension never
    throws; with the hook client gone (and no server), every call runs as without it."""
    pi.install_hooks()
    text = pi.plugin_path.read_text()
    start = text.index("const HOOK = ")
    end = text.index("\n", start)
    gone = pi.sandbox.base / "no-such-hook-client"
    pi.plugin_path.write_text(f'{text[:start]}const HOOK = ["{gone}"];{text[end:]}')
    pi.server.script = Script(main=[turn(shell("echo hello > x.txt")), say("Wrote it.")])

    run = pi.run("write x.txt")

    assert run.returncode == 0, run.describe()
    assert (pi.sandbox.work / "x.txt").read_text() == "hello\n"
    (result,) = [m.text for m in pi.server.tool_messages()]
    assert SOURCE not in result, result
    assert not pi.sandbox.sessions()


def test_the_extension_asks_the_resident_server_itself(pi: Pi) -> None:
    """No process per step: the extension sends the steps to the resident server over its
    socket (in node), and runs the hook client only until the server it started is up; every
    call and its result are recorded."""
    pi.install_hooks()
    client_runs = count_client_runs(pi.plugin_path, pi.sandbox.base)
    pi.server.script = Script(
        main=[turn(shell(f"echo {i} > f{i}.txt")) for i in range(4)] + [say("Done.")])

    run = pi.run("write four files")

    assert run.returncode == 0, run.describe()
    assert 1 <= client_runs() <= 3, client_runs()  # session start, 4 calls, results: 10 steps
    _session, events = only_session(pi.sandbox)
    pairs = results_by_call(events)
    assert len(pairs) == 4 and all(r is not None and r["ok"] for _, r in pairs), pairs


def test_a_server_killed_mid_session_leaves_the_next_calls_supervised(pi: Pi) -> None:
    """The resident server is killed while the agent's first call runs; the extension's next
    step finds no server, runs the hook client (which starts one), and the repeated failing
    command that follows is still refused by its 4th attempt, its reason reaching the model."""
    pi.install_hooks()
    wait = shell("while [ ! -e go ]; do sleep 0.1; done")
    pi.server.script = Script(main=[turn(wait)] + [turn(shell(FAILING))] * 4
                              + [say("Giving up.")])

    running = pi.start("list missing-dir")
    pi.sandbox.wait_for_event("tool_call", timeout=120)
    killed = server_pids(pi.sandbox.store)
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    (pi.sandbox.work / "go").touch()
    run = running.wait()

    assert killed and run.returncode == 0, run.describe()
    told = [m.text for m in pi.server.tool_messages()]
    assert len(told) == 5 and told[4].startswith(f"{SOURCE}:"), told
    assert set(server_pids(pi.sandbox.store)) - set(killed), "no server was started again"
    _session, events = only_session(pi.sandbox)
    pairs = results_by_call(events)
    assert [c["args"]["command"] for c, _ in pairs][1:] == [FAILING] * 4
    assert all(r is not None for _, r in pairs[:4]) and pairs[4][1] is None, pairs
