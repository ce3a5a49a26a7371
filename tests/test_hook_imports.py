"""The hook's import path stays light: a fresh process running one PreToolUse/PostToolUse round
through `supervisor.hooks.local` never loads pydantic, textual, rich or watchfiles."""

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import cli_env

ROUND = r"""
import io, json, sys
from supervisor.hooks.local import run_hook

def once(payload):
    sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode()))
    real, sys.stdout = sys.stdout, io.StringIO()
    try:
        status = run_hook(["claude-code", "--timeout", "60"])
    finally:
        sys.stdout = real
    assert status == 0

common = {"session_id": "imports-1", "cwd": sys.argv[1], "transcript_path": "/tmp/t.jsonl",
          "permission_mode": "default"}
call = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"}
for round_ in range(2):  # a new session, then one that exists
    once({**common, **call, "hook_event_name": "PreToolUse"})
    once({**common, **call, "hook_event_name": "PostToolUse",
          "tool_response": {"stdout": "a.py", "stderr": "", "interrupted": False}})
print(json.dumps(sorted(sys.modules)))
"""
HEAVY = ("pydantic", "textual", "rich", "watchfiles")


def test_a_hook_round_imports_nothing_heavy(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text("x = 1\n")
    done = subprocess.run(
        [sys.executable, "-c", ROUND, str(workspace)], capture_output=True, text=True,
        timeout=60, env=cli_env(SUPERVISOR_HOME=str(tmp_path / "store")),
    )
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout)
    loaded = sorted({m.split(".")[0] for m in modules} & set(HEAVY))
    assert loaded == []
    events = (tmp_path / "store" / "sessions" / "imports-1" / "events.jsonl").read_text()
    kinds = [json.loads(line)["type"] for line in events.splitlines()]
    assert kinds.count("tool_call") == 2 and kinds.count("tool_result") == 2
