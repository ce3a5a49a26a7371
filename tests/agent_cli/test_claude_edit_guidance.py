"""The real Claude Code: an Edit whose old_string is not in the file (Claude Code refuses it
while validating, so only PostToolBatch sees it) is answered with where the text is, and the
model receives that in the same turn's context."""

from tests.agent_cli.claude_runner import ClaudeCode
from tests.agent_cli.script import Script, ToolCall, say, turn

PARSER = """\
def parse(text):
    rows = []
    for line in text.splitlines():
        rows.append(line.split(","))
    return rows
"""
WRONG = "for line in text.splitlines():\n    rows.append(line.split(','))"  # 4 spaces, ''


def test_a_failed_edit_reaches_the_model_with_the_region(claude: ClaudeCode) -> None:
    sandbox = claude.sandbox
    parser = sandbox.write("parser.py", PARSER)
    sandbox.commit("add parser")
    claude.server.script = Script(main=[
        turn(ToolCall("Read", {"file_path": str(parser)})),
        turn(ToolCall("Edit", {"file_path": str(parser), "old_string": WRONG,
                               "new_string": "pass"})),
        say("I will copy the lines as shown."),
    ])

    run = claude.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    results = claude.server.tool_results()
    assert results[1].is_error and "String to replace not found" in results[1].text
    told = _contexts(claude)
    assert len(told) == 1, told
    text = told[0]
    assert text.startswith("PostToolBatch hook additional context: Agent Supervisor: ")
    assert f"{parser} has not changed since you read it at #" in text
    assert "The closest text is at lines 3-4" in text
    assert "line 4 is `rows.append(line.split(\",\"))` in the file, " \
        "`rows.append(line.split(','))` in your text" in text
    assert "  3 │     for line in text.splitlines():\n  4 │         rows.append(" in text
    hints = [e for e in sandbox.events(run.session_id) if e["type"] == "hint"]
    assert [h["kind"] for h in hints] == ["failed_edit"]
    assert hints[0]["message"] in text


def test_a_repeated_failed_edit_is_refused_with_the_region(claude: ClaudeCode) -> None:
    sandbox = claude.sandbox
    parser = sandbox.write("parser.py", PARSER)
    sandbox.commit("add parser")
    wrong = ToolCall("Edit", {"file_path": str(parser), "old_string": WRONG, "new_string": "x"})
    claude.server.script = Script(main=[turn(wrong), turn(wrong), turn(wrong), turn(wrong),
                                        say("Done.")])

    run = claude.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    events = sandbox.events(run.session_id)
    verdicts = [e for e in events if e["type"] == "verdict"]
    assert [v["action"] for v in verdicts] == ["allow", "allow", "allow", "block"]
    told = _contexts(claude)  # the first three failures: the region as added context
    assert len(told) == 3, told
    assert all("The closest text is at lines 3-4" in t for t in told)
    # the third: the recovery turn first (the same call, the same error, the same files),
    # then the region, within the recovery budget
    assert "Loop: step back. Your last 3 edits did not get you further. Tried: " in told[2]
    assert "/agent/work/parser.py (the same call each time)" in told[2]
    assert "no file changed between them" in told[2]
    assert "Loop: step back" not in told[0] + told[1]
    # the fourth is refused (PostToolBatch `decision: block` ends the turn): the reason has the
    # engine's message and, after it, the region
    refused = verdicts[-1]["message"]
    assert refused.startswith("Blocked: this exact call")
    assert "The closest text is at lines 3-4" in refused
    assert "  4 │         rows.append(line.split(\",\"))" in refused


def _contexts(claude: ClaudeCode) -> list[str]:
    """The hooks' added context the model received (Claude Code sends it as a system message,
    its content a string or text blocks)."""
    out = []
    for message in claude.server.history(None):
        content = message.get("content")
        blocks = [{"text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            text = block.get("text") if isinstance(block, dict) else None
            if isinstance(text, str) and "hook additional context" in text:
                out.append(text)
    return out
