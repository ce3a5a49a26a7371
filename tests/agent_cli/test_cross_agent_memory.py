"""The real Claude Code and the real Gemini CLI in one repository (docs/memory.md): what failed
in Claude Code's `Bash {command}` is told to Gemini CLI about the same command line in its
`run_shell_command {command}`, in the text its model reads (with the call's result: Gemini
takes no context before a call, docs/hooks.md). The failure memory knows a shell call by its
command line, whichever agent's shell ran it."""

from collections.abc import Iterator
from typing import Any

import pytest

from tests.agent_cli.claude_runner import ClaudeCode
from tests.agent_cli.e2e import of_type
from tests.agent_cli.gemini_runner import Gemini
from tests.agent_cli.script import Script, Text, ToolCall, say, turn
from tests.hookd_helpers import stop_servers

MISSING = "fancylint --strict src"
"""A command the sandbox does not have: bash says `fancylint: command not found`."""
WORKS = "python3 -m py_compile app.py"


@pytest.fixture(autouse=True)
def _no_servers_left(sandbox: Any) -> Iterator[None]:
    yield
    stop_servers(sandbox.store)


def test_a_failure_in_claude_code_is_told_to_gemini(claude: ClaudeCode, gemini: Gemini) -> None:
    sandbox = claude.sandbox
    sandbox.write("app.py", "print('hi')\n")
    sandbox.commit("add app")
    sandbox.write_policy("[guard]\ncheckpoints = false\n")
    claude.server.script = Script(main=[
        turn(Text("Linting."), ToolCall("Bash", {"command": MISSING, "description": "lint"})),
        turn(Text("No fancylint here; compiling instead."),
             ToolCall("Bash", {"command": WORKS, "description": "compile"})),
        say("Checked.")])
    first = claude.run("check the code")
    assert first.returncode == 0, first.describe()
    assert "command not found" in claude.server.tool_results()[0].text

    gemini.install_hooks()
    gemini.server.script = Script(main=[
        turn(ToolCall("run_shell_command", {"command": MISSING, "description": "lint"})),
        say("Done.")])
    second = gemini.run("lint the code")
    assert second.returncode == 0, second.describe()
    sid = next(s for s in sandbox.sessions() if s != first.session_id)
    events = sandbox.events(sid)
    (warned,) = [e for e in of_type(events, "memory") if e["kind"] == "warned"]
    assert "this same call failed once in an earlier session of this project" \
        in warned["message"]
    assert "in an earlier session of this project" in warned["message"]
    assert f"What worked then: Bash “{WORKS}” succeeded instead" in warned["message"]
    assert gemini.server.received("Failure memory: this same call failed once")
    # a nudge: the call ran
    verdict = next(e for e in of_type(events, "verdict") if e["call_id"] == warned["call_id"])
    assert verdict["action"] == "nudge"
