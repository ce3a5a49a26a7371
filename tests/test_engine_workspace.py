"""What the engine knows of files: shell lines parsed, content followed from calls, reverts."""

import random
import threading

import pytest

from supervisor.engine import shell
from supervisor.engine import workspace as ws
from supervisor.engine.shell import (
    commands,
    last_pipeline_head,
    probe_files,
    program,
    run_words,
)


def _words(line: str) -> list[list[str]]:
    return [c.words for c in commands(line)]


def test_shell_lines_split_into_commands_with_heredocs_and_redirections() -> None:
    line = ("cd /testbed && cat > fix.py << 'EOF'\nopen('a/b.py', 'w').write('x')\nEOF\n\n"
            "python fix.py 2>&1 | tail -5  # run it\nsudo -E env X=1 ./run.sh arg")
    cmds = commands(line)
    assert [c.words for c in cmds] == [["cat"], ["python", "fix.py"], ["tail", "-5"],
                                       ["./run.sh", "arg"]]
    assert cmds[0].redirects == [(">", "fix.py")] and "open('a/b.py'" in (cmds[0].stdin or "")
    assert cmds[0].cwd == "/testbed" and cmds[1].piped and not cmds[2].piped
    assert _words("echo 'unbalanced") == [["echo", "'unbalanced"]]  # never raises
    assert _words("ls # a comment\npwd") == [["ls"], ["pwd"]]
    assert _words("ls #\npwd") == [["ls"], ["pwd"]]


def test_a_quoted_argument_that_starts_like_a_comment_is_an_argument() -> None:
    """A pull request's body (`## Summary` and a newline, quoted) once made the comment skip
    stand still on its word: the engine never answered that call. (Split in a thread, so
    that the old fault fails the test instead of hanging the run.)"""
    body = "## Summary\n- the fix\n\n## Test plan\n- pytest"
    line = f'gh pr create --title "Fix" --body "{body}" && echo done'
    split: list[list[list[str]]] = []
    worker = threading.Thread(target=lambda: split.append(_words(line)), daemon=True)
    worker.start()
    worker.join(10)
    assert split == [[["gh", "pr", "create", "--title", "Fix", "--body", body],
                      ["echo", "done"]]]
    assert _words("") == []


def test_a_hash_starts_a_comment_only_at_a_words_start_outside_quotes() -> None:
    """`grep '#include' x.c` searches for `#include`: the quotes make the `#` part of a word,
    as a `#` inside a word, an escaped one and `${#list[@]}` are; the rest of the line was
    read as a comment, and the search as `grep` alone."""
    assert _words("grep '#include' x.c") == [["grep", "#include", "x.c"]]
    assert _words('grep -rn "#pragma once" src | head -5') == [
        ["grep", "-rn", "#pragma once", "src"], ["head", "-5"]]
    assert _words(r"echo \#x a#b ${#list[@]}  # the count") == [
        ["echo", "#x", "a#b", "${#list[@]}"]]
    assert _words("ls;# x\npwd") == [["ls"], ["pwd"]]
    assert run_words("grep '#include' x.c | wc -l") == ["grep", "#include", "x.c"]


def test_what_a_command_runs_and_which_files_are_a_probes_own() -> None:
    assert program(commands("python3 -u tests/reproduce.py --fast")[0]) == "python3 reproduce.py"
    assert program(commands("python -c 'print(1)'")[0]) == "python -c"
    assert program(commands("python -m pytest -q")[0]) == "python -m pytest"
    assert program(commands("pip install -q numpy")[0]) == "pip install"
    assert program(commands("make clean")[0]) == "make"
    head = last_pipeline_head(commands("cd x && python t.py 2>&1 | grep -v Warn | head"))
    assert head is not None and head.words == ["python", "t.py"]
    assert probe_files("python reproduce.py && pytest tests/test_x.py::test_y -q") == [
        "reproduce.py", "tests/test_x.py"]
    assert probe_files("python -c 'import x' && ./check.sh") == ["./check.sh"]


