"""The real-binary scenarios every agent CLI target shares, written once and run over a small
`Driver` per CLI (`tests/agent_cli/drivers/`): a repeated failing command denied by the 4th
attempt, an escalation held then answered with guidance, a healthy run never told anything, a
split plan fed at the agent's stop, and the usage its record holds.

A driver says, in its agent's own terms, how a shell call is scripted, what the model read back
(`told`), how a refusal reads (`reason`) and what the store records; what only one CLI does is an
explicit capability of its driver (a class attribute, or a `check_*` method that adds that CLI's
own assertions), never a branch on a CLI's name here. `test_scenarios.py` runs each scenario over
the drivers that declare it (`Driver.scenarios`): the next CLI is one driver module and one line
in `drivers.DRIVERS`.
"""

from typing import Any, ClassVar

from tests.agent_cli.e2e import (
    CHECK,
    ESCALATE_SOON,
    FAILING,
    FIXED,
    FOO,
    GUIDANCE,
    SOURCE,
    answer_an_escalation_with_guidance,
    assert_seq_ordered,
    of_type,
    only_session,
    results_by_call,
    usage_is_recorded_and_the_budget_holds,
)
from tests.agent_cli.runner import AgentRunner
from tests.agent_cli.script import Script, Text, ToolCall, Turn, say, turn

Agent = AgentRunner[Any]
Events = list[dict[str, Any]]
Pairs = list[tuple[dict[str, Any], Any]]

DENY, ESCALATION, HEALTHY, PLANS, USAGE = "deny", "escalation", "healthy", "plans", "usage"
FAILED_EDIT = "failed_edit"
"""The scenarios' names, as drivers declare them in `Driver.scenarios`."""
STEPS = ("Create the directory missing-dir.", "List missing-dir.", "Say what it holds.")
PARSER = """\
def parse(text):
    rows = []
    for line in text.splitlines():
        rows.append(line.split(","))
    return rows
"""
WRONG = "for line in data.readlines():\n    rows.append(line.strip().split(';'))"
"""Lines the model means to replace in `PARSER`, too far from its lines 3-4 for any fuzzy match."""


LINE_3 = "  3 │     for line in text.splitlines():"
"""Line 3 of `PARSER` as the supervisor shows the closest region of a failed edit."""


def closest(path: str) -> str:
    """How the supervisor says where the closest text to `WRONG` is in `PARSER` at `path`."""
    return f"The text you searched for is not in {path}. The closest text is at lines 3-4"


