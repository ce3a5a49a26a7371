"""The GitHub Copilot CLI target against the real binary (`@github/copilot`, pinned, offline)
and a scripted Chat Completions model.

Hooks installed by `supervisor install copilot --user` into the sandbox's
`~/.copilot/settings.json`. The scenarios every CLI shares run in `test_scenarios.py`
(`drivers/copilot.py`); here, Copilot's own.
"""

from tests.agent_cli.copilot_runner import Copilot
from tests.agent_cli.e2e import (
    of_type,
    only_session,
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


def test_a_failed_edit_reaches_the_model_with_the_region(copilot: Copilot) -> None:
    copilot.install_hooks()
    copilot.sandbox.write("parser.py", PARSER)
    copilot.sandbox.commit("add parser")
    path = str(copilot.sandbox.work / "parser.py")
    copilot.server.script = Script(main=[
        turn(ToolCall("edit", {"path": path, "old_str": WRONG, "new_str": "pass"})),
        say("I will copy the lines as shown."),
    ])

    run = copilot.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    history = copilot.server.history()
    assert any("No match found" in str(m.get("content")) for m in history), history
    told = "\n".join(str(m.get("content")) for m in history)
    assert f"The text you searched for is not in {path}. The closest text is at lines 3-4" \
        in told, told[-3000:]
    _, events = only_session(copilot.sandbox)
    (hint,) = of_type(events, "hint")
    assert hint["kind"] == "failed_edit"
