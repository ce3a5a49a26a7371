"""Claude Code's tools land in the engine category the hook relies on (default policy): what
counts as a read, a workspace change, a run, a poll or neither decides which detectors apply."""

import pytest

from supervisor.engine import Policy
from supervisor.engine.categories import classify

CASES = [
    ("Read", {"file_path": "/w/a.py"}, "read"),
    ("Grep", {"pattern": "def parse", "path": "/w"}, "read"),
    ("Glob", {"pattern": "**/*.py"}, "read"),
    ("WebFetch", {"url": "https://example.org", "prompt": "summary"}, "read"),
    ("WebSearch", {"query": "python json streaming"}, "read"),
    ("Edit", {"file_path": "/w/a.py", "old_string": "a", "new_string": "b"}, "mutate"),
    ("MultiEdit", {"file_path": "/w/a.py", "edits": []}, "mutate"),
    ("Write", {"file_path": "/w/a.py", "content": "x"}, "mutate"),
    ("NotebookEdit", {"notebook_path": "/w/n.ipynb", "new_source": "x"}, "mutate"),
    ("Bash", {"command": "python -m pytest -q"}, "run"),
    ("Bash", {"command": "cat setup.cfg | head -20"}, "read"),
    ("Bash", {"command": "echo ok > out.txt"}, "mutate"),
    ("BashOutput", {"bash_id": "b1"}, "poll"),
    ("KillShell", {"shell_id": "b1"}, "poll"),
    # the subagent tool: `Agent` since Claude Code 2.1 (a new subagent each time: a run, never
    # a read whose repeat could be skipped), `Task` in older releases
    ("Agent", {"description": "explore", "prompt": "find the parser",
               "subagent_type": "general-purpose"}, "run"),
    ("Task", {"description": "explore", "prompt": "find the parser", "subagent_type": "Explore"},
     "run"),
    ("TodoWrite", {"todos": []}, "other"),
    ("mcp__github__get_issue", {"number": 3}, "read"),
    ("mcp__github__create_issue", {"title": "x"}, "run"),
]


@pytest.mark.parametrize(("tool", "args", "category"), CASES,
                         ids=[f"{t}-{c}" for t, _, c in CASES])
def test_claude_code_tool_category(tool: str, args: dict, category: str) -> None:
    assert classify(tool, args, Policy.profile("default")) == category
