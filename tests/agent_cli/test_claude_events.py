"""Claude Code 2.1.332's new hook events with the real binary (pinned) and the scripted model:
a skill's shell preamble (PreSkillShellCommand) is supervised, with its outcome recorded as
unknown; the assistant's text between calls is recorded once (MessageDisplay, and the
transcript as a fallback); a call Claude Code's own permission check refused after PreToolUse
let it through gets a result in the store."""

from collections.abc import Iterator
from typing import Any

import pytest

from tests.agent_cli.claude_runner import ClaudeCode
from tests.agent_cli.e2e import of_type, only_session, results_by_call
from tests.agent_cli.script import Script, Text, ToolCall, say, turn
from tests.hookd_helpers import stop_servers

SKILL = """---
name: greet
description: Greets.
---

The marker is !`echo skill-preamble-ran`.
Say hello.
"""


@pytest.fixture(autouse=True)
def _no_servers_left(sandbox: Any) -> Iterator[None]:
    yield
    stop_servers(sandbox.store)


def test_skill_preamble_display_text_and_a_permission_refusal(claude: ClaudeCode) -> None:
    skill = claude.sandbox.work / ".claude" / "skills" / "greet" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL)
    claude.server.script = Script(main=[
        turn(Text("First I look."), ToolCall("Bash", {"command": "echo one",
                                                      "description": "one"})),
        turn(Text("Now the web."), ToolCall("WebFetch", {"url": "http://127.0.0.1:9/x",
                                                         "prompt": "read"})),
        say("All done."),
    ])

    run = claude.run("/greet")

    assert run.returncode == 0, run.describe()
    assert claude.server.received("skill-preamble-ran")  # the preamble ran (allowed)
    _session, events = only_session(claude.sandbox)
    pairs = results_by_call(events)
    by_tool = {c["tool"] + ":" + str(c["args"].get("command", c["args"].get("url"))): r
               for c, r in pairs}
    preamble = by_tool["Bash:echo skill-preamble-ran"]
    assert preamble is not None and preamble["outcome"] == "unknown"
    assert by_tool["Bash:echo one"] is not None and by_tool["Bash:echo one"]["ok"] is True
    refused = by_tool["WebFetch:http://127.0.0.1:9/x"]
    assert refused is not None and refused["ok"] is False, pairs
    assert refused["error"] == ("Claude requested permissions to use WebFetch, but you "
                                "haven't granted it yet.")
    said = [m["text"] for m in of_type(events, "message") if m["role"] == "assistant"]
    assert said == ["First I look.", "Now the web.", "All done."]  # each once