def _apply(mem: dict, i: int, line: str, ok: bool = True) -> list[dict]:
    planned = ws.plan("bash", {"command": line})
    return ws.apply(mem, i, planned, ok, None, True)


def test_restores_from_a_backup_are_returns_to_earlier_content() -> None:
    mem = ws.new_memory()
    start = ws.version(mem)
    assert _apply(mem, 0, "cp pkg/mod.py pkg/mod.py.bak")[0]["kind"] == "create"
    _apply(mem, 1, "cat > fix.py << 'EOF'\nsrc = open('pkg/mod.py').read()\n"
                   "open('pkg/mod.py', 'w').write(src + '#')\nEOF")
    edited = _apply(mem, 2, "python fix.py")
    assert edited == [{"file": "pkg/mod.py", "kind": "edit", "returned": False}]
    back = _apply(mem, 3, "cd /testbed && cp /testbed/pkg/mod.py.bak pkg/mod.py")
    assert back == [{"file": "pkg/mod.py", "kind": "edit", "returned": True}]
    assert _apply(mem, 4, "python fix.py")[0]["returned"]  # the same script: the same content
    # restore and patch in one line is not a return: the content after the line is unknown
    changes = _apply(mem, 5, "cp pkg/mod.py.bak pkg/mod.py && patch -p1 < x.diff")
    assert not any(c["returned"] for c in changes) and changes[-1]["file"] == ws.UNKNOWN_FILE
    assert ws.version(mem) != start


def test_replacements_undone_restore_the_version() -> None:
    mem = ws.new_memory()

    def edit(i: int, old: str, new: str) -> list[dict]:
        planned = ws.plan("str_replace_editor", {"command": "str_replace", "path": "/r/a.py",
                                                 "old_str": old, "new_str": new})
        return ws.apply(mem, i, planned, True, None, True)

    before = ws.version(mem)
    edit(0, "A", "B")
    after = ws.version(mem)
    assert edit(1, "B", "A")[0]["returned"] and ws.version(mem) == before
    assert edit(2, "A", "B")[0]["returned"] and ws.version(mem) == after
    edit(3, "A", "B")  # a success: another occurrence of A was replaced
    assert ws.version(mem) not in (before, after)


def test_git_checkout_and_failed_lines() -> None:
    mem = ws.new_memory()
    _apply(mem, 0, "sed -i 's/a/b/' src/x.py")
    assert _apply(mem, 1, "git checkout -- src/x.py")[0]["returned"]
    # a failed line keeps what ran before its last command
    changes = _apply(mem, 2, "sed -i 's/a/c/' src/x.py && python -m pytest -q", ok=False)
    assert changes[0]["file"] == "src/x.py"
    assert _apply(mem, 3, "python -m pytest -q", ok=False) == []
    assert _apply(mem, 4, "pip install foo") == [
        {"file": ws.UNKNOWN_FILE, "kind": "unknown", "returned": False}]


def test_digests_from_the_guard_are_the_truth() -> None:
    mem = ws.new_memory()
    planned = ws.plan("Edit", {"file_path": "/w/a.py", "old_string": "x", "new_string": "y"})
    assert ws.touched_paths(planned) == ["/w/a.py"]
    first = ws.apply(mem, 0, planned, True, {"/w/a.py": "d1"}, True)
    assert first[0]["file"] == "w/a.py"
    assert ws.apply(mem, 1, planned, True, {"/w/a.py": "d1"}, True) == []  # nothing changed
    ws.apply(mem, 2, planned, True, {"/w/a.py": "d2"}, True)
    assert ws.apply(mem, 3, planned, True, {"/w/a.py": "d1"}, True)[0]["returned"]


