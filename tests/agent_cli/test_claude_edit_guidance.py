"""The real Claude Code: an Edit whose old_string is not in the file, repeated (Claude Code
refuses it while validating, so only PostToolBatch sees it), is answered with where the text is
each time and refused by the 4th attempt. The single failed edit is the scenario kit's
(`scenarios.a_failed_edit_reaches_the_model_with_the_region`, `drivers/claude.py`)."""

from tests.agent_cli.claude_runner import ClaudeCode
from tests.agent_cli.drivers.claude import NEAR, contexts
from tests.agent_cli.scenarios import PARSER
from tests.agent_cli.script import Script, ToolCall, say, turn


def test_a_repeated_failed_edit_is_refused_with_the_region(claude: ClaudeCode) -> None:
    sandbox = claude.sandbox
    parser = sandbox.write("parser.py", PARSER)
    sandbox.commit("add parser")
    wrong = ToolCall("Edit", {"file_path": str(parser), "old_string": NEAR, "new_string": "x"})
    claude.server.script = Script(main=[turn(wrong), turn(wrong), turn(wrong), turn(wrong),
                                        say("Done.")])

    run = claude.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    events = sandbox.events(run.session_id)
    verdicts = [e for e in events if e["type"] == "verdict"]
    assert [v["action"] for v in verdicts] == ["allow", "allow", "allow", "block"]
    told = contexts(claude)  # the first three failures: the region as added context
    assert len(told) == 3, told
    assert all("The closest text is at lines 3-4" in t for t in told)
    # the third: the recovery turn first (the same call, the same error, the same files),
    # then the region, within the recovery budget
    assert "Loop: step back. Your last 3 edits did not get you further. Tried: " in told[2]
    assert "/agent/work/parser.py (3 times, the same call each time)" in told[2]
    assert "no file changed between them" in told[2]
    assert "Loop: step back" not in told[0] + told[1]
    # the fourth is refused (PostToolBatch `decision: block` ends the turn): the reason has the
    # engine's message and, after it, the region
    refused = verdicts[-1]["message"]
    assert refused.startswith("Blocked: this exact call")
    assert "The closest text is at lines 3-4" in refused
    assert "  4 │         rows.append(line.split(\",\"))" in refused
