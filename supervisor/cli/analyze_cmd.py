"""`supervisor analyze PATH... [--policy FILE] [--profile NAME] [--json]`, or
`supervisor analyze --store URL [SESSION...]`.

Replays recorded sessions through the engine as the guard would have (assuming the agent went
on as recorded) and reports what it would have done: a table per session, or with `--json` one
JSON object per session per line (see `supervisor.analysis.replay.RunReport.to_json`). With
`--store`, the runs are sessions of that store (all of them when none is named).
"""

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from supervisor.cli.common import CliError

if TYPE_CHECKING:
    from supervisor.analysis.replay import RunReport
    from supervisor.analysis.sources import Run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="protocol JSONL files, session directories or store roots "
                             "(and other run formats when their importers are installed); "
                             "with --store: session names (default: every session)")
    parser.add_argument("--store", metavar="URL",
                        help="analyse sessions of this store (a local root, redis://...)")
    parser.add_argument("--password-file", metavar="FILE",
                        help="read the store's password from FILE")
    parser.add_argument("--insecure", action="store_true",
                        help="allow a store on another machine without a password")
    parser.add_argument("--policy", metavar="FILE", help="a policy TOML file")
    parser.add_argument("--profile", metavar="NAME",
                        help="the profile to start from (default, seed-strict)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per session per line")
    parser.add_argument("--format", metavar="NAME",
                        help="force the format of foreign run files (swe-agent, "
                             "mini-swe-agent, openhands, claude-code, codex, gemini-cli, "
                             "copilot-cli, opencode); "
                             "default: detected by content")


def run(args: argparse.Namespace) -> int:
    from supervisor.cli.vocabulary import load_all

    load_all()  # every agent's tool names, before the policy is built
    from supervisor.analysis.replay import analyze_events
    from supervisor.analysis.sources import SourceError, bad_lines, load_runs, skipped
    from supervisor.engine.policy_file import PolicyError, load_policy

    try:
        policy = load_policy(Path(args.policy) if args.policy else None, args.profile)
    except PolicyError as exc:
        raise CliError(str(exc)) from None
    from supervisor.analysis import foreign
    from supervisor.cli.analyze_summary import CostCounter, print_summary, run_line
    from supervisor.cli.common import report_error
    from supervisor.importers import FORMATS, UnknownFormat
    from supervisor.safetext import clean

    if args.format is not None and args.format not in FORMATS:
        raise CliError(f"unknown format {args.format!r} (known: {', '.join(FORMATS)})")
    runs: list[Run] = []
    failed = 0
    if args.store:
        runs, failed = _store_runs(args)
    elif not args.paths:
        raise CliError("name at least one PATH (or a store with --store URL)")
    for name in [] if args.store else args.paths:  # one error line per path; go on
        try:
            if args.format:
                runs.extend(foreign.forced_runs(Path(name), args.format))
            else:
                runs.extend(load_runs(Path(name)))
        except SourceError as exc:
            report_error(str(exc), 1)
            failed += 1
    named = {Path(name) for name in args.paths}
    for path, error in foreign.errors():
        if isinstance(error, UnknownFormat) and path not in named:
            print(clean(f"supervisor: warning: skipped {path}: {error}", keep_newlines=False),
                  file=sys.stderr)  # found in a directory: preds.json, metadata.json, ...
            continue
        report_error(f"{path}: {error}", 1)
        failed += 1
    out = sys.stdout
    lines = []
    for run_ in runs:
        counter = CostCounter(run_.events)
        try:
            report = analyze_events(counter, policy, session=run_.session,
                                    source=run_.source)
        except (OSError, SourceError) as exc:
            report_error(f"{run_.source}: {exc}", 1)
            failed += 1
            continue
        lines.append(run_line(report, counter.costed))
        if args.json:
            out.write(json.dumps(_visible(report.to_json()), ensure_ascii=False) + "\n")
        else:
            _print_table(report, out)
    if not args.json and len(lines) > 1:
        print_summary(lines, out)
    for line in bad_lines(clear=True):
        print(clean(f"supervisor: warning: skipped bad line {line}", keep_newlines=False),
              file=sys.stderr)
    for line in skipped(clear=True):
        print(clean(f"supervisor: warning: skipped {line}", keep_newlines=False),
              file=sys.stderr)
    return 1 if failed else 0


