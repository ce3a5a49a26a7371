"""Fingerprints, output normalisation, error classes and tool categories."""

import random
import re

import pytest

from supervisor.engine import Engine, Policy
from supervisor.engine.categories import classify, shell_category
from supervisor.engine.failures import last_lines
from supervisor.engine.fingerprint import (
    call_signature,
    canonical_args,
    error_class,
    normalise_output,
    outcome,
    outcome_hash,
    reports_pending,
)
from supervisor.engine.recovery import output_line

POLICY = Policy.profile("default")


def test_canonical_args_ignore_key_order_and_formatting_whitespace() -> None:
    a = canonical_args({"b": 1, "a": {"y": [1, 2], "x": " s "}})
    b = canonical_args({"a": {"x": "s", "y": [1, 2]}, "b": 1.0})
    assert a == b
    assert call_signature("T", a) == call_signature("T", b)
    assert call_signature("T", a) != call_signature("U", a)


def test_whitespace_inside_code_is_significant_but_commands_collapse() -> None:
    assert canonical_args({"new_str": "a  b"}) != canonical_args({"new_str": "a b"})
    assert canonical_args({"command": "ls   -la\n"}) == canonical_args({"command": "ls -la"})


def test_ignored_keys() -> None:
    ignore = frozenset(POLICY["ignore_arg_keys"])
    assert canonical_args({"command": "ls", "description": "one"}, ignore) == canonical_args(
        {"command": "ls", "description": "two"}, ignore)


@pytest.mark.parametrize(("a", "b"), [
    ("\x1b[32mPASSED\x1b[0m", "PASSED"),
    ("at 2024-01-02T03:04:05.123Z done", "at 2025-11-12 13:14:15 done"),
    ("took 1.23s", "took 45ms"),
    ("object at 0x7f3a2b1c", "object at 0x55d0aa01"),
    ("commit 3f2a9c1d8e", "commit a1b2c3d4e5"),
    ("id 123e4567-e89b-12d3-a456-426614174000", "id 00000000-1111-2222-3333-444444444444"),
    ("wrote /tmp/tmpa8f9_x2q/out.txt", "wrote /tmp/tmpzz91kk0a/out.txt"),
    ("server pid 4242 started", "server pid 977 started"),
    ("Output: (empty)\nExit Code: 1\nProcess Group PGID: 4242",
     "Output: (empty)\nExit Code: 1\nProcess Group PGID: 977"),
    ("12:01:02 tick", "23:59:59 tick"),
    ("ok\n[rerun: b182]", "ok\n[rerun: b7]"),
    ("3 passed\nShell cwd was reset to /Users/a/repo", "3 passed"),
])
def test_noise_is_normalised_away(a: str, b: str) -> None:
    assert normalise_output(a) == normalise_output(b)
    assert outcome_hash(True, a) == outcome_hash(True, b)


WORD_BOUNDARY_FORMS = {
    "<TS>": r"\b\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?",
    "<TIME>": r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b",
    "<UUID>": r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
    "_hex_id": r"\b[0-9a-f]{7,64}\b",
    "<DUR>": r"\b\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|s|sec|secs|seconds?|m|min|minutes?|h)\b",
}
"""The noise patterns as they read with a leading `\b`; `fingerprint._NOISE` writes them led by
their first character class (`re` skips ahead to that class), and must replace the same text."""


def test_noise_patterns_led_by_a_class_replace_what_their_word_boundary_forms_do() -> None:
    from supervisor.engine import fingerprint

    ours = {repl if isinstance(repl, str) else repl.__name__: pattern.get()
            for _, pattern, repl in fingerprint._NOISE}
    rng = random.Random(7)
    pieces = [*"0123456789abcdefABCDEFxyz_-:.+ TZ\n", "١٢", "é", "µs", " ms", "sec", " min",
              "2026-11-29T08:57:20", "2026-11-29 08:57", "12:30:45.5", "deadbeef12",
              "123e4567-e89b-12d3-a456-426614174000", "x1.5s", "_12:30:45"]
    for name, plain in WORD_BOUNDARY_FORMS.items():
        reference = re.compile(plain)
        for _ in range(3000):
            text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
            assert [m.span() for m in ours[name].finditer(text)] == [
                m.span() for m in reference.finditer(text)], (name, text)


