"""The closest match of failed edits on real runs: the `quality` benchmark's guidance section.

For every edit of the recorded runs that failed because its search text was not in the file,
the region the supervisor would have shown (`supervisor.engine.closest`, context included) is
judged by the agent's own next successful edit of that file: its search text must lie within
the region (an edit by line numbers: its lines). The file at the moment of the failure is
rebuilt from the run's numbered views and edits (`supervisor.analysis.seen_files`); a failure
the run does not allow judging honestly is counted apart, with its reason
(`supervisor.analysis.closest_quality`, method and limits in docs/guidance.md). Target
(issue 19): the region holds what the agent needed for >= 80 % of the judged failures.

Runs: the labelled corpus and the development corpus (`corpus-labelled/` and `corpus/` beside
the repository's `shared/` directory, or `$SUPERVISOR_LABELLED_CORPUS` / `$SUPERVISOR_CORPUS`).
"""

import os
from collections import Counter
from pathlib import Path

from common import REPO, Figure

from supervisor.analysis.closest_quality import ClosestQuality, measure_paths

TARGET = 0.80


def corpora() -> list[Path]:
    """The corpora on this machine (each once)."""
    found: list[Path] = []
    for env, name in (("SUPERVISOR_LABELLED_CORPUS", "corpus-labelled"),
                      ("SUPERVISOR_CORPUS", "corpus")):
        for candidate in (os.environ.get(env), REPO.parent / "shared" / name,
                          Path("/work/shared") / name):
            if candidate and Path(candidate).is_dir():
                path = Path(candidate).resolve()
                if path not in found:
                    found.append(path)
                break
    return found


def report(quality: ClosestQuality, paths: list[Path]) -> list[str]:
    not_found = quality.of("not_found")
    judged = quality.judged
    lines = [f"closest match of failed edits ({', '.join(p.name for p in paths)}: "
             f"{quality.runs} runs): {len(not_found)} \"not found\" failures, {len(judged)} "
             f"judged by the agent's next successful edit of the file"]
    share = quality.share
    lines.append(f"  the region shown holds what the agent needed: {quality.hits}/{len(judged)}"
                 + (f" = {share:.3f}" if share is not None else "") + f" (target >= {TARGET})")
    for reason, n in Counter(c.reason for c in not_found if c.outcome == "not judged"
                             ).most_common():
        lines.append(f"  not judged ({n}): {reason}")
    for case in judged:
        if case.outcome == "miss":
            lines.append(f"  miss: {case.run} #{case.seq} {case.path}: {case.reason}")
    ambiguous = quality.of("ambiguous")
    if ambiguous:
        agree = sum(1 for c in ambiguous if c.outcome == "hit")
        lines.append(f"  \"occurs more than once\" failures: {len(ambiguous)}, the match names "
                     f"the tool's lines in {agree}")
    lines.append(f"  rebuilt file lines a later view showed again: {quality.confirmed} agree, "
                 f"{quality.contradicted} differ")
    return lines


def section() -> tuple[list[str], list[Figure]]:
    """The lines to print and the figure (none when no corpus or no judged failure)."""
    paths = corpora()
    if not paths:
        return (["closest match of failed edits: no corpus on this machine (corpus-labelled/, "
                 "corpus/); nothing measured."], [])
    quality = measure_paths(paths)
    lines = report(quality, paths)
    share = quality.share
    if share is None:
        return lines, []
    return lines, [Figure("failed edits: region misses what the agent needed (1 - share)",
                          round(1 - share, 3), max_value=round(1 - TARGET, 3),
                          note=f"{quality.hits} of {len(quality.judged)} judged hold it")]
