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


def test_a_third_failed_replace_is_told_to_step_back(gemini: Gemini) -> None:
    """Three different replace calls on parser.py fail the same way: the third answer is the
    recovery turn, then the region, as the reason the model reads in place of the error."""
    gemini.install_hooks()
    gemini.sandbox.write("parser.py", PARSER)
    gemini.sandbox.commit("add parser")
    calls = [ToolCall("replace", {"file_path": "parser.py", "old_string": WRONG.replace(
        "';'", f"'{sep}'"), "new_string": "pass", "instruction": "tidy the loop"})
             for sep in (";", "|", "\\t")]
    gemini.server.script = Script(main=[*(turn(c) for c in calls), say("Stepping back.")])

    run = gemini.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    told = [r.text for r in gemini.server.function_responses()]
    assert len(told) == 3, told
    assert all(r.startswith("Could not find an exact match") for r in told)
    assert "step back" not in told[0] + told[1]
    assert "Agent Supervisor: Loop: step back. Your last 3 edits did not get you further. " \
        "Tried: " in told[2]
    assert "parser.py (3 times, 3 different calls). Same each time: each failed with" in told[2]
    assert "re-read the exact lines" in told[2]  # an edit's advice, not a missing path's
    assert "  3 │     for line in text.splitlines():" in told[2]
    _, events = only_session(gemini.sandbox)
    (detection,) = of_type(events, "detection")
    assert detection["detector"] == "recurring_error" and detection["message"] in told[2]
