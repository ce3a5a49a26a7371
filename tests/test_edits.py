"""What an edit call asks for (supervisor.engine.edits), from each agent's own tool shape, and
why an edit failed, from each tool's own words."""

import pytest

from supervisor.engine.edits import Edit, edit_failure, edits_of


def test_claude_code_edit_multiedit_write() -> None:
    assert edits_of("Edit", {"file_path": "/w/foo.py", "old_string": "return a - b",
                             "new_string": "return a + b", "replace_all": False}) == [
        Edit("replace", "/w/foo.py", "return a + b", "return a - b")]
    assert edits_of("MultiEdit", {"file_path": "f", "edits": [
        {"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d",
                                                  "replace_all": True}, "junk"]}) == [
        Edit("replace", "f", "b", "a"), Edit("replace", "f", "d", "c", replace_all=True)]
    assert edits_of("Write", {"file_path": "f", "content": "x\n"}) == [Edit("write", "f", "x\n")]


def test_str_replace_editor_commands() -> None:
    base = {"path": "/w/m.c"}
    assert edits_of("str_replace_editor", {**base, "command": "str_replace", "old_str": "a",
                                           "new_str": "b"}) == [Edit("replace", "/w/m.c", "b", "a")]
    assert edits_of("edit", {**base, "command": "insert", "insert_line": 317,
                             "new_str": "x;"}) == [Edit("insert", "/w/m.c", "x;", line=317)]
    assert edits_of("edit", {**base, "command": "create", "file_text": "t"}) == [
        Edit("write", "/w/m.c", "t")]
    assert edits_of("str_replace_editor", {**base, "command": "view"}) == []
    # a str_replace without old_str (the ponyc runs have them) asks for nothing we can follow
    assert edits_of("edit", {**base, "command": "str_replace", "old_str": None}) == []


def test_swe_agent_edits() -> None:
    assert edits_of("edit", {"start_line": "4", "end_line": 5, "replacement_text": "y\n",
                             "path": "/r/a.py"}) == [Edit("lines", "/r/a.py", "y\n", line=4, end=5)]
    # 1.x windowed edit works on the open file: the path is not in the arguments
    assert edits_of("edit", {"search": "a", "replace": "b", "replace-all": False}) == [
        Edit("replace", "", "b", "a")]


def test_gemini_cli_replace_and_write_file() -> None:
    assert edits_of("replace", {"file_path": "p", "old_string": "x", "new_string": "y"}) \
        == [Edit("replace", "p", "y", "x")]
    assert edits_of("write_file", {"file_path": "p", "content": ""}) == [Edit("write", "p", "")]


def test_opencode_edit_and_write_as_the_hook_target_records_them() -> None:
    """OpenCode's `edit`/`write` (camelCase arguments, renamed by supervisor.hooks.opencode)."""
    assert edits_of("edit", {"file_path": "/w/f.py", "old_string": "a", "new_string": "b",
                             "replace_all": True}) == [
        Edit("replace", "/w/f.py", "b", "a", replace_all=True)]
    assert edits_of("write", {"file_path": "/w/n.md", "content": "x\n"}) == [
        Edit("write", "/w/n.md", "x\n")]
    assert edits_of("write", {"file_path": "/w/n.md"}) == []


def test_cline_editor() -> None:
    assert edits_of("editor", {"path": "/w/f.py", "old_text": "a", "new_text": "b"}) == [
        Edit("replace", "/w/f.py", "b", "a")]
    assert edits_of("editor", {"path": "/w/n.md", "new_text": "x", "old_text": None}) == [
        Edit("write", "/w/n.md", "x")]
    assert edits_of("editor", {"path": "/w/f.py", "new_text": "x", "insert_line": 3}) == [
        Edit("insert", "/w/f.py", "x", line=2)]
    assert edits_of("editor", {"path": "/w/f.py"}) == []


def test_openhands_ipython_helpers() -> None:
    code = ("edit_file_by_replace(\n'/w/App.tsx',\nto_replace=\"\"\"a\nb\"\"\",\n"
            "new_content=\"\"\"c\"\"\"\n)\ncreate_file('/w/n.txt')")
    assert edits_of("run_ipython", {"code": code}) == [
        Edit("replace", "/w/App.tsx", "c", "a\nb"), Edit("write", "/w/n.txt", "")]
    assert edits_of("run_ipython", {"code": "edit_file_by_replace(name, to_replace=x)"}) == []
    assert edits_of("run_ipython", {"code": "edit_file_by_replace(("}) == []


