"""Fixtures of the agent CLI suite. Every test that runs a real CLI (it uses one of the
`*_executable` fixtures, directly or through a runner fixture) gets the `agent_cli` mark, so
`pytest -m agent_cli` selects exactly those and `-m "not agent_cli"` the rest.

A CLI that cannot be had (no npm, npm failed) skips the tests that need it with the reason;
with `$SUPERVISOR_TEST_REQUIRE_AGENT_CLIS=1` (CI) it fails them instead.
"""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent_cli import clis
from tests.agent_cli.anthropic_api import AnthropicServer
from tests.agent_cli.claude_runner import ClaudeCode
from tests.agent_cli.sandbox import Sandbox
from tests.agent_cli.script import Script

CLI_FIXTURES = frozenset({"claude_executable"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if CLI_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.agent_cli)


def cli_executable(cli: clis.AgentCli) -> Path:
    """The pinned CLI, installed on first use; a skip (or, when required, a failure) without."""
    try:
        return clis.ensure(cli)
    except clis.CliUnavailable as exc:
        reason = str(exc)
    if clis.required():
        pytest.fail(f"required here (${clis.ENV_REQUIRE} is set): {reason}", pytrace=False)
    pytest.skip(f"agent CLI unavailable: {reason}")


@pytest.fixture(scope="session")
def claude_executable() -> Path:
    return cli_executable(clis.CLAUDE)


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path / "agent")


@pytest.fixture
def anthropic() -> Iterator[AnthropicServer]:
    """The fake Messages API, started with an empty script (set `.script` in the test)."""
    with AnthropicServer(Script(main=[])) as server:
        yield server
        assert not server.errors, server.errors


@pytest.fixture
def claude(claude_executable: Path, sandbox: Sandbox, anthropic: AnthropicServer) -> ClaudeCode:
    """Claude Code in a fresh sandbox, the supervisor's hooks installed in the project."""
    runner = ClaudeCode(claude_executable, sandbox, anthropic)
    runner.install_hooks()
    return runner
