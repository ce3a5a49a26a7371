"""The guard tells the engine what files hold on disk: a re-read of a file changed outside
the agent runs (the stale-read check), and edits are judged by content (an edit that changed
nothing is no change; an undo is a revert). Real files, the real guard and SDK."""

import os
import time
from pathlib import Path

import xxhash

from supervisor.guard import Session
from supervisor.guard.core import Guard
from supervisor.guard.disk import digests, file_state
from supervisor.guard.settings import GuardSettings
from tests.guard_helpers import events, of_type


def _guard(root: Path, work: Path) -> Guard:
    return Guard.open(root, "s1", cwd=work, settings=GuardSettings(checkpoints=False))


def _read(guard: Guard, work: Path, n: int) -> str:
    v = guard.pre_call("Read", {"file_path": str(work / "a.py")}, call_id=f"r{n}")
    if v.proceed:
        try:
            guard.post_call(v.call_id, (work / "a.py").read_text(), ok=True)
        except FileNotFoundError as exc:
            guard.post_call(v.call_id, str(exc), ok=False)
    return v.action


def _touch(path: Path, text: str) -> None:
    path.write_text(text)
    later = time.time() + 5  # a different mtime even on coarse file systems
    os.utime(path, (later, later))


def test_a_reread_of_an_unchanged_file_is_skipped_a_changed_one_runs(root: Path,
                                                                      tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.py").write_text("x = 1\n")
    with _guard(root, work) as guard:
        guard.start("test-agent")
        assert _read(guard, work, 1) == "allow"
        assert _read(guard, work, 2) == "skip"  # nothing changed on disk
        _touch(work / "a.py", "x = 2\n")  # the user's editor, a background job
        assert _read(guard, work, 3) == "allow"
        assert _read(guard, work, 4) == "skip"  # cached anew
        (work / "a.py").unlink()
        assert _read(guard, work, 5) == "allow"
    calls = of_type(events(root, "s1"), "tool_call")
    assert calls[0]["file"]["digest"] and calls[0]["file"]["size"] == 6
    assert calls[-1]["file"]["status"] == "missing"


def test_the_same_size_and_mtime_with_other_content_is_a_change(root: Path,
                                                                tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.py").write_text("x = 1\n")
    stamp = os.stat(work / "a.py").st_mtime_ns
    with _guard(root, work) as guard:
        guard.start("test-agent")
        _read(guard, work, 1)
        (work / "a.py").write_text("y = 1\n")  # same size
        os.utime(work / "a.py", ns=(stamp, stamp))  # same mtime
        assert _read(guard, work, 2) == "allow"


def test_the_sdks_file_cache_checks_the_file_too(root: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text("x = 1\n")
    reads = []
    with Session("test-agent", cwd=work, root=root, session_id="s1", heartbeat_s=None) as s:

        @s.tool
        def Read(file_path: str) -> str:  # the tool's name, as Claude Code calls it
            reads.append(file_path)
            return Path(file_path).read_text()

        assert Read(file_path=str(work / "app.py")) == "x = 1\n"
        assert Read(file_path=str(work / "app.py")) == "x = 1\n"  # from the cache
        assert len(reads) == 1
        _touch(work / "app.py", "x = 22\n")
        assert Read(file_path=str(work / "app.py")) == "x = 22\n"  # the new content
        assert len(reads) == 2


def test_edits_are_judged_by_what_the_files_hold(root: Path, tmp_path: Path) -> None:
    """An edit that changed nothing leaves the workspace as it was (a re-run of the same
    test is then an exact repeat); undoing an edit is a return to the earlier content."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.py").write_text("x = 1\n")
    with _guard(root, work) as guard:
        guard.start("test-agent")

        def sed(n: int, expr: str, content: str | None) -> None:
            v = guard.pre_call("Bash", {"command": f"sed -i '{expr}' a.py"}, call_id=f"c{n}")
            assert v.proceed
            if content is not None:  # what the real sed does to the file
                (work / "a.py").write_text(content)
            guard.post_call(v.call_id, "", ok=True)

        version = guard.engine.st.ws
        sed(1, "s/y/z/", None)  # matches nothing: no change
        assert guard.engine.st.ws == version
        sed(2, "s/x/y/", "y = 1\n")
        changed = guard.engine.st.ws
        assert changed != version
        sed(3, "s/y/x/", "x = 1\n")  # undone: the workspace is what it was
        assert guard.engine.st.ws == version
        assert guard.engine.st.hist[-1]["returned"] == ["a.py"]
        sed(4, "s/x/y/", "y = 1\n")
        assert guard.engine.st.ws == changed
    results = of_type(events(root, "s1"), "tool_result")
    assert all("files" in r for r in results)
    calls = of_type(events(root, "s1"), "tool_call")
    assert calls[0]["files_before"] == {"a.py": xxhash.xxh3_64_hexdigest(b"x = 1\n")}
    assert file_state("a.py", work)["digest"] == xxhash.xxh3_64_hexdigest(b"y = 1\n")


def test_digests_of_odd_files_never_fail(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "fifo")
    got = digests(["missing.py", "d", "fifo"], tmp_path)
    assert got["missing.py"] is None
    assert got["d"] and got["d"].startswith("unreadable") and got["fifo"]
