"""The Cline target against the real binary (`cline`, pinned) and a scripted Chat Completions
model: the plugin installed by `supervisor install cline --project WORK` into
`WORK/.cline/plugins/`, the session run in the CLI's own process
(`CLINE_SESSION_BACKEND_MODE=local`, see cline_runner). Each scenario asserts on what the model
received and what the store recorded."""

import json

from tests.agent_cli.cline_runner import Cline
from tests.agent_cli.e2e import (
    CHECK,
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
)
from tests.agent_cli.script import Script, Text, ToolCall, say, turn

PARSER = """\
def parse(text):
    rows = []
    for line in text.splitlines():
        rows.append(line.split(","))
    return rows
"""
WRONG = "for line in data.readlines():\n    rows.append(line.strip().split(';'))"


def shell(command: str) -> ToolCall:
    return ToolCall("run_commands", {"commands": [command]})


def told(cline: Cline) -> list[str]:
    return [m.text for m in cline.server.tool_messages()]


def test_a_repeated_failing_command_is_denied_by_the_4th_attempt(cline: Cline) -> None:
    cline.install_hooks()
    cline.server.script = Script(main=[turn(shell(FAILING))] * 4 + [say("Giving up.")])

    run = cline.run("list missing-dir")

    assert run.returncode == 0, run.describe()
    results = told(cline)
    assert len(results) == 4, results
    assert all("cannot access 'missing-dir'" in t for t in results[:3]), results
    # the plugin's `skip` reason is the call's result: {"error": reason}
    assert json.loads(results[3])["error"].startswith(f"{SOURCE}:"), results[3]

    session, events = only_session(cline.sandbox)
    assert session == run.session_id
    assert events[0]["type"] == "session_start" and events[0]["agent"] == "cline"
    pairs = results_by_call(events)
    assert [c["tool"] for c, _ in pairs] == ["run_commands"] * 4
    ran = [r for _, r in pairs[:3]]
    assert all(r is not None and r["ok"] is False
               and r["error"].startswith("Command exited with code 2") for r in ran), ran
    assert pairs[3][1] is None  # refused: it never ran
    refused = [v for v in of_type(events, "verdict") if v["action"] != "allow"]
    assert [v["action"] for v in refused] == ["block"]
    assert_seq_ordered(events)


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


def test_an_escalation_is_held_and_the_operators_guidance_reaches_the_model(
    cline: Cline,
) -> None:
    answer_an_escalation_with_guidance(cline, shell(FAILING))
    assert any(GUIDANCE in t and SOURCE in t for t in told(cline)), told(cline)


def test_a_healthy_session_is_never_denied_nor_told_anything(cline: Cline) -> None:
    sandbox = cline.sandbox
    sandbox.write("foo.py", FOO)
    sandbox.commit("add foo")
    cline.install_hooks()
    foo = str(sandbox.work / "foo.py")
    cline.server.script = Script(main=[
        turn(Text("Checking."), shell(CHECK)),
        turn(ToolCall("editor", {"path": foo, "old_text": "return a - b",
                                 "new_text": "return a + b"})),
        turn(shell(CHECK)),
        say("Fixed add."),
    ])

    run = cline.run("fix foo.py")

    assert run.returncode == 0, run.describe()
    assert (sandbox.work / "foo.py").read_text() == FIXED
    assert not cline.server.received(SOURCE), "the model was told something"
    _session, events = only_session(sandbox)
    assert {v["action"] for v in of_type(events, "verdict")} == {"allow"}
    pairs = results_by_call(events)
    assert [c["tool"] for c, _ in pairs] == ["run_commands", "editor", "run_commands"]
    assert all(r is not None for _, r in pairs), "a call lost its result"
    assert [r["ok"] for _, r in pairs] == [False, True, True]
    messages = of_type(events, "message")
    assert messages[0] == {**messages[0], "role": "user", "text": "fix foo.py"}
    said = [m["text"] for m in messages if m["role"] == "assistant"]
    assert said == ["Checking.", "Fixed add."], said
    assert_seq_ordered(events)


def test_a_failed_edit_reaches_the_model_with_the_region(cline: Cline) -> None:
    cline.install_hooks()
    cline.sandbox.write("parser.py", PARSER)
    cline.sandbox.commit("add parser")
    parser = str(cline.sandbox.work / "parser.py")
    cline.server.script = Script(main=[
        turn(ToolCall("editor", {"path": parser, "old_text": WRONG, "new_text": "pass"})),
        say("I will copy the lines as shown."),
    ])

    run = cline.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    (result,) = told(cline)
    assert "No replacement performed: text not found" in result, result
    # the supervisor's answer reaches the model as hook context after the result
    assert cline.server.received("Agent Supervisor: The text you searched for is not in")
    assert cline.server.received("The closest text is at lines 3-4")
    _, events = only_session(cline.sandbox)
    (hint,) = of_type(events, "hint")
    assert hint["kind"] == "failed_edit"
