"""The closest-match measurement on recorded runs (supervisor.analysis.closest_quality) and the
file reconstruction it rests on (supervisor.analysis.seen_files)."""

from pathlib import Path
from typing import Any

import pytest

from supervisor.analysis.closest_quality import (
    PERTURBATIONS,
    measure_events,
    measure_paths,
    perturb,
    robustness,
)
from supervisor.analysis.seen_files import SeenFiles
from tests.importer_helpers import CORPUS

LABELLED = CORPUS.parent / "corpus-labelled"
PATH = "/w/m.c"


def cat_n(lines: list[str], first: int = 1, path: str = PATH, snippet: bool = False) -> str:
    what = f"a snippet of {path}" if snippet else path
    body = "\n".join(f"{n:>6}\t{t}" for n, t in enumerate(lines, first))
    return f"Here's the result of running `cat -n` on {what}:\n{body}\n"


class Run:
    """A run written as protocol events, one call and result at a time."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.seen = SeenFiles()

    def step(self, tool: str, args: dict[str, Any], ok: bool, output: str) -> None:
        n = len(self.events)
        call = {"type": "tool_call", "seq": n + 1, "call_id": f"c{n}", "tool": tool,
                "args": args}
        result = {"type": "tool_result", "seq": n + 2, "call_id": f"c{n}", "ok": ok,
                  "output": output}
        self.events += [call, result]
        self.seen.observe(call, result)

    def view(self, lines: list[str], first: int = 1, rng: list[int] | None = None) -> None:
        self.step("read", {"path": PATH, "view_range": rng}, True, cat_n(lines, first))

    def replace(self, old: str, new: str, ok: bool = True, output: str = "") -> None:
        self.step("edit", {"path": PATH, "command": "str_replace", "old_str": old,
                           "new_str": new}, ok, output or "The file has been edited.")

    def lines(self) -> dict[int, str]:
        return self.seen.get(PATH).lines


FILE = ["int f(void)", "{", "    int x = 1;", "    return x;", "}"]
NOT_FOUND = f"ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim in {PATH}."


def test_views_edits_and_insertions_are_followed() -> None:
    run = Run()
    run.view(FILE)
    assert run.seen.get(PATH).complete()
    run.replace("    int x = 1;", "    int x = 1;\n    int y = 2;")
    assert run.lines()[4] == "    int y = 2;" and run.lines()[6] == "}"
    run.step("edit", {"path": PATH, "command": "insert", "insert_line": 0, "new_str": "// c"},
             True, "")
    assert run.lines()[1] == "// c" and run.lines()[7] == "}"
    assert run.seen.get(PATH).total == 7


def test_a_partial_view_leaves_the_rest_unknown() -> None:
    run = Run()
    run.view(FILE[2:4], first=3, rng=[3, 4])
    assert run.seen.known_blocks(PATH) == [(3, ["    int x = 1;", "    return x;"])]
    assert run.seen.get(PATH).total is None


def test_an_edit_outside_the_known_lines_forgets_the_file_until_its_snippet() -> None:
    run = Run()
    run.view(FILE[:2], rng=[1, 2])
    run.replace("return x;", "return x + 1;", output=(
        f"The file {PATH} has been edited. "
        + cat_n(["    return x + 1;", "}", ""], first=4, snippet=True)))
    assert run.seen.known_blocks(PATH) == [(4, ["    return x + 1;", "}"])]  # no trailing ""


def test_a_shell_command_naming_the_file_forgets_it() -> None:
    run = Run()
    run.view(FILE)
    run.step("run", {"command": "sed -i 's/1/2/' m.c"}, True, "")
    assert run.seen.known_blocks(PATH) == []


def test_later_views_confirm_or_contradict_the_rebuilt_lines() -> None:
    run = Run()
    run.view(FILE)
    run.replace("int x = 1;", "int x = 2;")
    run.view(["int f(void)", "{", "    int x = 2;", "    return x;", "}"])
    assert (run.seen.confirmed, run.seen.contradicted) == (5, 0)
    run.view(["int f(void)", "{", "    int x = 3;", "    return x;", "}"])
    assert (run.seen.confirmed, run.seen.contradicted) == (9, 1)


def test_a_failure_is_judged_by_the_next_successful_edit() -> None:
    run = Run()
    run.view(FILE)
    run.replace("  int x = 1;\n  return x;", "...", ok=False, output=NOT_FOUND)
    run.replace("    int x = 1;\n    return x;", "    return 1;")
    (case,) = measure_events(run.events, "r", "s")
    assert (case.outcome, case.kind, case.judged_by) == ("hit", "indentation", "search text")
    assert case.shown == (1, 5)


def test_a_next_edit_elsewhere_is_a_miss() -> None:
    lines = [f"line {i} = {i}" for i in range(1, 41)]
    run = Run()
    run.view(lines)
    run.replace("line 5 = five", "x", ok=False, output=NOT_FOUND)
    run.replace("line 30 = 30", "line 30 = 31")
    (case,) = measure_events(run.events, "r", "s")
    assert case.outcome == "miss"
    assert "outside the region shown lines 3-7" in case.reason


@pytest.mark.parametrize("steps,reason", [
    ([], "the run showed nothing of the file before the failure"),
    (["view"], "the agent did not edit the file successfully afterwards"),
    (["view", "stale"], "the text the tool did not find is in the rebuilt file (stale)"),
])
def test_failures_that_cannot_be_judged_say_why(steps: list[str], reason: str) -> None:
    run = Run()
    if "view" in steps:
        run.view(FILE)
    run.replace("    return x;" if "stale" in steps else "retrun x;", "y", ok=False,
                output=NOT_FOUND)
    (case,) = measure_events(run.events, "r", "s")
    assert (case.outcome, case.reason) == ("not judged", reason)


def test_ambiguous_failures_are_checked_against_the_tools_lines() -> None:
    run = Run()
    run.view(FILE + FILE)
    run.replace("    return x;", "y", ok=False, output=(
        "ERROR:\nNo replacement was performed. Multiple occurrences of old_str `    return x;` "
        "in lines [4, 9]. Please ensure it is unique."))
    (case,) = measure_events(run.events, "r", "s")
    assert (case.failure, case.outcome) == ("ambiguous", "hit")


@pytest.mark.slow
@pytest.mark.skipif(not (CORPUS.is_dir() and LABELLED.is_dir()), reason="no corpora")
def test_on_the_real_corpora_the_region_holds_what_the_agent_needed() -> None:
    quality = measure_paths([LABELLED, CORPUS])
    judged = quality.judged
    assert len(judged) >= 10
    assert quality.share is not None and quality.share >= 0.8
    assert all(c.outcome == "hit" for c in quality.of("ambiguous") if c.judged_by)
    assert quality.contradicted <= 0.01 * (quality.confirmed + quality.contradicted)
    assert {c.kind for c in judged} >= {"changed", "indentation", "line_numbers", "escaped"}


def test_measure_paths_skips_files_of_no_run_format(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text('{"a": 1}')
    quality = measure_paths([tmp_path])
    assert (quality.runs, quality.cases, quality.share) == (0, [], None)


def test_each_mistake_as_agents_make_it() -> None:
    span = ["def f(a):", "    b = a + 1", "    c = b * 2", "    return c"]
    got = {kind: perturb(kind, span, 7) for kind in PERTURBATIONS}
    assert got["indentation"] == "  def f(a):\n  b = a + 1\n  c = b * 2\n  return c"
    assert got["whitespace"] == "def f(a):  \n    b = a + 1  \n    c = b * 2  \n    return c  "
    assert got["line_numbers"].split("\n")[1] == "     8\t    b = a + 1"
    assert got["escaped"] == "def f(a):\\n    b = a + 1\\n    c = b * 2\\n    return c"
    assert got["changed_line"].split("\n")[2] == "    c = X * 2"
    assert got["missing_line"] == "def f(a):\n    b = a + 1\n    return c"


@pytest.mark.slow
@pytest.mark.skipif(not (CORPUS.is_dir() and LABELLED.is_dir()), reason="no corpora")
def test_on_spans_of_real_files_every_mistake_is_found() -> None:
    result = robustness([LABELLED, CORPUS])
    assert sum(result.tried.values()) >= 500
    assert result.share is not None and result.share >= 0.95
    assert all(result.hits[k] >= 0.9 * result.tried[k] for k in PERTURBATIONS)
