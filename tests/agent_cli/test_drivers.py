"""The scenario kit's drivers are well formed (no CLI needed): a driver that names a fixture the
suite lacks, repeats another's name or declares a scenario the kit does not have would only show
as a confusing error, or as no test at all, when the real binaries run."""

from tests.agent_cli import conftest, scenarios
from tests.agent_cli.drivers import DRIVERS, having
from tests.agent_cli.e2e import FAILING
from tests.agent_cli.script import ToolCall

KNOWN = {scenarios.DENY, scenarios.ESCALATION, scenarios.HEALTHY, scenarios.FAILED_EDIT,
         scenarios.PLANS, scenarios.USAGE}


def test_each_driver_has_its_own_name_and_a_fixture_the_suite_defines() -> None:
    names = [d.name for d in DRIVERS]
    assert len(set(names)) == len(names), names
    for driver in DRIVERS:
        assert callable(getattr(conftest, driver.fixture, None)), driver.fixture


def test_each_driver_declares_only_known_scenarios_and_every_scenario_has_a_driver() -> None:
    for driver in DRIVERS:
        assert driver.scenarios <= KNOWN, (driver.name, driver.scenarios - KNOWN)
    for scenario in KNOWN:
        assert having(scenario), scenario


def test_each_driver_scripts_a_shell_call_and_tells_its_refusal_from_a_result() -> None:
    for driver in DRIVERS:
        call = driver.shell(FAILING)
        assert isinstance(call, ToolCall) and FAILING in str(call.input), driver.name
        assert driver.reason("ls: cannot access 'missing-dir'") is None, driver.name