class Driver:
    """One agent CLI as the scenarios see it. Subclasses set the class attributes and override
    the methods their CLI needs; the defaults are what most targets do: a shell tool that takes
    `{"command", "description"}`, a refusal read as the supervisor's words after a fixed
    prefix, a healthy fix in the CLI's own read and edit tools (`read`, `edit`)."""

    name: ClassVar[str]
    """The test id (`test_…[name]`)."""
    fixture: ClassVar[str]
    """The conftest fixture that gives this CLI's runner in a fresh sandbox (default: `name`)."""
    agent: ClassVar[str]
    """The `agent` its `session_start` records, the hook target's name (default: `name`)."""
    scenarios: ClassVar[frozenset[str]] = frozenset({DENY, ESCALATION, HEALTHY})
    shell_tool: ClassVar[str]
    """The tool name the store records for a shell call."""
    failing: ClassVar[str] = FAILING
    """The repeated failing command: an `ls` that exits 2, the same way every time in what
    this CLI reports (`e2e.FAILING_QUIETLY` where its message may be lost)."""
    shell_call: ClassVar[str | None] = None
    """The tool the model calls for a shell command, when not `shell_tool`."""
    refusal_prefix: ClassVar[str] = ""
    """What the CLI puts before the supervisor's refusal in the tool result the model reads."""
    exit_2: ClassVar[str]
    """What the model reads in the result of the failing `ls` (exit status 2)."""
    exit_2_recorded: ClassVar[str] = "Exit code 2"
    """How the store's `error` of that failed call begins."""
    refusal_never_runs: ClassVar[bool] = True
    """The refused (4th) call has no result in the store (it never ran)."""
    escalation_repeats: ClassVar[int] = 4
    """Failing calls scripted for the escalation (more when the CLI's own stop comes late)."""
    healthy_failure: ClassVar[str] = "Exit code 1"
    """How the store's `error` of the healthy run's failing check begins."""
    ends_session: ClassVar[bool] = True
    """A headless run records `session_end` as its last event."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for default in ("fixture", "agent"):  # a subclass's own, else its name
            if default not in cls.__dict__ and "name" in cls.__dict__:
                setattr(cls, default, cls.name)

    # -- how the CLI is scripted and what the model read --------------------------------------
    def shell(self, command: str) -> ToolCall:
        """A shell call of `command` as the model makes it."""
        return ToolCall(self.shell_call or self.shell_tool, self.shell_input(command))

    def shell_input(self, command: str) -> dict[str, Any]:
        """The shell tool's arguments for `command`."""
        return {"command": command, "description": "run it"}

    def repeated(self, command: str, attempt: int) -> ToolCall:
        """The `attempt`-th (0-based) of the repeated failing calls: the same call by default."""
        return self.shell(command)

    def told(self, agent: Agent) -> list[str]:
        """The tool results the model received, in order."""
        server = agent.server
        return [m.text for m in server.tool_messages()]

    def reason(self, text: str) -> str | None:
        """The supervisor's refusal in a tool result the model read, else None."""
        if text.startswith(self.refusal_prefix + SOURCE):
            return text.removeprefix(self.refusal_prefix)
        return None

    # -- the healthy run: the CLI's own tools for one fix --------------------------------------
    def read(self, path: str) -> ToolCall:
        """The CLI's own read of the file at `path`."""
        raise NotImplementedError

    def edit(self, path: str, old: str, new: str) -> ToolCall:
        """The CLI's own edit replacing `old` with `new` in the file at `path`."""
        raise NotImplementedError

    def path(self, agent: Agent, name: str) -> str:
        """A work-dir file as the model names it (absolute by default)."""
        return str(agent.sandbox.work / name)

    def healthy(self, agent: Agent) -> tuple[list[Turn], list[list[tuple[str, bool]]]]:
        """The script of a healthy fix of foo.py (ending with `say("Fixed add.")`), and the
        calls the store should record for it, turn by turn: (tool, ok) in any order within
        a turn (parallel calls run in the CLI's own order). By default: read it, the failing
        check, the edit, the check again (with `healthy_beside` run beside it), then
        `healthy_more`."""
        foo = self.path(agent, "foo.py")
        read, edit = self.read(foo), self.edit(foo, "return a - b", "return a + b")
        passing = [self.shell(CHECK), *self.healthy_beside()]
        more, recorded = self.healthy_more(agent)
        return [
            turn(Text("Reading."), read),
            turn(self.shell(CHECK)),
            turn(edit),
            turn(*passing),
            *more,
            say("Fixed add."),
        ], [[(read.name, True)], [(self.shell_tool, False)], [(edit.name, True)],
            [(self.shell_tool, True)] * len(passing), *recorded]

    def healthy_beside(self) -> list[ToolCall]:
        """Calls made in parallel with the passing check (none by default)."""
        return []

    def healthy_more(self, agent: Agent) -> tuple[list[Turn], list[list[tuple[str, bool]]]]:
        """Turns after the passing check, and what the store records for them (none)."""
        return [], []

    # -- a CLI's own assertions on top of the shared ones --------------------------------------
    def check_install(self, agent: Agent) -> None:
        """After `install_hooks()`: what the CLI's settings must hold."""

    def check_denied(self, agent: Agent, told: list[str], events: Events) -> None:
        """After the deny scenario's shared assertions."""

    def check_healthy(self, agent: Agent, run: Any, pairs: Pairs, events: Events) -> None:
        """After the healthy scenario's shared assertions (`run`: the CLI's own output)."""

    # -- a failed edit, for the drivers that declare it ----------------------------------------
    edit_failure: ClassVar[str] = ""
    """What the CLI's edit tool says when the text to replace is not in the file."""
    edit_wrong: ClassVar[str] = WRONG
    """The text the failed edit replaces (`WRONG`: too far from any line for a fuzzy match)."""
    reads_before_edit: ClassVar[bool] = False
    """The failed edit reads the file first (the CLI edits only files it read)."""

    def failed_edit(self, path: str) -> list[Turn]:
        """The turns that replace `edit_wrong` in the file at `path`."""
        edit = turn(self.edit(path, self.edit_wrong, "pass"))
        return [turn(self.read(path)), edit] if self.reads_before_edit else [edit]

    def check_failed_edit(self, agent: Agent, path: str, told: list[str],
                          events: Events) -> None:
        """After the failed-edit scenario's shared assertions."""

    # -- plans and usage, for the drivers that declare them ------------------------------------
    plans_repeats: ClassVar[int] = 4
    """Failing calls scripted before the split plan's escalation."""

    def check_plans(self, agent: Agent, run: Any, told: list[str], events: Events) -> None:
        """After the split-plan scenario's shared assertions."""

    def plan_followups(self, agent: Agent) -> list[str]:
        """The user texts the CLI sent the model after the escalation (where sub-tasks 2 and 3
        arrive at its stop)."""
        server = agent.server
        return list(server.user_texts())

    usage_writes: ClassVar[int] = 0
    """Cache-write tokens the model server reports per answer (0: the API has none)."""
    usage_late: ClassVar[int] = 0
    """How many calls late a token budget may hold (`e2e.usage_is_recorded_and_the_budget_holds`;
    at most 2: `usage_calls` has five)."""

    def usage_calls(self) -> list[ToolCall]:
        return [self.shell(f"ls dir{i}") for i in range(5)]  # (the 4th, 5th: one, two late)

    def check_usage(self, agent: Agent, events: Events) -> None:
        """The models the usage records name."""


