"""Fixtures of the agent CLI suite. Every test that runs a real CLI (it uses one of the
`*_executable` fixtures, directly or through a runner fixture) gets the `agent_cli` mark, so
`pytest -m agent_cli` selects exactly those and `-m "not agent_cli"` the rest.

A CLI that cannot be had (no npm, npm failed) skips the tests that need it with the reason;
with `$SUPERVISOR_TEST_REQUIRE_AGENT_CLIS=1` (CI) it fails them instead.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent_cli import clis
from tests.agent_cli.anthropic_api import AnthropicServer
from tests.agent_cli.chat_api import ChatServer
from tests.agent_cli.claude_runner import ClaudeCode
from tests.agent_cli.cline_runner import Cline
from tests.agent_cli.codex_runner import Codex
from tests.agent_cli.copilot_runner import Copilot
from tests.agent_cli.drivers.pi import Pi
from tests.agent_cli.droid_runner import Droid
from tests.agent_cli.gemini_api import GeminiServer
from tests.agent_cli.gemini_runner import Gemini
from tests.agent_cli.openai_api import OpenAIServer
from tests.agent_cli.opencode_runner import KILO, OPENCODE, OpenCode
from tests.agent_cli.qwen_runner import QwenCode
from tests.agent_cli.sandbox import Sandbox
from tests.agent_cli.script import Script

CLI_FIXTURES = frozenset({"claude_executable", "codex_executable", "gemini_executable",
                          "qwen_executable", "droid_executable", "copilot_executable",
                          "opencode_executable", "kilo_executable", "cline_executable",
                          "pi_executable", "opencode_like", "cli_agent"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if CLI_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.agent_cli)


def cli_executable(cli: clis.AgentCli) -> Path:
    """The pinned CLI (and its config package), installed on first use; a skip (or, when
    required, a failure) without."""
    try:
        executable = clis.ensure(cli)
        clis.config_install(cli)
        return executable
    except clis.CliUnavailable as exc:
        reason = str(exc)
    if clis.required():
        pytest.fail(f"required here (${clis.ENV_REQUIRE} is set): {reason}", pytrace=False)
    pytest.skip(f"agent CLI unavailable: {reason}")


@pytest.fixture(scope="session")
def claude_executable() -> Path:
    return cli_executable(clis.CLAUDE)


@pytest.fixture(scope="session")
def codex_executable() -> Path:
    return cli_executable(clis.CODEX)


@pytest.fixture(scope="session")
def gemini_executable() -> Path:
    return cli_executable(clis.GEMINI)


@pytest.fixture(scope="session")
def qwen_executable() -> Path:
    return cli_executable(clis.QWEN)


@pytest.fixture(scope="session")
def droid_executable() -> Path:
    return cli_executable(clis.DROID)


@pytest.fixture(scope="session")
def copilot_executable() -> Path:
    return cli_executable(clis.COPILOT)


@pytest.fixture(scope="session")
def opencode_executable() -> Path:
    return cli_executable(clis.OPENCODE)


@pytest.fixture(scope="session")
def kilo_executable() -> Path:
    return cli_executable(clis.KILO)


@pytest.fixture(scope="session")
def cline_executable() -> Path:
    return cli_executable(clis.CLINE)


@pytest.fixture(scope="session")
def pi_executable() -> Path:
    return cli_executable(clis.PI)


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


@pytest.fixture
def openai() -> Iterator[OpenAIServer]:
    """The fake Responses API, started with an empty script (set `.script` in the test)."""
    with OpenAIServer(Script(main=[])) as server:
        yield server
        assert not server.errors, server.errors


@pytest.fixture
def codex(codex_executable: Path, sandbox: Sandbox, openai: OpenAIServer) -> Codex:
    """Codex CLI in a fresh sandbox (no hooks installed)."""
    return Codex(codex_executable, sandbox, openai)


@pytest.fixture
def gemini_api() -> Iterator[GeminiServer]:
    """The fake Gemini API, started with an empty script (set `.script` in the test)."""
    with GeminiServer(Script(main=[])) as server:
        yield server
        assert not server.errors, server.errors


@pytest.fixture
def gemini(gemini_executable: Path, sandbox: Sandbox, gemini_api: GeminiServer) -> Gemini:
    """Gemini CLI in a fresh sandbox (no hooks installed)."""
    return Gemini(gemini_executable, sandbox, gemini_api)


@pytest.fixture
def chat_api() -> Iterator[ChatServer]:
    """The fake Chat Completions API, started with an empty script (set `.script` in the
    test)."""
    with ChatServer(Script(main=[])) as server:
        yield server
        assert not server.errors, server.errors


@pytest.fixture
def qwen(qwen_executable: Path, sandbox: Sandbox, chat_api: ChatServer) -> QwenCode:
    """Qwen Code in a fresh sandbox (no hooks installed)."""
    return QwenCode(qwen_executable, sandbox, chat_api)


@pytest.fixture
def droid(droid_executable: Path, sandbox: Sandbox, chat_api: ChatServer) -> Droid:
    """Factory Droid in a fresh sandbox (no hooks installed)."""
    return Droid(droid_executable, sandbox, chat_api)


@pytest.fixture
def copilot(copilot_executable: Path, sandbox: Sandbox, chat_api: ChatServer) -> Copilot:
    """GitHub Copilot CLI in a fresh sandbox (no hooks installed)."""
    return Copilot(copilot_executable, sandbox, chat_api)


@pytest.fixture
def opencode(opencode_executable: Path, sandbox: Sandbox, chat_api: ChatServer) -> OpenCode:
    """OpenCode in a fresh sandbox (no plugin installed)."""
    return OpenCode(OPENCODE, opencode_executable, sandbox, chat_api)


@pytest.fixture
def kilo(kilo_executable: Path, sandbox: Sandbox, chat_api: ChatServer) -> OpenCode:
    """Kilo CLI in a fresh sandbox (no plugin installed)."""
    return OpenCode(KILO, kilo_executable, sandbox, chat_api)


@pytest.fixture
def cli_agent(driver: Any, request: pytest.FixtureRequest) -> Any:
    """The runner of the CLI the shared scenarios' `driver` names (`scenarios.py`)."""
    return request.getfixturevalue(driver.fixture)


@pytest.fixture(params=["opencode", "kilo"])
def opencode_like(request: pytest.FixtureRequest) -> OpenCode:
    """OpenCode, then Kilo: the same plugin in either."""
    runner: OpenCode = request.getfixturevalue(request.param)
    return runner


@pytest.fixture
def cline(cline_executable: Path, sandbox: Sandbox, chat_api: ChatServer) -> Iterator[Cline]:
    """Cline CLI in a fresh sandbox, its provider the fake (no plugin installed); a hub daemon
    it started (`use_hub`) is stopped afterwards."""
    runner = Cline(cline_executable, sandbox, chat_api)
    yield runner
    if runner.hub_port is not None:
        runner.stop_hub()


@pytest.fixture
def pi(pi_executable: Path, sandbox: Sandbox, chat_api: ChatServer) -> Pi:
    """Pi in a fresh sandbox, its provider the fake (no extension installed)."""
    return Pi(pi_executable, sandbox, chat_api)