def _store_runs(args: argparse.Namespace) -> tuple[list["Run"], int]:
    """The named sessions of `--store` (every session when none is named) as runs; one error
    line per session that is not there."""
    from supervisor.analysis.sources import Run
    from supervisor.cli.common import report_error, store_from, store_label
    from supervisor.store.errors import StoreError

    store = store_from(args)
    runs: list[Run] = []
    failed = 0
    with store:
        names = args.paths or store.session_ids()
        if not names:  # (it printed nothing at all)
            root = getattr(store, "root", None)  # a local root: a mistyped one is said so
            missing = " (it does not exist)" if root is not None and not root.exists() else ""
            print(f"supervisor: warning: no sessions in {store.noun} {store_label(store)}"
                  + missing, file=sys.stderr)
        for name in names:
            try:
                store.require(name)
                batch = store.read_all(name)
            except StoreError as exc:
                report_error(str(exc), 1)
                failed += 1
                continue
            events = [e.model_dump(mode="json") for e in batch.events]
            runs.append(Run(name, f"{store_label(store)}#{name}", events))
    return runs, failed


def _visible(report: dict[str, Any]) -> dict[str, Any]:
    """The report with the text people read (where the run came from, what was found) passed
    through the sanitiser, as in the table: a run's name and messages are the agent's text."""
    from supervisor.safetext import clean

    report["session"] = clean(report["session"], keep_newlines=False)
    report["source"] = clean(report["source"], keep_newlines=False)
    for finding in report["findings"]:
        finding["message"] = clean(finding["message"], keep_newlines=False)
        finding["detector"] = clean(finding["detector"], keep_newlines=False)
    return report


def _number(value: Any) -> str:
    """A recorded gauge or limit as people write it: 40, not 40.0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _print_table(report: "RunReport", out: TextIO) -> None:
    """One run as a readable block: a header line, the first reactions, a row per finding.
    Detector names are never cut; messages and the header are cut (with `…`) to a terminal's
    width (`COLUMNS`) only, whole through a pipe: no line wraps into the next at 80 columns."""
    from supervisor.safetext import clean

    width = max(40, min(shutil.get_terminal_size((120, 20)).columns, 200))
    terminal = out.isatty()
    first = ", ".join(
        f"{k} at step {v}" for k, v in report.first.items() if v is not None
    ) or "no loop found"
    line = None if not terminal else width - 1  # whole lines, cut only on a terminal
    out.write(clean(f"{report.session}  ({report.source})", keep_newlines=False, limit=line)
              + "\n")
    out.write(f"  {report.steps} tool calls; {first}\n")
    if report.stopped_by:
        hit = report.stopped_by
        out.write(clean(f"  stopped (as recorded) by the hard limit {hit['name']}: "
                        f"{_number(hit['value'])} of {_number(hit['limit'])} at #{hit['seq']}",
                        keep_newlines=False, limit=line) + "\n")
    warned = [m for m in report.memory if m["kind"] == "warned"]
    if warned:
        out.write(f"  failure memory warned before {len(warned)} calls (as recorded): "
                  + ", ".join(f"#{m['seq']}" for m in warned[:20]) + "\n")
    if report.findings:
        name = max(8, *(len(f.detector) for f in report.findings))
        out.write(f"  {'step':>5} {'seq':>6}  {'detector':<{name}} {'lvl':>3}  {'action':<8} "
                  "message\n")
        room = max(10, width - 32 - name) if terminal else None
        for f in report.findings:
            msg = clean(f.message, keep_newlines=False, limit=room)
            out.write(f"  {f.step:>5} {f.seq:>6}  {f.detector:<{name}} {f.level:>3}  "
                      f"{f.action:<8} {msg}\n")
    out.write("\n")
