"""`supervisor import FILE... [--format NAME] [--detect] -o DIR`: runs of other frameworks as
sessions.

Each run in each file becomes one session under the store root DIR
(`DIR/sessions/<name>/events.jsonl`). A file that is unknown or broken gets one error line on
stderr and the others go on; the exit status is 1 if any file or run failed. With `--detect`
the engine is replayed over each run (under `--policy`/`--profile`) and its detections and
verdicts are written into the session (`supervisor.analysis.detect`).
"""

import argparse
import sys
from collections.abc import Iterable
from itertools import islice
from pathlib import Path

from supervisor.cli.common import CliError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from supervisor.importers import FORMATS  # light: the importers need no pydantic

    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="run files, or directories to search for .traj/.json/.jsonl files "
                             "(our own events.jsonl/control.jsonl are skipped)")
    parser.add_argument("--format", choices=sorted(FORMATS), metavar="NAME",
                        help="force a format: " + ", ".join(FORMATS) + " (default: detected)")
    parser.add_argument("-o", "--output", required=True, metavar="DIR",
                        help="store root to write the sessions to (DIR/sessions/<name>/)")
    parser.add_argument("--replace", action="store_true",
                        help="overwrite sessions of the same name (default: refuse)")
    parser.add_argument("--detect", action="store_true",
                        help="replay the engine over each run and record its detections and "
                             "verdicts (marked replayed: what it would have said), so the "
                             "dashboard's Detections tab and evidence work on the run")
    parser.add_argument("--policy", metavar="FILE",
                        help="with --detect: a policy TOML file")
    parser.add_argument("--profile", metavar="NAME",
                        help="with --detect: the profile to start from (default, seed-strict)")


def run(args: argparse.Namespace) -> int:
    from supervisor.analysis.detect import with_detections
    from supervisor.cli.common import report_error
    from supervisor.importers import FormatError, UnknownFormat, iter_runs
    from supervisor.safetext import clean
    from supervisor.store.errors import StoreError

    policy = None
    if args.detect:
        from supervisor.engine.policy_file import PolicyError, load_policy

        try:
            policy = load_policy(Path(args.policy) if args.policy else None, args.profile)
        except PolicyError as exc:
            raise CliError(str(exc)) from None
    elif args.policy or args.profile:
        raise CliError("--policy and --profile need --detect")
    root = Path(args.output).expanduser()
    if root.exists() and not root.is_dir():
        raise CliError(f"output is not a directory: {root}")
    used: set[str] = set()
    failed = files_ok = runs_ok = 0
    named = {Path(name) for name in args.files}
    for path in expand(args.files):
        runs = iter_runs(path, args.format)
        file_failed = skipped = False
        while True:
            try:
                spooled = next(runs, None)
            except UnknownFormat as exc:
                if path not in named:  # found in a directory: preds.json, metadata.json, ...
                    print(clean(f"supervisor: warning: skipped {path}: {exc}",
                                keep_newlines=False), file=sys.stderr)
                    skipped = True
                    break
                report_error(f"{path}: {exc}", 1)
                file_failed = True
                break
            except FormatError as exc:
                report_error(f"{path}: {exc}", 1)
                file_failed = True
                break
            if spooled is None:
                break
            with spooled:  # its spool is let go once the session is written
                name = unique_name(spooled.name, used)
                events: Iterable[dict] = spooled.events()
                count, found = spooled.count, ""
                if policy is not None:  # the replay needs the run as a whole
                    events, report = with_detections(list(events), policy, session=name,
                                                     source=str(path))
                    count, found = len(events), f", {len(report.findings)} detections"
                try:
                    write_session(root, name, events, replace=args.replace)
                except (StoreError, FileExistsError) as exc:
                    report_error(f"{path}: {name}: {exc}", 1)
                    file_failed = True
                    continue
                runs_ok += 1
                print(clean(f"{path}: {name} ({spooled.format}, {spooled.steps} steps, "
                            f"{count} events{found})", keep_newlines=False))
        if skipped:
            continue
        failed += file_failed
        files_ok += not file_failed
    print(f"imported {runs_ok} runs from {files_ok} files into {root}"
          + (f"; {failed} failed" if failed else ""), file=sys.stderr if failed else sys.stdout)
    return 1 if failed else 0


def expand(names: list[str]) -> list[Path]:
    """The files named, with directories replaced by the run files found in them."""
    from supervisor.importers.files import run_paths

    out: list[Path] = []
    for name in names:
        path = Path(name)
        out.extend(run_paths(path) if path.is_dir() else [path])
    return out


def unique_name(name: str, used: set[str]) -> str:
    """`name`, or `name-2`, `name-3`, ... if an earlier run of this import already took it."""
    candidate, index = name, 1
    while candidate in used:
        index += 1
        suffix = f"-{index}"
        candidate = name[: 128 - len(suffix)] + suffix
    used.add(candidate)
    return candidate


WRITE_BATCH = 512
"""Events appended under one lock: a run is written as it is read, never held whole."""


def write_session(root: Path, name: str, events: Iterable[dict], *, replace: bool) -> None:
    """Write one run's events as a new session; refuse an existing one unless `replace`."""
    from supervisor.store.paths import session_files
    from supervisor.store.writer import event_writer

    target = session_files(root, name).events
    if target.exists():
        if not replace:
            raise FileExistsError(f"session already exists in {root} (use --replace)")
        target.unlink()
    with event_writer(root, name) as writer:
        stream = iter(events)
        while batch := list(islice(stream, WRITE_BATCH)):
            writer.append_many(batch)