def test_codex_apply_patch() -> None:
    patch = ("*** Begin Patch\n*** Update File: src/a.py\n@@ def f():\n     x = 1\n-    y = 2\n"
             "+    y = 3\n@@\n-z = 0\n+z = 1\n*** Add File: new.txt\n+hello\n*** End Patch")
    assert edits_of("apply_patch", {"input": patch}) == [
        Edit("replace", "src/a.py", "    x = 1\n    y = 3", "    x = 1\n    y = 2", patch=True),
        Edit("replace", "src/a.py", "z = 1", "z = 0", patch=True),
        Edit("write", "new.txt", "hello\n"),
    ]


def test_codex_apply_patch_as_the_shell_runs_it() -> None:
    patch = "*** Begin Patch\n*** Update File: p.py\n@@\n-a = 1\n+a = 2\n*** End Patch\n"
    want = [Edit("replace", "p.py", "a = 2", "a = 1", patch=True)]
    assert edits_of("Bash", {"command": f"apply_patch <<'EOF'\n{patch}EOF"}) == want
    assert edits_of("exec_command", {"cmd": f'apply_patch <<"PATCH"\n{patch}PATCH\n'}) == want
    assert edits_of("Bash", {"command": f"apply_patch '{patch}'"}) == want
    assert edits_of("Bash", {"command": "echo apply_patch"}) == []
    assert edits_of("Bash", {"command": "apply_patch 'unclosed"}) == []


@pytest.mark.parametrize("tool,args", [
    ("Bash", {"command": "sed -i s/a/b/ f"}), ("Edit", {"file_path": "f"}), ("Edit", None),
    ("Read", {"file_path": "f"}), ("MultiEdit", {"file_path": "f", "edits": "x"}),
])
def test_calls_that_are_no_followable_edit(tool: str, args: object) -> None:
    assert edits_of(tool, args) == []


@pytest.mark.parametrize("output", [
    # each tool's own words, as recorded in real runs or captured from the real binary
    "<tool_use_error>String to replace not found in file.\nString: return a + c</tool_use_error>",
    "ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim in /w/m.c.",
    "[No exact match found in /workspace/src/PullRequestViewer.tsx for\n```\nimport",
    "Failed to edit, 0 occurrences found for old_string in /w/a.py. No edits made.",
    # Gemini CLI 0.61's replace, captured from the real binary
    "Could not find an exact match for 'old_string' in 'parser.py'. If previous edits "
    "modified the file or you are modifying",
    "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in a.ts",
    "apply_patch verification failed: Failed to find expected lines in src/a.py:\n    y = 2",
    # OpenCode 1.18's edit (and Kilo's), from the real binary
    "Could not find oldString in the file. It must match exactly, including whitespace, "
    "indentation, and line endings.",
    # Cline 3.0's editor, from the real binary
    "Editor operation failed: No replacement performed: text not found in /w/foo.py.",
    # Pi 0.73's edit: one replacement (from the real binary), one of several (its source)
    "Could not find the exact text in /w/foo.py. The old text must match exactly including "
    "all whitespace and newlines.",
    "Could not find edits[1] in /w/foo.py. The oldText must match exactly including all "
    "whitespace and newlines.",
])
def test_not_found_in_every_tools_words(output: str) -> None:
    assert edit_failure(output) == "not_found"


@pytest.mark.parametrize("output", [
    "ERROR:\nNo replacement was performed. Multiple occurrences of old_str `return x;` in "
    "lines [317, 449]. Please ensure it is unique.",
    "<tool_use_error>Found 2 matches of the string to replace, but replace_all is false.",
    "Failed to edit, expected 1 occurrence but found 3 for old_string in file: /w/a.py",
    "Found multiple matches for oldString. Provide more surrounding lines in oldString to "
    "identify the correct match.",
    "Editor operation failed: No replacement performed: multiple occurrences of text found in "
    "/w/foo.py.",
    # Pi 0.73's edit (its source)
    "Found 2 occurrences of the text in /w/foo.py. The text must be unique. Please provide "
    "more context to make it unique.",
])
def test_ambiguous_in_every_tools_words(output: str) -> None:
    assert edit_failure(output) == "ambiguous"


@pytest.mark.parametrize("output", [
    "", "Exit code 1\nTraceback ...", "ERROR:\nParameter `old_str` is required for command: "
    "str_replace.", "grep: pattern not found", None,
])
def test_other_failures_are_neither(output: str | None) -> None:
    assert edit_failure(output) is None
