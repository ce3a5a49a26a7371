"""What each agent spent, read from its own record by the real binaries (pinned) against the
scripted model servers: the tokens recorded equal what the server sent, and a session's token
budget holds the call that would cross it (`e2e.usage_is_recorded_and_the_budget_holds`)."""

from collections.abc import Iterator
from typing import Any

import pytest

from tests.agent_cli.claude_runner import ClaudeCode
from tests.agent_cli.e2e import of_type, usage_is_recorded_and_the_budget_holds
from tests.agent_cli.script import ToolCall
from tests.hookd_helpers import stop_servers


@pytest.fixture(autouse=True)
def _no_servers_left(sandbox: Any) -> Iterator[None]:
    yield
    stop_servers(sandbox.store)


def test_claude_code(claude: ClaudeCode) -> None:
    calls = [ToolCall("Bash", {"command": f"ls dir{i}", "description": "list"}) for i in range(3)]
    events = usage_is_recorded_and_the_budget_holds(claude, calls)
    assert {u["model"] for u in of_type(events, "usage")} == {claude.server.models()[0]}
