"""benchmarks/restore_corpus.py (and benchmarks/corpus-interactive/restore.py, its interactive
form) over git repositories made here: each labelled run comes back byte for byte from its blob,
for either corpus's SOURCES.md layout, the labels are copied, and every row it cannot restore is
named with its reason (and the exit status says the folder is partial)."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "benchmarks" / "restore_corpus.py"
INTERACTIVE_SCRIPT = REPO / "benchmarks" / "corpus-interactive" / "restore.py"
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


def _run(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          timeout=60, check=False)


def _not_restored(stderr: str) -> dict[str, str]:
    return dict(line.removeprefix("NOT RESTORED ").split(": ", 1) for line in stderr.splitlines())


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

    # The command line in use for the interactive batches (without a CORPUS argument).
    done = _run(INTERACTIVE_SCRIPT, str(mirrors), str(out), "--labels", str(labels),
                "--sources", str(sources))

    assert done.returncode == 1
    assert (out / "claude-code" / "proj-1.jsonl").read_bytes() == one
    assert (out / "codex" / "bare-2.jsonl").read_bytes() == two
    assert (out / "labels.jsonl").read_bytes() == labels.read_bytes()
    assert "restored 2 of 5" in done.stdout
    errors = _not_restored(done.stderr)
    assert set(errors) == {"codex/proj-3", "claude-code/gone-4", "codex/unlisted-5"}
    assert errors["codex/proj-3"].startswith(f"blob {absent} is not in the mirror")
    assert "fetch github:nobody/fetched" in errors["claude-code/gone-4"]
    assert "no run row" in errors["codex/unlisted-5"]
    assert not (out / "codex" / "proj-3.jsonl").exists()
    assert not list(out.rglob("*.part"))

    whole = tmp_path / "labels-whole.jsonl"
    whole.write_text("".join(json.dumps({"run": r}) + "\n" for r in rows[:2]), encoding="utf-8")
    again = _run(SCRIPT, "interactive", str(mirrors), str(tmp_path / "out2"), "--labels",
                 str(whole), "--sources", str(sources))
    assert again.returncode == 0 and again.stderr == ""
    assert "restored 2 of 2" in again.stdout


@pytest.mark.slow  # real git repositories
def test_the_mini_swe_agent_layout_one_repository_and_runs_named_within_a_source(
        tmp_path: Path) -> None:
    """corpus-labelled/SOURCES.md names its repository once, in its own table, and its runs
    without their folder (`run (mini-swe-agent/…)`); the files are `.traj.json`."""
    mirrors = tmp_path / "mirrors"
    traj = b'{"info": {"exit_status": "Submitted"},\n "messages": []}'
    blobs = _mirror_with_work_tree(mirrors, {"output/a/a.traj.json": traj})
    sources = tmp_path / "SOURCES.md"
    sources.write_text(
        "## Repository and licence\n| repository | refs used | licence | note |\n"
        "|---|---|---|---|\n"
        "| owner/proj | `refs/pull/1/head` | MIT | x |\n\n## Runs\n"
        "| run (mini-swe-agent/…) | path in repository | PR | blob | size | loop |\n"
        "|---|---|---|---|---|---|\n"
        f"| ds-a | `output/a/a.traj.json` | #1 | `{blobs['output/a/a.traj.json']}` | 1 KB "
        "| loop |\n"
        "| ds-b | `output/b/b.traj.json` | #1 | `0123456789abcdef0123456789abcdef01234567` | 1 KB "
        "| no loop |\n", encoding="utf-8")
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"run": f"mini-swe-agent/{r}"}) + "\n"
                              for r in ("ds-a", "ds-b", "ds-c")), encoding="utf-8")
    out = tmp_path / "out"

    done = _run(SCRIPT, "labelled", str(mirrors), str(out), "--labels", str(labels),
                "--sources", str(sources))

    assert done.returncode == 1
    assert (out / "mini-swe-agent" / "ds-a.traj.json").read_bytes() == traj
    assert (out / "labels.jsonl").read_bytes() == labels.read_bytes()
    assert "restored 1 of 3" in done.stdout
    errors = _not_restored(done.stderr)
    assert set(errors) == {"mini-swe-agent/ds-b", "mini-swe-agent/ds-c"}
    assert errors["mini-swe-agent/ds-b"].startswith("blob 0123456789abcdef")
    assert "no run row" in errors["mini-swe-agent/ds-c"]


@pytest.mark.parametrize(("corpus", "at_least"), [("interactive", 172), ("labelled", 40)])
def test_the_shipped_sources_name_a_blob_for_every_labelled_run(corpus: str,
                                                                at_least: int) -> None:
    """Every row of every shipped labels file of each corpus has its repository and blob in its
    SOURCES.md (the restore cannot work for a row without one)."""
    spec = importlib.util.spec_from_file_location("restore_corpus", SCRIPT)
    assert spec and spec.loader
    restore = importlib.util.module_from_spec(spec)
    sys.modules["restore_corpus"] = restore  # its dataclass looks its module up there
    spec.loader.exec_module(restore)
    folder = restore.CORPORA[corpus].folder
    known = restore.read_sources(folder / "SOURCES.md")
    runs = [json.loads(line)["run"] for labels in sorted(folder.glob("labels*.jsonl"))
            for line in labels.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(runs) >= at_least and [run for run in runs if run not in known] == []
