"""The OpenCode and Kilo targets against the real binaries (`opencode-ai`, `@kilocode/cli`,
pinned) and a scripted Chat Completions model.

The plugin is installed by `supervisor install opencode|kilo --project WORK` into the work dir's
plugin folder. The scenarios every CLI shares run in `test_scenarios.py` (`drivers/opencode.py`,
for both); here, what only the plugin does, in both CLIs.
"""

from tests.agent_cli.e2e import only_session, results_by_call
from tests.agent_cli.opencode_runner import OPENCODE, OpenCode
from tests.agent_cli.plugin_runs import count_client_runs
from tests.agent_cli.script import Script, ToolCall, say, turn


def shell(command: str) -> ToolCall:
    return ToolCall("bash", {"command": command, "description": "run it"})


def test_a_plugin_that_cannot_reach_the_supervisor_lets_the_agent_work(
    opencode_like: OpenCode,
) -> None:
    """Fail open: with the hook client gone, every call runs as without the plugin."""
    agent = opencode_like
    agent.install_hooks()
    text = agent.plugin_path.read_text()
    start = text.index("const HOOK = ")
    end = text.index("\n", start)
    gone = agent.sandbox.base / "no-such-hook-client"
    agent.plugin_path.write_text(f'{text[:start]}const HOOK = ["{gone}"];{text[end:]}')
    agent.server.script = Script(main=[turn(shell("echo hello > x.txt")), say("Wrote it.")])

    run = agent.run("write x.txt")

    assert run.returncode == 0, run.describe()
    assert (agent.sandbox.work / "x.txt").read_text() == "hello\n"
    assert not agent.sandbox.sessions()


def test_the_plugin_asks_the_resident_server_itself(opencode_like: OpenCode) -> None:
    """No process per step: the plugin sends the steps to the resident server over its socket
    (in Bun, for both CLIs), and runs the hook client only until the server it started is up;
    every call and its result are recorded."""
    agent = opencode_like
    agent.install_hooks()
    client_runs = count_client_runs(agent.plugin_path, agent.sandbox.base)
    agent.server.script = Script(
        main=[turn(shell(f"echo {i} > f{i}.txt")) for i in range(4)] + [say("Done.")])

    run = agent.run("write four files")

    assert run.returncode == 0, run.describe()
    assert 1 <= client_runs() <= 3, client_runs()  # 4 calls and their results: 8 steps
    _session, events = only_session(agent.sandbox)
    pairs = results_by_call(events)
    assert len(pairs) == 4 and all(r is not None and r["ok"] for _, r in pairs), pairs


def test_opencode_installs_nothing_when_it_starts(opencode: OpenCode) -> None:
    """OpenCode runs npm in each config folder that lacks its `@opencode-ai/plugin` install and
    waits for it before asking the model: from the registry, twice per fresh sandbox, over two
    minutes under load. The sandbox's folders hold that install already (`seed_config_folder`,
    as on a machine where OpenCode ran before), so a run fetches and rewrites nothing."""
    agent = opencode
    agent.install_hooks()
    user, project = OPENCODE.config_folders
    folders = [agent.sandbox.home / user, agent.sandbox.work / project]
    seeded = [(folder / "package-lock.json").read_bytes() for folder in folders]
    agent.server.script = Script(main=[say("Nothing to do.")])

    run = agent.run("say hello")

    assert run.returncode == 0, run.describe()
    assert not (agent.sandbox.home / ".npm").exists(), "npm ran: its cache was written"
    assert [(folder / "package-lock.json").read_bytes() for folder in folders] == seeded
    assert all((folder / "node_modules").is_symlink() for folder in folders)