@pytest.mark.parametrize("text", [
    '{"id": "r1", "STATUS": "Running"}', "Research In Progress. CONTINUE POLLING for the result",
    '{"id": "r1", "ſtatus": "running"}',  # re.I reads ſ as s; str.lower does not
])
def test_a_status_report_is_found_in_any_case(text: str) -> None:
    assert reports_pending(text)


def test_an_output_without_a_status_word_reports_nothing_pending() -> None:
    assert not reports_pending("3 passed in 0.2s\nall running fine")


def test_the_same_command_answered_only_by_claude_codes_numbered_trailer_is_a_repeat() -> None:
    """Claude Code 2.1.92-2.1.109 ended every Bash result with `[rerun: bN]`, N one more per
    command: `go mod tidy` run again and again with nothing to say (batch 8, steps 360-365) was
    answered `[rerun: b183]`, `[rerun: b184]`, ... and no two outcomes agreed."""
    engine = Engine()
    seen = []
    for i in range(3):
        call = {"call_id": f"c{i}", "tool": "Bash",
                "args": {"command": "go mod tidy 2>&1", "description": f"tidy, try {i}"}}
        check = engine.check(call, 1.0 + 3 * i)
        seen += [f.detector for f in check.findings]
        seen += [f.detector for f in engine.observe(
            {"type": "tool_result", "call_id": f"c{i}", "ok": True,
             "output": f"[rerun: b{183 + i}]", "seq": 2 * i + 2}, 1.5 + 3 * i)]
    assert seen == ["exact_repeat"]


def test_a_line_that_only_mentions_the_trailer_is_kept() -> None:
    assert normalise_output("see [rerun: b3] above") == "see [rerun: b3] above"


def test_real_differences_remain() -> None:
    assert outcome_hash(True, "3 passed") != outcome_hash(True, "2 passed, 1 failed")
    assert outcome_hash(True, "x") != outcome_hash(False, "x")


@pytest.mark.parametrize(("output", "error", "cls"), [
    ("No replacement was performed, old_str `x` did not appear verbatim in /a.py.", None,
     "search_string_not_found"),
    ("String to replace not found in file.", None, "search_string_not_found"),
    ("cat: a.txt: No such file or directory", None, "not_found"),
    ("bash: foo: command not found", "exit code 127", "command_not_found"),
    ("mkdir: cannot create directory '/x': Permission denied", None, "permission_denied"),
    ("  File 'a.py', line 3\nSyntaxError: invalid syntax", None, "syntax_error"),
    ("Your proposed edit has introduced new syntax error(s).", None, "syntax_error"),
    ("Command timed out after 60 seconds", None, "timeout"),
    ("Traceback...\nKeyError: 'x'", None, "exception:KeyError"),
    ("weird", "exit code 3", "exit:3"),
    ("weird", None, "error"),
])
def test_error_classes(output: str, error: str | None, cls: str) -> None:
    assert error_class(False, error, output) == cls
    assert error_class(True, error, output) == ""


@pytest.mark.parametrize(("command", "category"), [
    ("cat a.py", "read"), ("grep -rn foo src | head -5", "read"), ("ls -la", "read"),
    ("find . -name '*.py'", "read"), ("head -20 a.py", "read"), ("git diff", "read"),
    ("cd /repo && git status", "read"),
    ("sed -i 's/a/b/' f.py", "mutate"), ("mv a b", "mutate"), ("rm -rf build", "mutate"),
    ("cp a b", "mutate"), ("echo x > f.txt", "mutate"), ("cat <<'EOF' > a.py\nx\nEOF", "mutate"),
    ("printf x | tee out.txt", "mutate"), ("git apply fix.patch", "mutate"),
    ("git commit -am x", "mutate"), ("patch -p1 < fix.diff", "mutate"),
    ("python -m pytest -q 2>&1 | tail -20", "run"), ("pytest tests/", "run"),
    ("python reproduce.py", "run"), ("make test", "run"), ("npm test", "run"),
    ("cargo test", "run"), ("go test ./...", "run"), ("timeout 60 python x.py", "run"),
    ("ls > /dev/null 2>&1 && python x.py", "run"),
    ("sleep 5", "poll"), ("ps aux | grep server", "poll"), ("tail -f log.txt", "poll"),
    ("curl -s localhost:8000/health", "poll"), ("while ! nc -z db 5432; do sleep 1; done", "poll"),
    ("sleep 10 && cat out.log", "poll"),
    ("python3 - <<'EOF'\nimport re\np='a.py'\nopen(p,'w').write('x')\nEOF", "mutate"),
    ("python -c \"open('f.py', 'w').write('x')\"", "mutate"),
    ("python -c 'import sys; print(sys.version)'", "run"),
])
def test_shell_commands_are_classified_by_command(command: str, category: str) -> None:
    assert shell_category(command) == category
    for tool in ("Bash", "bash", "execute_bash", "run"):
        assert classify(tool, {"command": command}, POLICY) == category


