"""The real Gemini CLI: a `replace` whose old_string is not in the file (too far from it for
Gemini's own fuzzy match, which applies near misses itself) fails, and the model receives
where the closest text really is with the failure. Gemini drops added context from a failed
call's result, so the AfterTool answer is a `decision: "deny"` whose reason (the tool's error,
then ours) becomes the error the model reads."""

from tests.agent_cli.e2e import of_type, only_session
from tests.agent_cli.gemini_runner import Gemini
from tests.agent_cli.script import Script, ToolCall, say, turn

PARSER = """\
def parse(text):
    rows = []
    for line in text.splitlines():
        rows.append(line.split(","))
    return rows
"""
WRONG = "for line in data.readlines():\n    rows.append(line.strip().split(';'))"


def test_a_failed_replace_reaches_the_model_with_the_region(gemini: Gemini) -> None:
    gemini.install_hooks()
    gemini.sandbox.write("parser.py", PARSER)
    gemini.sandbox.commit("add parser")
    gemini.server.script = Script(main=[
        turn(ToolCall("replace", {"file_path": "parser.py", "old_string": WRONG,
                                  "new_string": "pass", "instruction": "tidy the loop"})),
        say("I will copy the lines as shown."),
    ])

    run = gemini.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    responses = gemini.server.function_responses()
    assert responses and responses[0].is_error, responses
    told = responses[0].text
    assert told.startswith("Could not find an exact match for 'old_string' in 'parser.py'.")
    assert "Agent Supervisor: The text you searched for is not in parser.py. The closest " \
        "text is at lines 3-4" in told
    assert "  3 │     for line in text.splitlines():" in told
    _, events = only_session(gemini.sandbox)
    (hint,) = of_type(events, "hint")
    assert hint["kind"] == "failed_edit" and hint["message"] in told
