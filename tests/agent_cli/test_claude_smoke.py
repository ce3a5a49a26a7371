"""The harness works end to end: the real Claude Code, the fake API, the supervisor's hooks.

A three-turn scripted session (Read, a failing Bash, a closing text): the hook events reach the
store as one supervised session, and the tool results reach the fake server's log.
"""

from tests.agent_cli.claude_runner import ClaudeCode
from tests.agent_cli.script import Script, Text, ToolCall, say, turn

FOO = "def add(a, b):\n    return a - b\n"
CHECK = 'python3 -c "from foo import add; assert add(2, 3) == 5, add(2, 3)"'


def test_read_and_failing_bash_reach_store_and_model(claude: ClaudeCode) -> None:
    sandbox = claude.sandbox
    foo = sandbox.write("foo.py", FOO)
    sandbox.commit("add foo")
    claude.server.script = Script(main=[
        turn(Text("Let me look."), ToolCall("Read", {"file_path": str(foo)})),
        turn(ToolCall("Bash", {"command": CHECK, "description": "check add"})),
        say("The check fails; stopping here."),
    ])

    run = claude.run("fix foo.py")

    assert run.returncode == 0, run.describe()
    assert run.result.get("subtype") == "success", run.describe()
    assert run.result.get("result") == "The check fails; stopping here."

    # what the model received: the file's content, then the failure as an error result
    results = claude.server.tool_results()
    assert len(results) == 2, results
    assert not results[0].is_error and "return a - b" in results[0].text
    assert results[1].is_error and "AssertionError: -1" in results[1].text
    assert "fix foo.py" in claude.server.user_texts()

    # what the store recorded: one session, named by Claude Code's session id
    assert sandbox.sessions() == [run.session_id]
    events = sandbox.events(run.session_id)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "session_start" and events[0]["agent"] == "claude-code"
    assert kinds[-1] == "session_end"
    calls = [e for e in events if e["type"] == "tool_call"]
    assert [c["tool"] for c in calls] == ["Read", "Bash"]
    outcomes = {e["call_id"]: e for e in events if e["type"] == "tool_result"}
    assert outcomes[calls[0]["call_id"]]["ok"] is True
    failed = outcomes[calls[1]["call_id"]]
    assert failed["ok"] is False and "Exit code 1" in failed["error"]
    # the ids the model saw are the ids the store recorded
    assert [c["call_id"] for c in calls] == [r.tool_use_id for r in results]
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    # each call was judged before it ran, and nothing was denied on a healthy start
    verdicts = [e for e in events if e["type"] == "verdict"]
    assert [(v["call_id"], v["action"]) for v in verdicts] == [
        (c["call_id"], "allow") for c in calls
    ]
