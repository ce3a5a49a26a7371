"""The Factory Droid target against the real binary (`@factory/cli-linux-x64`, pinned) and a
scripted Chat Completions model.

Hooks installed by `supervisor install droid --user` into the sandbox's
`~/.factory/settings.json`. Droid runs no PostToolUse for a failed call: the failures are
recorded from its transcript (at the next hook), which these scenarios prove too. The scenarios
every CLI shares run in `test_scenarios.py` (`drivers/droid.py`); here, Droid's own.
"""

from tests.agent_cli.droid_runner import Droid
from tests.agent_cli.e2e import (
    of_type,
    only_session,
    results_by_call,
)
from tests.agent_cli.script import Script, ToolCall, say, turn

PARSER = """\
def parse(text):
    rows = []
    for line in text.splitlines():
        rows.append(line.split(","))
    return rows
"""
WRONG = "for line in data.readlines():\n    rows.append(line.strip().split(';'))"


def test_a_failed_edit_is_recorded_with_its_guidance(droid: Droid) -> None:
    """Droid's Edit fails without a PostToolUse: the failure and the failed-edit guidance are
    recorded from the transcript, but the guidance cannot reach the model with the failure."""
    droid.install_hooks()
    droid.sandbox.write("parser.py", PARSER)
    droid.sandbox.commit("add parser")
    path = str(droid.sandbox.work / "parser.py")
    droid.server.script = Script(main=[
        turn(ToolCall("Edit", {"file_path": path, "old_str": WRONG, "new_str": "pass"})),
        say("I will copy the lines as shown."),
    ])

    run = droid.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    (told,) = droid.server.tool_messages()
    assert "The text to replace was not found in the file" in told.text
    _, events = only_session(droid.sandbox)
    ((_call, result),) = results_by_call(events)
    assert result is not None and result["ok"] is False
    assert result["error"].startswith("The text to replace was not found")
    (hint,) = of_type(events, "hint")
    assert hint["kind"] == "failed_edit" and "lines 3-4" in hint["message"]