def test_a_script_written_and_run_in_one_line_is_known_before_it_runs() -> None:
    mem = ws.new_memory()
    planned = ws.plan("bash", {"command": "cat > f.py << 'EOF'\nopen('pkg/m.py','w').write('')"
                                          "\nEOF\npython f.py"})
    assert ws.touched_keys(mem, planned) == ["f.py", "pkg/m.py"]
    shell = ws.plan("bash", {"command": "cat > fix.sh << 'EOF'\n#!/bin/bash\n"
                                        "sed -i 's/a/b/' pkg/m.py\nEOF\nbash fix.sh"})
    assert "pkg/m.py" in ws.touched_keys(mem, shell)


def test_a_look_that_shows_something_new_reveals_an_unannounced_change() -> None:
    mem = ws.new_memory()
    path = ws.viewed_path(None, commands("sed -n '1,9p' src/a.py | cat -n"))
    assert path == "src/a.py"
    assert ws.observe_view(mem, 0, path, "sig", "out1") == []
    assert ws.observe_view(mem, 1, path, "sig", "out1") == []
    changed = ws.observe_view(mem, 2, path, "sig", "out2")
    assert changed == [{"file": "src/a.py", "kind": "edit", "returned": False}]
    assert ws.viewed_path(None, commands("grep -n x a.py b.py")) is None


@pytest.mark.parametrize("path", ["/testbed/pkg/a.py", "pkg/a.py", "./pkg/a.py"])
def test_one_file_from_any_working_directory(path: str) -> None:
    assert ws.file_key(path) == "pkg/a.py"


def test_the_memory_is_bounded() -> None:
    mem = ws.new_memory()
    for i in range(600):
        _apply(mem, i, f"echo {i} > f{i}.txt")
    assert len(mem["files"]) <= 128 and len(mem["changes"]) <= 64
    assert all(len(e["history"]) <= 8 for e in mem["files"].values())


def test_digests_that_cannot_see_the_files_are_not_believed() -> None:
    """A successful edit leaving its file missing means the guard looks elsewhere (another
    working directory): the edit is followed from its arguments instead."""
    mem = ws.new_memory()
    planned = ws.plan("Edit", {"file_path": "src/a.py", "old_string": "x", "new_string": "y"})
    changes = ws.apply(mem, 0, planned, True, {"src/a.py": None}, True)
    assert changes == [{"file": "src/a.py", "kind": "edit", "returned": False}]
    gone = ws.plan("bash", {"command": "rm src/b.py"})
    ws.apply(mem, 1, gone, True, {"src/b.py": "d0"}, True)
    assert ws.apply(mem, 2, gone, True, {"src/b.py": None}, True)[0]["file"] == "src/b.py"


@pytest.mark.parametrize("line", [
    "grep -rn 'def x' src | head -5 && echo \"done: $HOME\"",
    "python -c \"print('a;b')\" 2>&1 | tail -3; ls \\; x",
    "echo \"a\\\"b\\\\c\\d\" '' \"\" it\\'s",
    "cd 'my dir'&&(make ||true)\nnext",
])
def test_a_quoted_line_is_tokenised_as_shlex_tokenises_it(line: str) -> None:
    assert shell._scanned(line) == shell._lexed(line)


def test_the_scanner_agrees_with_shlex_on_every_random_line() -> None:
    """`shell._scanned` stands in for `shlex` (three times faster): it must make the same
    tokens of any line `shlex` reads, and give up (None) only on a line `shlex` cannot read."""
    rng = random.Random(3)
    alphabet = [*" \t\r\n;&|<>()'\"\\ab-=.$#", "é", "\x0b", "&&", "2>&1", "''", '""', "\\\n"]
    for _ in range(20_000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 25)))
        scanned = shell._scanned(line)
        if scanned is None:
            lexer = shell.shlex.shlex(line, posix=True, punctuation_chars=";&|<>()\n")
            lexer.whitespace, lexer.whitespace_split, lexer.commenters = " \t\r", True, ""
            with pytest.raises(ValueError):
                list(lexer)
        else:
            assert scanned == shell._lexed(line), line