@pytest.mark.parametrize(("tool", "args", "category"), [
    ("Read", {}, "read"), ("Grep", {}, "read"), ("Glob", {}, "read"), ("WebFetch", {}, "read"),
    ("WebSearch", {}, "read"), ("Edit", {}, "mutate"), ("MultiEdit", {}, "mutate"),
    ("Write", {}, "mutate"), ("NotebookEdit", {}, "mutate"), ("BashOutput", {}, "poll"),
    ("KillShell", {}, "poll"), ("Task", {}, "run"), ("TodoWrite", {}, "other"),
    ("mcp__github__get_issue", {}, "read"), ("mcp__github__create_issue", {}, "run"),
    ("read", {}, "read"), ("write", {}, "mutate"), ("edit", {}, "mutate"),
    ("run_ipython", {}, "run"), ("browse", {}, "read"), ("browse_interactive", {}, "read"),
    ("think", {}, "other"), ("finish", {}, "other"), ("delegate", {}, "run"),
    ("str_replace_editor", {"command": "view", "path": "/a"}, "read"),
    ("str_replace_editor", {"command": "str_replace", "path": "/a"}, "mutate"),
    ("str_replace_editor", {"command": "create", "path": "/a"}, "mutate"),
    ("execute_ipython_cell", {}, "run"), ("web_read", {}, "read"), ("browser", {}, "read"),
    ("open", {}, "read"), ("goto", {}, "read"), ("scroll_up", {}, "read"),
    ("scroll_down", {}, "read"), ("create", {}, "mutate"), ("search_file", {}, "read"),
    ("search_dir", {}, "read"), ("find_file", {}, "read"), ("submit", {}, "other"),
    ("some_new_tool", {}, "run"),
    ("run_ipython", {"code": "edit_file_by_replace('/a.py', to_replace='x', new_content='y')"},
     "mutate"),
    ("run_ipython", {"code": "open_file('/a.py')"}, "read"),
    ("run_ipython", {"code": "import numpy; print(numpy.__version__)"}, "run"),
    ("shell", {"command": ["bash", "-lc", "cat a.py"]}, "read"),
    ("shell", {"command": ["bash", "-lc", "apply_patch <<'EOF'\n*** Begin Patch"]}, "mutate"),
    ("read_file", {"absolute_path": "/a"}, "read"), ("search_file_content", {}, "read"),
    ("update_plan", {}, "other"),
])
def test_tool_names_of_known_agents(tool: str, args: dict, category: str) -> None:
    assert classify(tool, args, POLICY) == category


def test_categories_are_configurable() -> None:
    policy = Policy.from_dict({"categories": {"read": ["my_reader"]},
                               "tools": {"deploy_*": {"category": "mutate"}}})
    assert classify("my_reader", {}, policy) == "read"
    assert classify("deploy_prod", {}, policy) == "mutate"


def test_claude_codes_cwd_reset_line_is_the_harness_not_the_program() -> None:
    """`cd sub && pytest` ends with Claude Code's `Shell cwd was reset to /repo`: alone it says
    nothing, and it is not the run's last word (a passing verdict above it stays the verdict,
    and the last lines read for an error are the program's)."""
    trailer = "\nShell cwd was reset to /Users/a/repo"
    assert outcome(True, trailer.strip())[1]  # says nothing
    assert output_line("12 passed in 0.31s" + trailer) == "12 passed in <DUR>"
    assert last_lines("a\nb\nc" + trailer) == ["a", "b", "c"]
