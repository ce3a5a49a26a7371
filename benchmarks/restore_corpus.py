"""Restore a labelled corpus's run files from fetched git mirrors.

The run files of the labelled corpora are never committed (fetched data lives outside the
repository), so a new machine has only the labels and `SOURCES.md`, which names each run's
repository and git blob. For every row of a labels file this finds the run's repository and blob
in `SOURCES.md`, writes `git cat-file blob` into `<out>/<run><suffix>` (the run name is
`<source>/<name>`, e.g. `claude-code/<name>` or `mini-swe-agent/<name>`), checks the copy with
`git hash-object`, and copies the labels file to `<out>/labels.jsonl` (the name the quality
benchmark reads). Every row it could not restore is named with the reason, and the exit status is
then 1, so a partial folder is never taken for a whole one.

    python benchmarks/restore_corpus.py CORPUS MIRRORS OUT [--batch N]

`CORPUS` is `interactive` (`benchmarks/corpus-interactive/`, run files `<run>.jsonl`; batch N's
labels are `labels-batchN.jsonl`) or `labelled` (`benchmarks/corpus-labelled/`, the mini-swe-agent
runs, `<run>.traj.json`), e.g.

    python benchmarks/restore_corpus.py interactive /work/.mirror ../corpus-interactive-3 --batch 3
    python benchmarks/restore_corpus.py labelled /work/.mirror /work/corpus-labelled-mini

(`benchmarks/corpus-interactive/restore.py MIRRORS OUT [--batch N]` is the first form.)
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


@dataclass(frozen=True)
class Corpus:
    folder: Path
    """Where its `SOURCES.md` and labels files are."""
    suffix: str
    """The run files' extension: the quality benchmark reads a file as run `<folder>/<name>`
    only when it ends in one it knows (`rubric.RUN_SUFFIXES`), this source's own."""


CORPORA = {
    "interactive": Corpus(HERE / "corpus-interactive", ".jsonl"),
    "labelled": Corpus(HERE / "corpus-labelled", ".traj.json"),
}


@dataclass(frozen=True)
class Source:
    repo: str
    blob: str


_BLOB = re.compile(r"[0-9a-f]{7,40}")
_REPO = re.compile(r"[\w.-]+/[\w.-]+")
_PREFIX = re.compile(r"^run \((?P<prefix>[^)/]+/)…\)$")
"""A run column headed `run (mini-swe-agent/…)`: its cells are names within that source."""


def labels_file(folder: Path, batch: int) -> Path:
    """Batch 1's labels are `labels.jsonl`; batch N's are `labels-batchN.jsonl`."""
    return folder / ("labels.jsonl" if batch == 1 else f"labels-batch{batch}.jsonl")


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def _tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every Markdown table of `text`: its header's cells (lower case) and its rows' cells."""
    lines = text.splitlines()
    tables: list[tuple[list[str], list[list[str]]]] = []
    for i, line in enumerate(lines[:-1]):
        if line.startswith("|") and lines[i + 1].startswith("|---"):
            rows: list[list[str]] = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append(_cells(row))
            tables.append(([cell.lower() for cell in _cells(line)], rows))
    return tables


def read_sources(path: Path) -> dict[str, Source]:
    """Every run row of `path`'s tables (those with a `run` and a `blob` column): run name ->
    repository and blob id. A table without a `repository` column (the mini-swe-agent corpus,
    all from one repository) takes the one repository of the file's repository table; a run
    column headed `run (<source>/…)` names runs within that source."""
    tables = _tables(path.read_text(encoding="utf-8"))
    listed = {row[0] for header, rows in tables if header[0] == "repository"
              for row in rows if _REPO.fullmatch(row[0])}
    found: dict[str, Source] = {}
    for header, rows in tables:
        run_col = next((i for i, name in enumerate(header) if name.startswith("run")), None)
        if run_col is None or "blob" not in header:
            continue
        blob_col = header.index("blob")
        repo_col = header.index("repository") if "repository" in header else None
        if repo_col is None and len(listed) != 1:
            raise ValueError(f"{path}: a run table without a repository column, and the file "
                             f"lists {len(listed)} repositories, not one")
        prefix = _PREFIX.match(header[run_col])
        for row in rows:
            if len(row) != len(header):
                continue
            blob = row[blob_col].strip("`")
            repo = row[repo_col] if repo_col is not None else next(iter(listed))
            if _BLOB.fullmatch(blob) and _REPO.fullmatch(repo):
                run = row[run_col].strip("`")
                found[f"{prefix['prefix']}{run}" if prefix else run] = Source(repo, blob)
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


def restore(mirrors: Path, out: Path, labels: Path, sources: Path, suffix: str
            ) -> list[tuple[str, str]]:
    """Restore every labelled row into `out` (`<run><suffix>`); the rows not restored, each
    with its reason."""
    by_run = read_sources(sources)
    failed: list[tuple[str, str]] = []
    out.mkdir(parents=True, exist_ok=True)
    for line in labels.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        run = json.loads(line)["run"]
        source = by_run.get(run)
        if source is None:
            failed.append((run, f"no run row for it in {sources}"))
            continue
        gdir = git_dir(mirrors, source.repo)
        if gdir is None:
            failed.append((run, f"{source.repo} is not fetched under {mirrors} "
                                f"(fetch github:{source.repo})"))
            continue
        why = restore_one(gdir, source.blob, out / f"{run}{suffix}")
        if why:
            failed.append((run, why))
    shutil.copyfile(labels, out / "labels.jsonl")
    return failed


def main(argv: list[str] | None = None, corpus_name: str | None = None) -> int:
    """The command line; with `corpus_name`, for that corpus alone (no CORPUS argument)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    if corpus_name is None:
        parser.add_argument("corpus", choices=sorted(CORPORA), help="which corpus")
    parser.add_argument("mirrors", type=Path, help="directory of fetched mirrors (owner+name/)")
    parser.add_argument("out", type=Path, help="folder to restore the runs into")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--batch", type=int, default=1, help="batch number (default 1)")
    which.add_argument("--labels", type=Path, help="a labels file instead of a batch's")
    parser.add_argument("--sources", type=Path,
                        help="the SOURCES.md naming each run's repository and blob "
                             "(default: the corpus's)")
    args = parser.parse_args(argv)
    corpus = CORPORA[corpus_name or args.corpus]
    labels = args.labels or labels_file(corpus.folder, args.batch)
    if not labels.is_file():
        print(f"no labels file {labels}", file=sys.stderr)
        return 2
    failed = restore(args.mirrors, args.out, labels, args.sources or corpus.folder / "SOURCES.md",
                     corpus.suffix)
    total = sum(1 for line in labels.read_text(encoding="utf-8").splitlines() if line.strip())
    print(f"restored {total - len(failed)} of {total} labelled runs into {args.out}")
    for run, why in failed:
        print(f"NOT RESTORED {run}: {why}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
