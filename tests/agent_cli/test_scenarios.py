"""The shared real-binary scenarios (`scenarios.py`) over every driver that declares them
(`drivers.DRIVERS`): one test per scenario and CLI, `test_…[codex]`, `test_…[qwen]`, ….
A CLI's own scenarios (failed edits, transports, fail-open) stay in its `test_<cli>_*.py`."""

from collections.abc import Iterator
from typing import Any

import pytest

from tests.agent_cli import scenarios
from tests.agent_cli.drivers import having
from tests.agent_cli.scenarios import Agent, Driver
from tests.hookd_helpers import stop_servers


def over(scenario: str) -> pytest.MarkDecorator:
    drivers = having(scenario)
    return pytest.mark.parametrize("driver", drivers, ids=[d.name for d in drivers])


@pytest.fixture(autouse=True)
def _no_servers_left(sandbox: Any) -> Iterator[None]:
    yield
    stop_servers(sandbox.store)


@over(scenarios.DENY)
def test_a_repeated_failing_command_is_denied_by_the_4th_attempt(
    driver: Driver, cli_agent: Agent,
) -> None:
    scenarios.a_repeated_failing_command_is_denied_by_the_4th_attempt(driver, cli_agent)


@over(scenarios.ESCALATION)
def test_an_escalation_is_held_and_the_operators_guidance_reaches_the_model(
    driver: Driver, cli_agent: Agent,
) -> None:
    scenarios.an_escalation_is_held_and_the_operators_guidance_reaches_the_model(
        driver, cli_agent)


@over(scenarios.HEALTHY)
def test_a_healthy_session_is_never_denied_nor_told_anything(
    driver: Driver, cli_agent: Agent,
) -> None:
    scenarios.a_healthy_session_is_never_denied_nor_told_anything(driver, cli_agent)


@over(scenarios.FAILED_EDIT)
def test_a_failed_edit_reaches_the_model_with_the_region(
    driver: Driver, cli_agent: Agent,
) -> None:
    scenarios.a_failed_edit_reaches_the_model_with_the_region(driver, cli_agent)


@over(scenarios.PLANS)
def test_a_split_answer_feeds_the_sub_tasks_one_by_one_at_stop(
    driver: Driver, cli_agent: Agent,
) -> None:
    scenarios.a_split_answer_feeds_the_sub_tasks_one_by_one_at_stop(driver, cli_agent)


@over(scenarios.USAGE)
def test_usage_is_recorded_and_a_token_budget_holds(driver: Driver, cli_agent: Agent) -> None:
    scenarios.usage_is_recorded_and_a_token_budget_holds(driver, cli_agent)
