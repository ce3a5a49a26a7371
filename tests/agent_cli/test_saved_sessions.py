"""The files people save, made by the real binaries: a GitHub Copilot CLI session
(`~/.copilot/session-state/<id>/events.jsonl`) and an OpenCode export (`opencode export <id>`)
of an unsupervised run that repeats a failing command, read by `supervisor analyze` and
`supervisor import` (docs/importers.md). No hooks are installed: the loop is found afterwards."""

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.agent_cli.copilot_runner import Copilot
from tests.agent_cli.e2e import CHECK, FAILING, FOO
from tests.agent_cli.opencode_runner import OpenCode
from tests.agent_cli.sandbox import Sandbox
from tests.agent_cli.script import Script, ToolCall, say, turn


def _script(read: ToolCall) -> Script:
    return Script(main=[turn(ToolCall("bash", {"command": FAILING, "description": "list"}))] * 4
                  + [turn(read), turn(ToolCall("bash", {"command": CHECK, "description": "c"})),
                     say("Done.")])


def _analyzed(sandbox: Sandbox, path: Path, fmt: str) -> dict[str, Any]:
    done = sandbox.supervisor("analyze", "--json", str(path))
    assert done.returncode == 0, done.stderr
    (report,) = [json.loads(line) for line in done.stdout.splitlines()]
    imported = sandbox.supervisor("import", str(path), "-o", str(sandbox.tmp / "imported"))
    assert imported.returncode == 0, imported.stderr
    assert f"({fmt}, 6 steps" in imported.stdout, imported.stdout
    return report


def _found_the_loop(report: dict[str, Any]) -> None:
    assert report["steps"] == 6
    detectors = {f["detector"] for f in report["findings"]}
    assert detectors & {"exact_repeat", "same_error", "recurring_error"}, report["findings"]
    # found on the repeats of the failing command (steps 1-4), not on the read or the check
    assert report["first"]["nudge"] is not None and report["first"]["nudge"] <= 4, report


def test_a_copilot_session_file_is_analyzed(copilot: Copilot) -> None:
    sandbox = copilot.sandbox
    sandbox.write("foo.py", FOO)
    copilot.server.script = _script(ToolCall("view", {"path": str(sandbox.work / "foo.py")}))

    run = copilot.run("list the directory")

    assert run.returncode == 0, run.describe()
    saved = sandbox.home / ".copilot" / "session-state" / str(run.session_id) / "events.jsonl"
    assert saved.is_file(), sorted(sandbox.home.rglob("events.jsonl"))
    _found_the_loop(_analyzed(sandbox, saved, "copilot-cli"))


def test_an_opencode_export_is_analyzed(opencode: OpenCode) -> None:
    sandbox = opencode.sandbox
    sandbox.write("foo.py", FOO)
    opencode.server.script = _script(ToolCall("read", {"filePath": str(sandbox.work / "foo.py")}))

    run = opencode.run("list the directory")

    assert run.returncode == 0, run.describe()
    exported = subprocess.run([str(opencode.executable), "export", str(run.session_id)],
                              cwd=sandbox.work, env=opencode.agent_env(), capture_output=True,
                              text=True, timeout=120)
    assert exported.returncode == 0, exported.stderr
    saved = sandbox.tmp / "session.json"
    saved.write_text(exported.stdout)
    _found_the_loop(_analyzed(sandbox, saved, "opencode"))
