"""The real Codex CLI: a patch whose lines are not in the file. Codex applies patches as a
shell command (`apply_patch <<'EOF'`) and runs no hook after it, so the guard checks the patch
at PreToolUse and the model receives where the lines really are with the tool's failure."""

from tests.agent_cli.codex_runner import Codex
from tests.agent_cli.e2e import of_type, only_session
from tests.agent_cli.script import Script, ToolCall, say, turn

PARSER = """\
def parse(text):
    rows = []
    for line in text.splitlines():
        rows.append(line.split(","))
    return rows
"""
PATCH = ("*** Begin Patch\n*** Update File: parser.py\n@@\n"
         "-    for line in text.splitlines():\n-    rows.append(line.split(','))\n"
         "+    pass\n*** End Patch\n")


def test_a_failing_patch_reaches_the_model_with_the_region(codex: Codex) -> None:
    codex.install_hooks()
    codex.sandbox.write("parser.py", PARSER)
    codex.sandbox.commit("add parser")
    command = f"apply_patch <<'EOF'\n{PATCH}EOF"
    codex.server.script = Script(main=[turn(ToolCall("exec_command", {"cmd": command})),
                                       say("I will copy the lines as shown.")])

    run = codex.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    (output,) = codex.server.call_outputs()
    assert "Failed to find expected lines" in output.output  # the tool's own failure
    told = [t for t in codex.server.user_texts() if "Agent Supervisor" in t]
    assert len(told) == 1, codex.server.user_texts()
    assert "The text you searched for is not in parser.py. The closest text is at lines 3-4" \
        in told[0]
    assert "  4 │         rows.append(line.split(\",\"))" in told[0]
    _, events = only_session(codex.sandbox)
    (verdict,) = of_type(events, "verdict")
    assert verdict["action"] == "nudge" and verdict["message"] in told[0]


def test_a_third_identical_failing_command_is_told_to_step_back(codex: Codex) -> None:
    """The same failing script three times, nothing changed: after the third the model reads
    the recovery turn (added context after the command's output)."""
    codex.install_hooks()
    codex.sandbox.write("check.py", "import sys\nprint('add(2, 3) gave 6, not 5')\nsys.exit(1)\n")
    codex.sandbox.commit("add check")
    run_check = ToolCall("exec_command", {"cmd": "python3 check.py"})
    codex.server.script = Script(main=[turn(run_check), turn(run_check), turn(run_check),
                                       say("Stepping back.")])

    run = codex.run("make check.py pass")

    assert run.returncode == 0, run.describe()
    told = [t for t in codex.server.user_texts() if "Loop: step back" in t]
    assert len(told) == 1, codex.server.user_texts()
    assert "Loop: step back. Your last 3 runs did not get you further. Tried: " in told[0]
    assert "(3 times, the same call each time)" in told[0]
    assert "no file changed between them" in told[0]
    _, events = only_session(codex.sandbox)
    (detection,) = of_type(events, "detection")
    assert detection["detector"] == "exact_repeat" and detection["message"] in told[0]


def test_a_patch_over_several_files_records_every_file(codex: Codex) -> None:
    """The patch Codex runs as a shell line names its files only in its headers: the call's
    `files_before` records each (the one it adds as null), and `supervisor tail` says them."""
    codex.install_hooks()
    codex.sandbox.write("parser.py", PARSER)
    codex.sandbox.write("rows.py", "ROWS = []\n")
    codex.sandbox.commit("add parser and rows")
    patch = ("*** Begin Patch\n*** Update File: parser.py\n@@\n-    rows = []\n"
             "+    rows = list()\n*** Update File: rows.py\n@@\n-ROWS = []\n+ROWS = list()\n"
             "*** Add File: notes.md\n+lists\n*** End Patch\n")
    codex.server.script = Script(main=[
        turn(ToolCall("exec_command", {"cmd": f"apply_patch <<'EOF'\n{patch}EOF"})),
        say("Done.")])

    run = codex.run("use list() in parser.py and rows.py")

    assert run.returncode == 0, run.describe()
    assert "ROWS = list()" in (codex.sandbox.work / "rows.py").read_text()  # it ran
    session, events = only_session(codex.sandbox)
    (call,) = of_type(events, "tool_call")
    assert list(call["files_before"]) == ["parser.py", "rows.py", "notes.md"]
    assert call["files_before"]["parser.py"] and call["files_before"]["notes.md"] is None
    tail = codex.sandbox.supervisor("tail", session, "--root", str(codex.sandbox.store))
    assert "on parser.py, rows.py, notes.md: " in tail.stdout, tail.stdout
