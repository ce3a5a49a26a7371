"""The SDK is typed for its users: a loop written against `supervisor.guard` is checked by their
own `mypy --strict` (the package ships `py.typed`, the lazily imported names are visible to a
type checker, `Session.tool` keeps the signature of the function it guards). Without these,
every name the user imports is `Any` and a wrong use passes unnoticed."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_guard_readme import guard_doc_example, readme_example

pytestmark = pytest.mark.slow  # runs mypy in a subprocess

LOOP = '''
from pathlib import Path

from supervisor.guard import GuardSettings, Session, SessionStopped, ToolRefused, Verdict


def loop(root: Path) -> str | None:
    with Session("a", root=root, settings=GuardSettings(checkpoints=False)) as s:
        @s.tool
        def read(path: str) -> str:
            return path

        @s.tool(name="bash")
        def shell(command: str, timeout: float = 5.0) -> int:
            return len(command)

        v: Verdict = s.before_call("bash", {"command": "ls"})
        if v.proceed:
            hint = s.after_call(v, "out", ok=True, duration=0.1)
        try:
            text: str = read("a")
            code: int = shell("ls")
        except SessionStopped as stopped:
            return str(stopped.verdict.message)
        except ToolRefused as refused:
            return str(refused)
        wrong_verdict: int = v  # E1
        wrong_result: int = read("a")  # E2
        wrong_args = shell(3)  # E3
        return hint
'''


def mypy_strict(tmp_path: Path, name: str, source: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / name).write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
         "--cache-dir", str(tmp_path / "cache"), name],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )


def test_a_users_loop_is_type_checked(tmp_path: Path) -> None:
    done = mypy_strict(tmp_path, "loop.py", LOOP)
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    lines = LOOP.splitlines()
    marked = {f"E{i}" for i in (1, 2, 3)}
    found = {lines[int(e.split(":")[1]) - 1].rsplit("# ", 1)[-1] for e in errors}
    assert found == marked, done.stdout


def test_the_docs_examples_pass_mypy_strict(tmp_path: Path) -> None:
    for name, source in (("readme.py", readme_example()), ("guard_doc.py", guard_doc_example())):
        done = mypy_strict(tmp_path, name, source)
        assert done.returncode == 0, done.stdout
