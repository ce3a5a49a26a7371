"""Restore one batch of the labelled interactive corpus from fetched git mirrors.

The run files are never committed (fetched data lives outside the repository), so a new machine
has only the labels and `SOURCES.md`, which names each session's repository and git blob. This
script replaces the hand procedure the README used to give: for every row of the batch's labels
it finds the row's repository and blob in `SOURCES.md`, writes `git cat-file blob` into
`<out>/<run>.jsonl` (the run name is `<agent>/<name>`), checks the copy with `git hash-object`,
and copies the batch's labels file to `<out>/labels.jsonl` (the name the quality benchmark reads).
Every row it could not restore is named with the reason, and the exit status is then 1, so a
partial folder is never taken for a whole one.

    python benchmarks/corpus-interactive/restore.py MIRRORS OUT [--batch N]

e.g. `restore.py /work/.mirror /work/corpus-interactive-3 --batch 3`.

`MIRRORS` is the directory the search tool's `fetch` fills: one `<owner>+<name>/` per repository,
holding the git directory at `repo/.git` or `repo/`. Standard library only: it must run before
anything is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent

# A session row of SOURCES.md: | `<run>` | <owner/name> | <path> | `<blob id>` | ...
_ROW = re.compile(r"^\|\s*`(?P<run>[^`/]+/[^`]+)`\s*\|\s*(?P<repo>[^|\s]+/[^|\s]+)\s*\|"
                  r"[^|]*\|\s*`(?P<blob>[0-9a-f]{7,40})`\s*\|")


@dataclass(frozen=True)
class Source:
    repo: str
    blob: str


def labels_file(batch: int) -> Path:
    """Batch 1's labels are `labels.jsonl`; batch N's are `labels-batchN.jsonl`."""
    return HERE / ("labels.jsonl" if batch == 1 else f"labels-batch{batch}.jsonl")


def read_sources(path: Path) -> dict[str, Source]:
    """Every session row of every batch's table: run name -> repository and blob id."""
    found: dict[str, Source] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = _ROW.match(line)
        if row:
            found[row["run"]] = Source(row["repo"], row["blob"])
    return found


def git_dir(mirrors: Path, repo: str) -> Path | None:
    """The fetched git directory of `owner/name` (a bare snapshot or a clone with a work tree)."""
    base = mirrors / repo.replace("/", "+")
    for candidate in (base / "repo" / ".git", base / "repo", base):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def _git(gdir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", f"--git-dir={gdir}", *args], capture_output=True, check=False)


def restore_one(gdir: Path, blob: str, target: Path) -> str | None:
    """Write the blob to `target` and check it; the reason it failed, or None."""
    kind = _git(gdir, "cat-file", "-t", blob)
    if kind.returncode != 0:
        said = kind.stderr.decode(errors="replace").strip().splitlines() or ["git said nothing"]
        return f"blob {blob} is not in the mirror {gdir} ({said[0]})"
    if kind.stdout.strip() != b"blob":
        return f"{blob} is a {kind.stdout.decode().strip()} in {gdir}, not a blob"
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    with part.open("wb") as out:
        copied = subprocess.run(["git", f"--git-dir={gdir}", "cat-file", "blob", blob],
                                stdout=out, stderr=subprocess.PIPE, check=False)
    if copied.returncode != 0:
        part.unlink()
        return f"git cat-file blob {blob} failed: {copied.stderr.decode(errors='replace').strip()}"
    hashed = _git(gdir, "hash-object", "--no-filters", str(part)).stdout.decode().strip()
    if not hashed.startswith(blob):
        part.unlink()
        return f"git hash-object of the copy prints {hashed or 'nothing'}, not {blob}"
    os.replace(part, target)
    return None


def restore(mirrors: Path, out: Path, labels: Path, sources: Path) -> list[tuple[str, str]]:
    """Restore every labelled row into `out`; the rows not restored, each with its reason."""
    by_run = read_sources(sources)
    failed: list[tuple[str, str]] = []
    out.mkdir(parents=True, exist_ok=True)
    for line in labels.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        run = json.loads(line)["run"]
        source = by_run.get(run)
        if source is None:
            failed.append((run, f"no session row for it in {sources}"))
            continue
        gdir = git_dir(mirrors, source.repo)
        if gdir is None:
            failed.append((run, f"{source.repo} is not fetched under {mirrors} "
                                f"(fetch github:{source.repo})"))
            continue
        why = restore_one(gdir, source.blob, out / f"{run}.jsonl")
        if why:
            failed.append((run, why))
    shutil.copyfile(labels, out / "labels.jsonl")
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mirrors", type=Path, help="directory of fetched mirrors (owner+name/)")
    parser.add_argument("out", type=Path, help="folder to restore the batch into")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--batch", type=int, default=1, help="batch number (default 1)")
    which.add_argument("--labels", type=Path, help="a labels file instead of a batch's")
    parser.add_argument("--sources", type=Path, default=HERE / "SOURCES.md",
                        help="the SOURCES.md naming each run's repository and blob")
    args = parser.parse_args(argv)
    labels = args.labels or labels_file(args.batch)
    if not labels.is_file():
        print(f"no labels file {labels}", file=sys.stderr)
        return 2
    failed = restore(args.mirrors, args.out, labels, args.sources)
    total = sum(1 for line in labels.read_text(encoding="utf-8").splitlines() if line.strip())
    print(f"restored {total - len(failed)} of {total} labelled runs into {args.out}")
    for run, why in failed:
        print(f"NOT RESTORED {run}: {why}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
