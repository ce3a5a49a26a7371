"""The Qwen Code target against the real binary (`@qwen-code/qwen-code`, pinned) and a scripted
Chat Completions model.

Hooks installed by `supervisor install qwen-code --user` into the sandbox's
`~/.qwen/settings.json`. Each scenario asserts on what the model received (the fake's log: the
`role: "tool"` messages) and what the store recorded. The scenarios every CLI shares run in
`test_scenarios.py` (`drivers/qwen.py`); here, Qwen's own.
"""

import json

from tests.agent_cli.e2e import (
    FAILING,
    SOURCE,
    of_type,
    only_session,
    results_by_call,
)
from tests.agent_cli.qwen_runner import QwenCode
from tests.agent_cli.script import Script, ToolCall, say, turn

PARSER = """\
def parse(text):
    rows = []
    for line in text.splitlines():
        rows.append(line.split(","))
    return rows
"""
WRONG = "for line in data.readlines():\n    rows.append(line.strip().split(';'))"


def shell(command: str) -> ToolCall:
    return ToolCall("run_shell_command", {"command": command, "description": "run it"})


def test_a_failed_edit_reaches_the_model_with_the_region(qwen: QwenCode) -> None:
    qwen.install_hooks()
    qwen.sandbox.write("parser.py", PARSER)
    qwen.sandbox.commit("add parser")
    path = str(qwen.sandbox.work / "parser.py")
    qwen.server.script = Script(main=[
        turn(ToolCall("read_file", {"file_path": path})),  # Qwen edits only files it read
        turn(ToolCall("edit", {"file_path": path, "old_string": WRONG, "new_string": "pass"})),
        say("I will copy the lines as shown."),
    ])

    run = qwen.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    told = qwen.server.tool_messages()
    assert len(told) == 2, told
    assert "0 occurrences found for old_string" in told[1].text
    # the hint (additionalContext) follows the tool's error in the same tool result
    assert f"The text you searched for is not in {path}. The closest text is at lines 3-4" \
        in told[1].text, told[1].text
    assert "  3 │     for line in text.splitlines():" in told[1].text
    _, events = only_session(qwen.sandbox)
    (hint,) = of_type(events, "hint")
    assert hint["kind"] == "failed_edit"


def test_over_http_the_4th_identical_failing_call_is_denied(qwen: QwenCode) -> None:
    """`--transport http`: Qwen's per-call events POST to the resident server (started by the
    first command hook, SessionStart)."""
    from tests.hookd_helpers import stop_servers

    qwen.install_hooks("--transport", "http")
    hooks = json.loads(qwen.settings_path.read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["type"] == "http"
    assert hooks["SessionStart"][0]["hooks"][0]["type"] == "command"
    qwen.server.script = Script(main=[turn(shell(FAILING))] * 4 + [say("Giving up.")])
    try:
        run = qwen.run("list missing-dir")
    finally:
        stop_servers(qwen.sandbox.store)

    assert run.returncode == 0, run.describe()
    told = [m.text for m in qwen.server.tool_messages()]
    assert len(told) == 4 and told[3].startswith(SOURCE), told
    _session, events = only_session(qwen.sandbox)
    assert [r["ok"] for _, r in results_by_call(events) if r is not None] == [False] * 3
    log = (qwen.sandbox.store / "run" / "hookd.log").read_text()
    assert "serving HTTP hooks on 127.0.0.1:" in log
