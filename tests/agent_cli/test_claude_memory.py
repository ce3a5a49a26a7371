"""The real Claude Code and the failure memory (docs/memory.md): session 1 fails on a command and
recovers with another; session 2, in the same repository, is told at its start and again right
before the same failing call, in the `additionalContext` the model reads, what failed and what
worked then. The call still runs: memory nudges, never refuses."""

from collections.abc import Iterator
from typing import Any

import pytest

from tests.agent_cli.claude_runner import ClaudeCode
from tests.agent_cli.script import Script, Text, ToolCall, say, turn
from tests.hookd_helpers import stop_servers

MISSING = "fancylint --strict src"
"""A command the sandbox does not have: bash says `fancylint: command not found`."""
WORKS = "python3 -m py_compile app.py"
SECOND = "the second session"


@pytest.fixture(autouse=True)
def _no_servers_left(sandbox: Any) -> Iterator[None]:
    yield
    stop_servers(sandbox.store)


def test_a_failure_of_session_one_is_told_to_session_two(claude: ClaudeCode) -> None:
    sandbox = claude.sandbox
    sandbox.write("app.py", "print('hi')\n")
    sandbox.commit("add app")
    sandbox.write_policy("[guard]\ncheckpoints = false\n")
    lint = ToolCall("Bash", {"command": MISSING, "description": "lint"})
    claude.server.script = Script(
        main=[turn(Text("Linting."), lint),
              turn(Text("No fancylint here; compiling instead."),
                   ToolCall("Bash", {"command": WORKS, "description": "compile"})),
              say("Checked.")],
        others={SECOND: [turn(Text("Linting."), lint), say("Done.")]},
    )

    first = claude.run("check the code")
    assert first.returncode == 0, first.describe()
    results = claude.server.tool_results()
    assert results[0].is_error and "command not found" in results[0].text
    assert not any("Failure memory" in t for t in _contexts(claude, None))

    second = claude.run(f"check the code again, {SECOND}")
    assert second.returncode == 0, second.describe()
    assert second.session_id != first.session_id
    told = [t for t in _contexts(claude, SECOND) if "Failure memory" in t]
    # at the start: the pitfall; before the call: the same words the guard recorded
    assert any(t.startswith("SessionStart hook additional context: Failure memory of this "
                            "project (from earlier sessions") and f"“{MISSING}” failed 1x" in t
               for t in told), told
    before = [t for t in told if "this same call failed once in an earlier session" in t]
    assert len(before) == 1, told
    assert before[0].startswith("PreToolUse:Bash hook additional context: Agent Supervisor: "
                                "Failure memory: ")
    assert "in an earlier session of this project" in before[0]
    assert f"What worked then: Bash “{WORKS}” succeeded instead" in before[0]
    events = sandbox.events(second.session_id)
    warned = [e for e in events if e["type"] == "memory" and e["kind"] == "warned"]
    assert len(warned) == 1 and warned[0]["message"] in before[0]
    # a nudge: the call ran (and failed again, as it would have)
    verdict = next(e for e in events if e["type"] == "verdict"
                   and e["call_id"] == warned[0]["call_id"])
    assert verdict["action"] == "nudge"
    assert any(r.is_error and "command not found" in r.text
               for r in claude.server.tool_results(SECOND))


def _contexts(claude: ClaudeCode, key: str | None) -> list[str]:
    """The hooks' added context the model received in a conversation (Claude Code sends it as
    a system message, its content a string or text blocks)."""
    out = []
    for message in claude.server.history(key):
        content = message.get("content")
        blocks = [{"text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            text = block.get("text") if isinstance(block, dict) else None
            if isinstance(text, str) and "hook additional context" in text:
                out.append(text)
    return out
