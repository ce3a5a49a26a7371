"""Claude Code (`claude_runner`): hooks in the project's `.claude/settings.json` (the `claude`
fixture installs them; the scenarios install again with their options); the model reads a
refusal as the tool's error after Claude Code's `PreToolUse:Bash hook error: ` and an added
context as a system message of its own."""

import json
from typing import Any

from tests.agent_cli.e2e import SOURCE, of_type
from tests.agent_cli.scenarios import (
    DENY,
    ESCALATION,
    FAILED_EDIT,
    HEALTHY,
    LINE_3,
    PLANS,
    STEPS,
    USAGE,
    Agent,
    Driver,
    Events,
    Pairs,
)
from tests.agent_cli.script import FINAL_TEXT, Text, ToolCall, Turn, say, turn

NEAR = "for line in text.splitlines():\n    rows.append(line.split(','))"
"""Lines 3-4 of the kit's parser.py with 4 spaces where the file has 8 and `','` for `","`:
Claude Code matches exactly, so the edit fails, and the answer names the line that differs."""
TESTS = "from foo import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
RUN_TESTS = "python3 -m pytest -q -p no:cacheprovider test_foo.py"
COMMIT = "git add -A && git commit -q -m 'fix add' && git log --oneline -1"


def contexts(agent: Agent) -> list[str]:
    """The hooks' added context the model received (Claude Code sends it as a system message,
    its content a string or text blocks)."""
    out = []
    for message in agent.server.history(None):
        content = message.get("content")
        blocks = [{"text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            text = block.get("text") if isinstance(block, dict) else None
            if isinstance(text, str) and "hook additional context" in text:
                out.append(text)
    return out


class ClaudeDriver(Driver):
    name = "claude"
    agent = "claude-code"
    scenarios = frozenset({DENY, ESCALATION, HEALTHY, FAILED_EDIT, PLANS, USAGE})
    shell_tool = "Bash"
    exit_2 = "Exit code 2"
    edit_failure = "String to replace not found"
    edit_wrong = NEAR
    reads_before_edit = True
    usage_writes = 40
    # Claude Code writes an answer to its transcript at times only after the PreToolUse of the
    # call it asked for ran; the hook does not wait for it: counted at a later call, so a
    # budget may hold one call late, two when calls come faster than it writes (the scripted
    # model answers at once: under load, 9 runs of 12). Its hooks do not wait for the answer
    # asking for the call before: that wait cost every call 10 ms at these speeds
    # (docs/claude-code.md, "Tokens and cost")
    usage_late = 2

    def told(self, agent: Agent) -> list[str]:
        return [r.text for r in agent.server.tool_results()]

    def reason(self, text: str) -> str | None:
        # `PreToolUse:Bash hook error: ` and the like: the prefix names the tool and the event
        if "hook error" not in text or SOURCE not in text:
            return None
        return text[text.index(SOURCE):]

    def check_install(self, agent: Agent) -> None:
        hook = agent.settings()["hooks"]["PreToolUse"][0]["hooks"][0]
        assert hook["type"] == "command" and " claude-code" in hook["command"], hook

    def check_denied(self, agent: Agent, told: list[str], events: Events) -> None:
        results = agent.server.tool_results()
        assert [r.is_error for r in results] == [True] * 4
        assert told[3].startswith(f"PreToolUse:Bash hook error: {SOURCE}: "), told[3]
        # the ids the model saw are the ids the store recorded
        assert [c["call_id"] for c in of_type(events, "tool_call")] == \
            [r.tool_use_id for r in results]

    # -- the healthy run: read, a failing test, the fix, a passing test, grep, commit ----------
    def healthy(self, agent: Agent) -> tuple[list[Turn], list[list[tuple[str, bool]]]]:
        foo = self.path(agent, "foo.py")
        test = str(agent.sandbox.write("test_foo.py", TESTS))
        agent.sandbox.commit("add the test")
        return [
            turn(Text("Reading the code."), self.read(foo), self.read(test)),
            turn(Text("Running the tests first."), self.shell(RUN_TESTS)),
            turn(Text("The bug is the minus."), self.edit(foo, "return a - b", "return a + b")),
            turn(Text("Again."), self.shell(RUN_TESTS)),
            turn(Text("Any other subtraction?"), ToolCall("Grep", {"pattern": "a - b"})),
            turn(Text("Commit."), self.shell(COMMIT)),
            say("Fixed add."),
        ], [[("Read", True)] * 2, [("Bash", False)], [("Edit", True)], [("Bash", True)],
            [("Grep", True)], [("Bash", True)]]

    def check_healthy(self, agent: Agent, run: Any, pairs: Pairs, events: Events) -> None:
        assert run.result.get("result") == "Fixed add.", run.describe()
        assert not [e for e in events if e["type"] in ("detection", "escalation", "limit")]
        for request in agent.server.conversation():
            assert SOURCE not in json.dumps(request.body)
        told = self.told(agent)
        assert len(told) == 7
        assert "1 failed" in told[2] and "1 passed" in told[4]

    # -- a failed edit: refused by Claude Code itself, so only PostToolBatch sees it -----------
    def read(self, path: str) -> ToolCall:
        return ToolCall("Read", {"file_path": path})

    def edit(self, path: str, old: str, new: str) -> ToolCall:
        return ToolCall("Edit", {"file_path": path, "old_string": old, "new_string": new})

    def check_failed_edit(self, agent: Agent, path: str, told: list[str],
                          events: Events) -> None:
        results = agent.server.tool_results()
        assert results[1].is_error and self.edit_failure in results[1].text
        (text,) = contexts(agent)
        assert text.startswith(f"PostToolBatch hook additional context: {SOURCE}: ")
        assert f"{path} has not changed since you last read it." in text
        assert "The closest text is at lines 3-4" in text
        assert "line 4 is `rows.append(line.split(\",\"))` in the file, " \
            "`rows.append(line.split(','))` in your text" in text
        assert f"{LINE_3}\n  4 │         rows.append(" in text
        (hint,) = of_type(events, "hint")
        assert hint["message"] in text

    # -- a split plan: sub-tasks 2 and 3 each after the model finished the one before ----------
    def check_plans(self, agent: Agent, run: Any, told: list[str], events: Events) -> None:
        held = next(t for t in told if f"Step 1 of 3: {STEPS[0]}" in t)
        assert "split this task into 3 steps" in held and "same error" in held, held
        history = agent.server.history()
        said = [json.dumps(m) for m in history]
        at = [next(i for i, m in enumerate(said) if f"Step {n} of 3" in m) for n in (1, 2, 3)]
        finished = [i for i, m in enumerate(history) if m["role"] == "assistant"
                    and "tool_use" not in said[i]]  # the model's turns that end a step
        assert at[0] < finished[0] < at[1] < finished[1] < at[2], (at, finished)
        assert STEPS[1] in said[at[1]] and STEPS[2] in said[at[2]]
        # the plan done, Stop is allowed: the run ends with the last step's text
        assert run.result.get("result") == FINAL_TEXT, run.describe()
        assert len(agent.server.conversation()) == self.plans_repeats + 3  # a turn per sub-task
        planned = [e for e in of_type(events, "task_start") if e.get("plan")]
        assert [e["plan"]["step"] for e in planned] == [1, 2, 3]
        (applied,) = of_type(events, "decision_applied")
        assert applied["effect"]["kind"] == "split" and applied["tasks"] == list(STEPS)
        assert of_type(events, "session_end")[0]["status"] == "completed"

    def check_usage(self, agent: Agent, events: Events) -> None:
        assert {u["model"] for u in of_type(events, "usage")} == {agent.server.models()[0]}
