"""benchmarks/corpus-interactive/restore.py over git repositories made here: each labelled run
comes back byte for byte from its blob, the labels are copied, and every row it cannot restore
is named with its reason (and the exit status says the folder is partial)."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "benchmarks" / "corpus-interactive" / "restore.py"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": "/nonexistent", "PATH": "/usr/bin:/bin"}


def _git(where: Path, *args: str, data: bytes | None = None) -> str:
    done = subprocess.run(["git", "-C", str(where), *args], input=data, capture_output=True,
                          env=GIT_ENV, check=True)
    return done.stdout.decode().strip()


def _mirror_with_work_tree(mirrors: Path, files: dict[str, bytes]) -> dict[str, str]:
    """owner+proj/repo/.git, as a snapshot that is a clone: the files committed on a branch."""
    work = mirrors / "owner+proj" / "repo"
    work.mkdir(parents=True)
    _git(work, "init", "-q")
    for name, data in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(data)
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "checkpoint")
    return {name: _git(work, "rev-parse", f"HEAD:{name}") for name in files}


def _bare_mirror(mirrors: Path, data: bytes) -> str:
    """other+bare/repo as a bare git directory holding one loose blob."""
    bare = mirrors / "other+bare" / "repo"
    bare.mkdir(parents=True)
    _git(bare, "init", "-q", "--bare")
    return _git(bare, "hash-object", "-w", "--stdin", data=data)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=60, check=False)


@pytest.mark.slow  # real git repositories
def test_every_labelled_run_is_restored_checked_and_the_failures_named(tmp_path: Path) -> None:
    mirrors = tmp_path / "mirrors"
    # CRLF, no final newline and bytes that are not UTF-8: the copy must be the blob's bytes.
    one = b'{"type": "user"}\r\n{"type": "assistant", "x": "\xff"}'
    blobs = _mirror_with_work_tree(mirrors, {"ab/cd/0/full.jsonl": one})
    two = b'{"timestamp": "2026-01-01T00:00:00Z"}\n'
    bare_blob = _bare_mirror(mirrors, two)
    absent = "0123456789ab"  # in no mirror
    sources = tmp_path / "SOURCES.md"
    sources.write_text(
        "| run | repository | path | blob | first – last event |\n|---|---|---|---|---|\n"
        f"| `claude-code/proj-1` | owner/proj | `ab/cd/0/full.jsonl` | "
        f"`{blobs['ab/cd/0/full.jsonl'][:12]}` | x |\n"
        f"| `codex/bare-2` | other/bare | `codex-session.jsonl` (`abc`) | "
        f"`{bare_blob[:12]}` | x |\n"
        f"| `codex/proj-3` | owner/proj | `ef/01/0/full.jsonl` | `{absent}` | x |\n"
        f"| `claude-code/gone-4` | nobody/fetched | `x` | `{bare_blob[:12]}` | x |\n",
        encoding="utf-8")
    labels = tmp_path / "labels-batch9.jsonl"
    rows = ["claude-code/proj-1", "codex/bare-2", "codex/proj-3", "claude-code/gone-4",
            "codex/unlisted-5"]
    labels.write_text("".join(json.dumps({"run": r, "loop": False}) + "\n" for r in rows),
                      encoding="utf-8")
    out = tmp_path / "out"

    done = _run(str(mirrors), str(out), "--labels", str(labels), "--sources", str(sources))

    assert done.returncode == 1
    assert (out / "claude-code" / "proj-1.jsonl").read_bytes() == one
    assert (out / "codex" / "bare-2.jsonl").read_bytes() == two
    assert (out / "labels.jsonl").read_bytes() == labels.read_bytes()
    assert "restored 2 of 5" in done.stdout
    errors = dict(line.removeprefix("NOT RESTORED ").split(": ", 1)
                  for line in done.stderr.splitlines())
    assert set(errors) == {"codex/proj-3", "claude-code/gone-4", "codex/unlisted-5"}
    assert errors["codex/proj-3"].startswith(f"blob {absent} is not in the mirror")
    assert "fetch github:nobody/fetched" in errors["claude-code/gone-4"]
    assert "no session row" in errors["codex/unlisted-5"]
    assert not (out / "codex" / "proj-3.jsonl").exists()
    assert not list(out.rglob("*.part"))

    whole = tmp_path / "labels-whole.jsonl"
    whole.write_text("".join(json.dumps({"run": r}) + "\n" for r in rows[:2]), encoding="utf-8")
    again = _run(str(mirrors), str(tmp_path / "out2"), "--labels", str(whole),
                 "--sources", str(sources))
    assert again.returncode == 0 and again.stderr == ""
    assert "restored 2 of 2" in again.stdout


def test_the_shipped_sources_name_a_blob_for_every_labelled_run() -> None:
    """Every row of every shipped batch's labels has its repository and blob in SOURCES.md
    (the restore cannot work for a row without one)."""
    spec = importlib.util.spec_from_file_location("corpus_restore", SCRIPT)
    assert spec and spec.loader
    restore = importlib.util.module_from_spec(spec)
    sys.modules["corpus_restore"] = restore  # its dataclass looks its module up there
    spec.loader.exec_module(restore)
    known = restore.read_sources(SCRIPT.parent / "SOURCES.md")
    runs = [json.loads(line)["run"] for labels in sorted(SCRIPT.parent.glob("labels*.jsonl"))
            for line in labels.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(runs) >= 152 and [run for run in runs if run not in known] == []
