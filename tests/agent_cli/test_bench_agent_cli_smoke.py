"""The agent CLI benchmark cannot rot: at a tiny size it runs every hook configuration through the
real Claude Code and gives its figures (no timing is asserted: benchmarks are not tests); the
empty plugin it measures plugin targets against sends nothing."""

import math
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_benchmarks_smoke import load_runner
from tests.test_hook_opencode import _drive, _fake_hook, _plugin


def test_agent_cli_benchmark_at_a_tiny_size_gives_its_figures(
        claude_executable: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUPERVISOR_BENCH_AGENTS", "claude")
    runner = load_runner()
    figures = runner.run_one("agent_cli", runner.available()["agent_cli"], scale=0.1)
    assert [f.name.removeprefix("Claude Code ") for f in figures] == [
        "per call, no hooks (the floor)", "added per call: cat >/dev/null hooks",
        "added per call: supervisor vs cat hooks", "added per call: supervisor (http) vs cat hooks",
        # its own log of its command hooks' time (`--debug`); the HTTP hooks' is not logged;
        # whole milliseconds: the goal reads the trimmed mean, the median is beside it
        "hook time per call as the CLI logs it, median: supervisor vs cat hooks",
        "hook time per call as the CLI logs it, trimmed mean: supervisor vs cat hooks",
        "own work per call outside its hooks: supervisor vs cat hooks",
    ], figures
    assert figures[0].value > 0 and not any(math.isnan(f.value) for f in figures)
    # the ratio's target, unless the cat hooks' cost was lost in the noise of a loaded machine
    assert figures[2].max_ratio == (1.2 if figures[1].value > 0 else None)
    assert (figures[4].max_ratio, figures[5].max_ratio) == (None, 1.2)
    assert "resamplings" in figures[5].note and figures[5].baseline


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_a_trace_of_the_cli_gives_each_calls_hooks_from_start_to_reaping(
        tmp_path: Path) -> None:
    """`SUPERVISOR_BENCH_STRACE=1`: the hooks' time per call read from `strace -f` of the CLI,
    here of a shell standing in for it: a hook, the tool (through a wrapper shell), a hook."""
    runner = load_runner()
    bench = runner.load("agent_cli", runner.available()["agent_cli"])
    script = ("sh -c 'cat >/dev/null' </dev/null; "
              "sh -c 'sleep 0.3; cat src/module_01.txt 2>/dev/null; true'; "
              "sh -c 'sleep 0.02; cat >/dev/null' </dev/null")
    trace = tmp_path / "trace.txt"
    subprocess.run([*bench.TRACE_ARGS, "-o", str(trace), "sh", "-c", script], check=True)
    waited, lived = bench._traced_hook_times(trace, bench._is_hook, bench._is_tool)
    assert len(waited) == len(lived) == 1  # one call: the hook, the tool, the hook
    assert 0.02 < lived[0] < waited[0] < 0.3  # the second hook's sleep, not the tool's


def test_a_plugin_target_is_measured_against_an_empty_plugin_that_asks_nothing(
        tmp_path: Path) -> None:
    """The `cat` of a plugin: the supervisor's own plugin, whose steps reach nobody."""
    runner = load_runner()
    bench = runner.load("agent_cli", runner.available()["agent_cli"])
    opencode = next(driver for driver in bench.DRIVERS if driver.name == "opencode")
    assert bench.configs(opencode) == ("none", "empty", "supervisor")
    record = tmp_path / "sent.jsonl"
    plugin = _plugin(tmp_path, _fake_hook(tmp_path, '{"deny":"Agent Supervisor: no"}', record))
    assert _drive(tmp_path, plugin, "before")["outcome"] == "threw: Agent Supervisor: no"
    record.unlink()
    bench._empty_plugin(plugin)
    assert _drive(tmp_path, plugin, "before")["outcome"] == "ran"
    assert _drive(tmp_path, plugin, "after")["outcome"] == "out"
    assert not record.exists()  # no step was sent