def is_installed(agent: Agent, driver: Driver) -> None:
    agent.install_hooks()
    driver.check_install(agent)


def a_repeated_failing_command_is_denied_by_the_4th_attempt(
    driver: Driver, agent: Agent,
) -> None:
    is_installed(agent, driver)
    agent.server.script = Script(
        main=[turn(driver.repeated(driver.failing, n)) for n in range(4)] + [say("Giving up.")]
    )

    run: Any = agent.run("list missing-dir")

    assert run.returncode == 0, run.describe()
    told = driver.told(agent)
    assert len(told) == 4, told
    assert driver.exit_2 in told[0], told[0]
    reason = driver.reason(told[3])
    assert reason is not None, told[3]  # our reason, word for word, by the 4th attempt

    session, events = only_session(agent.sandbox)
    assert session == run.session_id
    assert events[0]["type"] == "session_start" and events[0]["agent"] == driver.agent
    pairs = results_by_call(events)
    assert [c["tool"] for c, _ in pairs] == [driver.shell_tool] * 4
    ran = [r for _, r in pairs if r is not None]
    assert ran, "no failure recorded"
    assert all(r["ok"] is False and r["error"].startswith(driver.exit_2_recorded)
               for r in ran), ran
    if driver.refusal_never_runs:
        assert len(ran) == 3 and pairs[3][1] is None, pairs  # refused: it never ran
    assert len({c["call_id"] for c, _ in pairs}) == 4  # each call its own id
    refused = [v for v in of_type(events, "verdict") if v["action"] != "allow"]
    assert refused and refused[0]["action"] == "block"
    assert_seq_ordered(events)
    driver.check_denied(agent, told, events)


def an_escalation_is_held_and_the_operators_guidance_reaches_the_model(
    driver: Driver, agent: Agent,
) -> None:
    answer_an_escalation_with_guidance(agent, driver.shell(driver.failing),
                                       repeats=driver.escalation_repeats)
    told = driver.told(agent)
    assert any(GUIDANCE in (driver.reason(t) or "") for t in told), told


