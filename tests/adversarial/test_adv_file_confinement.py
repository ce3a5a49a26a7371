"""No file outside the session's work tree reaches the agent or the store (issue 24, item 1).

The guard reads files for guidance (the closest text of a failed edit, the lines changed since
the agent read a file, the digests the engine compares) before the agent's own tool runs. An
agent that names a file outside its work tree (an absolute path, `../`, a symbolic link in the
tree that leads out) used to get that file's lines in its context, and they were written to
`events.jsonl` (which a relay ships to Redis) and to the session's copies of read files. The
real hook, in real processes, on a real work tree."""

import json
import os
from pathlib import Path

import pytest

from supervisor.guard.fileread import confine, read_file
from tests.hook_helpers import payload, run_hook

SECRET = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"
NOT_FOUND = "String to replace not found in file.\nString: AWS_SECRET_ACCESS_KEY=old"


def _world(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(store root, work tree, a secret file beside the tree)."""
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "app.py").write_text("print('hello')\n")
    secret = tmp_path / "secrets.env"
    secret.write_text(f"# production\n{SECRET}\n")
    (ws / "config.env").symlink_to(secret)  # a link in the tree, leading out
    return tmp_path / "store", ws, secret


def _everything_written(root: Path) -> str:
    out = []
    for path in root.rglob("*"):
        if path.is_file():
            out.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


@pytest.mark.slow
@pytest.mark.parametrize("named", ["{secret}", "../secrets.env", "config.env",
                                   "sub/../../secrets.env"])
def test_a_failed_edit_of_a_file_outside_the_tree_shows_none_of_it(tmp_path: Path,
                                                                   named: str) -> None:
    root, ws, secret = _world(tmp_path)
    path = named.format(secret=secret)
    edit = {"file_path": path, "old_string": "AWS_SECRET_ACCESS_KEY=old",
            "new_string": "AWS_SECRET_ACCESS_KEY=new"}
    pre = run_hook(payload("PreToolUse", cwd=ws, tool_name="Edit", tool_input=edit,
                           tool_use_id="toolu_1"), root)
    assert pre.returncode == 0, pre.stderr
    post = run_hook(payload("PostToolUseFailure", cwd=ws, tool_name="Edit", tool_input=edit,
                            tool_use_id="toolu_1", error=NOT_FOUND), root)
    assert post.returncode == 0, post.stderr
    context = json.loads(post.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "outside the session's work tree" in context
    assert "wJalrXUtnFEMI" not in context  # the agent is told nothing of the file
    assert "wJalrXUtnFEMI" not in _everything_written(root)  # nor is the store


def test_a_successful_read_outside_the_tree_is_not_copied_or_hashed(tmp_path: Path) -> None:
    root, ws, secret = _world(tmp_path)
    for name in (str(secret), "config.env"):
        read = {"file_path": name}
        for event, extra in (("PreToolUse", {}),
                             ("PostToolUse", {"tool_response": {"content": "(elided)"}})):
            done = run_hook(payload(event, cwd=ws, tool_name="Read", tool_input=read,
                                    tool_use_id=f"toolu_{name[-3:]}", **extra), root)
            assert done.returncode == 0, done.stderr
    written = _everything_written(root)
    assert "wJalrXUtnFEMI" not in written
    reads = root / "sessions" / "loop-1" / "reads"
    assert not reads.exists() or not any(reads.iterdir())
    # not even the size of the outside file is recorded with the call
    calls = [json.loads(line) for line in
             (root / "sessions" / "loop-1" / "events.jsonl").read_text().splitlines()]
    files = [e["file"] for e in calls if e["type"] == "tool_call" and "file" in e]
    assert files and all(f.get("status") == "outside" and "size" not in f for f in files)


def test_inside_the_tree_is_still_read(tmp_path: Path) -> None:
    _root, ws, _secret = _world(tmp_path)
    (ws / "pkg").mkdir()
    (ws / "pkg" / "mod.py").write_text("x = 1\n")
    os.symlink("mod.py", ws / "pkg" / "alias.py")  # a link that stays inside
    assert read_file("pkg/mod.py", cwd=ws).text == "x = 1\n"
    assert read_file(str(ws / "pkg" / "alias.py"), cwd=ws).text == "x = 1\n"
    assert read_file("../app.py", cwd=ws / "pkg").status == "unreadable"  # above the tree


def test_confine_refuses_every_way_out(tmp_path: Path) -> None:
    _root, ws, secret = _world(tmp_path)
    (ws / "out").symlink_to(tmp_path, target_is_directory=True)  # a directory link out
    for path in (str(secret), "../secrets.env", "config.env", "out/secrets.env", "~/x",
                 "/etc/passwd", "", str(ws)):
        assert confine(path, ws) is None, path
    assert confine("app.py", None) is None  # no work tree: nothing is read
    assert confine("app.py", ws) == ws.resolve() / "app.py"