def a_healthy_session_is_never_denied_nor_told_anything(driver: Driver, agent: Agent) -> None:
    agent.sandbox.write("foo.py", FOO)
    agent.sandbox.commit("add foo")
    is_installed(agent, driver)
    turns, expected = driver.healthy(agent)
    agent.server.script = Script(main=turns)

    run: Any = agent.run("fix foo.py")

    assert run.returncode == 0, run.describe()
    assert (agent.sandbox.work / "foo.py").read_text() == FIXED
    assert not agent.server.received(SOURCE), "the model was told something"
    _session, events = only_session(agent.sandbox)
    assert {v["action"] for v in of_type(events, "verdict")} == {"allow"}
    pairs = results_by_call(events)
    assert all(r is not None for _, r in pairs), "a call lost its result"
    recorded = [(c["tool"], r["ok"]) for c, r in pairs]
    at = 0
    for group in expected:
        assert sorted(recorded[at:at + len(group)]) == sorted(group), (recorded, expected)
        at += len(group)
    assert at == len(recorded), (recorded, expected)
    failed = [r for _, r in pairs if not r["ok"]]
    assert len(failed) == 1 and failed[0]["error"].startswith(driver.healthy_failure), failed
    assert len({c["call_id"] for c, _ in pairs}) == len(pairs)
    if driver.ends_session:
        assert events[-1]["type"] == "session_end"
    assert_seq_ordered(events)
    driver.check_healthy(agent, run, pairs, events)


def a_failed_edit_reaches_the_model_with_the_region(driver: Driver, agent: Agent) -> None:
    """An edit whose text is not in the file fails, and the model reads where the closest text
    really is (lines 3-4) with the failure."""
    is_installed(agent, driver)
    agent.sandbox.write("parser.py", PARSER)
    agent.sandbox.commit("add parser")
    path = str(agent.sandbox.work / "parser.py")
    agent.server.script = Script(
        main=[*driver.failed_edit(path), say("I will copy the lines as shown.")]
    )

    run: Any = agent.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    told = driver.told(agent)
    server: Any = agent.server
    assert server.received(driver.edit_failure), told  # the tool's own failure
    assert server.received("The text you searched for is not in")
    assert server.received("The closest text is at lines 3-4")
    _, events = only_session(agent.sandbox)
    (hint,) = of_type(events, "hint")
    assert hint["kind"] == "failed_edit"
    driver.check_failed_edit(agent, path, told, events)


def a_split_answer_feeds_the_sub_tasks_one_by_one_at_stop(driver: Driver, agent: Agent) -> None:
    """The escalation is answered with three sub-tasks: the model gets sub-task 1 as the held
    call's refusal, then 2 and 3 at its stop (`{"decision": "block", "reason": ...}`, which the
    CLI goes on with), and the session's tasks end done in order (docs/plans.md)."""
    agent.sandbox.write_policy(ESCALATE_SOON)
    agent.install_hooks("--timeout", "90")
    # every turn after the calls is the same text turn, which is all a stop needs
    agent.server.script = Script(
        main=[turn(driver.shell(driver.failing))] * driver.plans_repeats + [say("Step finished.")]
    )

    running = agent.start("list missing-dir")
    session, escalation = agent.sandbox.wait_for_event("escalation", timeout=120)
    args = [a for step in STEPS for a in ("--split", step)]
    answered = agent.sandbox.supervisor("answer", session, *args)
    run = running.wait()

    assert answered.returncode == 0, answered.stderr
    assert run.returncode == 0, run.describe()
    told = driver.told(agent)
    assert any(f"Step 1 of 3: {STEPS[0]}" in (driver.reason(t) or "") for t in told), told
    said = driver.plan_followups(agent)
    at = [next(i for i, t in enumerate(said) if f"Step {n} of 3: {STEPS[n - 1]}" in t)
          for n in (2, 3)]
    assert at[0] < at[1], said
    events = agent.sandbox.events(session)
    planned = [e for e in of_type(events, "task_start") if e.get("plan")]
    assert [e["title"] for e in planned] == list(STEPS)
    ends = {e["task_id"]: e["status"] for e in of_type(events, "task_end")}
    assert [ends.get(e["task_id"]) for e in planned] == ["done", "done", "done"]
    applied = of_type(events, "decision_applied")
    assert [a["action"] for a in applied] == ["split"]
    assert applied[0]["escalation_id"] == escalation["escalation_id"]
    driver.check_plans(agent, run, told, events)


def usage_is_recorded_and_a_token_budget_holds(driver: Driver, agent: Agent) -> None:
    events = usage_is_recorded_and_the_budget_holds(
        agent, driver.usage_calls(), writes=driver.usage_writes,
        late=driver.usage_late,
    )
    driver.check_usage(agent, events)
