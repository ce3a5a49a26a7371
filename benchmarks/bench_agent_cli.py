"""Hooks as each agent CLI experiences them: the added latency per tool call, through the real CLI.

For every target of the agent CLI scenario kit (`tests/agent_cli/drivers`: Claude Code, Codex,
Gemini, Qwen Code, Droid, Copilot, OpenCode, Kilo, Cline, Pi), the real pinned binary runs a script
of distinct healthy shell calls (`cat` of a different file each time: new output at every step,
so no detector has anything to say), one call per model turn, against the kit's fake model API.
For each call the fake logs when it finished answering the turn that asked for the call and when
the request carrying its result arrived: that gap is the call as the CLI runs it, hooks
included. Each configuration runs the same script, in interleaved rounds:

- none: no hooks, no plugin (the floor: the CLI's own work per call);
- cat: the supervisor's own installed settings with each of its entries running
  `cat >/dev/null` instead (CLIs with command hooks only): the same events and matchers, so the
  CLI starts as many hook processes per call as with the supervisor (Qwen Code runs four per
  call: `PreToolUse`, `PostToolUse`, `PostToolBatch` and `UserPromptSubmit`, not only the pair
  around the tool);
- empty (plugin targets: OpenCode, Kilo, Cline, Pi): the supervisor's installed plugin with its
  `ask` answering nothing at once, the `cat` of a plugin: the same hooks, events, queues and
  payloads built, but no round trip to the supervisor, so what OpenCode itself does for a
  plugin's hooks is in the baseline;
- supervisor: `supervisor install TARGET` as the kit's runner does it (the native client where a
  C compiler is found, `supervisor.hooks.native`; the plugin for OpenCode, Kilo, Cline and Pi);
- supervisor (http): `--transport http`, for the targets that offer it.

The order of the configurations turns by one each round (none, cat, supervisor; then cat,
supervisor, none; ...), so none of them always runs right after another on a machine whose load
drifts, and each added latency is also given per round (that round's median against the same
round's floor): their spread is how far one figure can be trusted. `SUPERVISOR_BENCH_ROUNDS=N`
sets the number of rounds (default: 3, times the scale).

Each configuration's run follows a short warm-up run in the same sandbox with the same hooks:
the CLI's own first run in a fresh home (its caches and settings) is then behind every
configuration alike (with the warm-up for the supervisor's configurations only, they ran on a
warm home and the others on a cold one), and the resident hook server is up, as a session
finds it (it is kept up between the two runs however long the CLI takes to start on a loaded
machine).

Figures per target: the floor, the cat hooks' added latency, and the supervisor's added latency
against the cat hooks' (target at most 1.2x, issue 40); for a plugin target, the empty plugin's
added latency, and the supervisor's per call against the empty plugin's (the whole call, floor
included: an empty plugin adds next to nothing, so a ratio of added latencies would be one
small number over another; no target) and against no plugin; for a CLI that logs
its own hooks' start and end or their time (`HOOK_LOGS`: Copilot, Qwen Code, Factory Droid,
Claude Code), also its hooks' logged time per call, the supervisor's against the cat hooks',
by their trimmed mean (the same target: the logs count whole milliseconds, `_hook_figures`)
and by their median beside it (the HTTP hooks' beside them where the CLI logs them); with
`SUPERVISOR_BENCH_STRACE=1`, the hooks' time per call read from a trace of the CLI's processes
(`ENV_STRACE`), an instrument independent of its log; and its own work per
call outside the hooks (the median gap less the median logged hook time), the supervisor's
configuration against the cat hooks': whether the CLI does more of its own work when the
supervisor answers, or only waits longer for the hooks. A target whose CLI
cannot be had or run here gives a row saying so. `SUPERVISOR_BENCH_AGENTS=codex,gemini` (driver
names) measures only those.
"""

import itertools
import json
import os
import re
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from common import TRIM, Figure, bootstrap_ratio, trimmed_mean, work_dir

from supervisor.hooks import targets
from supervisor.hooks.settings_file import Settings
from tests.agent_cli import clis
from tests.agent_cli.drivers import DRIVERS
from tests.agent_cli.launch import LAUNCH, Launch
from tests.agent_cli.model_server import ModelServer
from tests.agent_cli.sandbox import Sandbox
from tests.agent_cli.scenarios import Driver
from tests.agent_cli.script import Script, ToolCall, say, turn
from tests.hookd_helpers import stop_servers

POLICY = "[guard]\ncheckpoints = false\n"
CAT = "cat >/dev/null"
PAIR = re.compile(r"(?i)(pre|post|before|after)_?tool(_?use)?")
"""The events a CLI fires before and after each tool call (whatever its spelling)."""
INSTALLED = re.compile(r"^installed the .* (?:hooks into|plugin as) (/\S+)$", re.M)
"""`supervisor install`'s first line names the file it wrote."""
MAX_RATIO = 1.2
ASK = "async function ask(payload, seconds) {\n"
"""How `plugin_client.js` starts the function every plugin sends its steps through."""
WARM_IDLE_S = "600"
"""The warm server's idle exit (the sandbox's 30 s passed, on a loaded machine, between the
warm-up and the measured run: the install builds the native client, the CLI starts slowly)."""
RUN_TIMEOUT_S, PER_CALL_S = 120.0, 20.0
"""A run's time limit: a loaded machine makes some CLIs take seconds per call."""


def run(scale: float = 1.0) -> list[Figure]:
    count = max(4, round(50 * scale))
    rounds = int(os.environ.get("SUPERVISOR_BENCH_ROUNDS") or max(1, round(3 * scale)))
    wanted = {n for n in os.environ.get("SUPERVISOR_BENCH_AGENTS", "").split(",") if n}
    unknown = wanted - {driver.name for driver in DRIVERS}
    if unknown:  # a misspelt name would otherwise measure nothing and say nothing
        raise SystemExit(f"SUPERVISOR_BENCH_AGENTS: no driver named {', '.join(sorted(unknown))}"
                         f"; the drivers are {', '.join(d.name for d in DRIVERS)}")
    figures: list[Figure] = []
    for driver in DRIVERS:
        if wanted and driver.name not in wanted:
            continue
        print(f"  agent_cli: {driver.name}...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        try:
            figures += _target(driver, count, rounds)
        except Exception as exc:  # one CLI that cannot run here must not hide the others
            reason = " ".join(str(exc).split())[:300]
            figures.append(Figure(f"{_label(driver)}: not measured here", float("nan"),
                                  note=f"{type(exc).__name__}: {reason}"))
        print(f"  agent_cli: {driver.name} {time.perf_counter() - started:.0f} s",
              file=sys.stderr, flush=True)
    return figures


def _label(driver: Driver) -> str:
    return str(targets.load(driver.agent).label)


def configs(driver: Driver) -> tuple[str, ...]:
    """The configurations measured for this target (see the module docstring)."""
    settings = targets.load(driver.agent).settings
    if not isinstance(settings, Settings):
        return ("none", "empty", "supervisor")  # a plugin: none, one that asks nothing, ours
    return ("none", "cat", "supervisor") + (("supervisor-http",) if settings.http_events
                                              else ())


def _target(driver: Driver, count: int, rounds: int) -> list[Figure]:
    launch = LAUNCH[driver.fixture]
    executable = clis.ensure(launch.cli)
    names = configs(driver)
    base = work_dir(f"agent_cli-{driver.name}")
    gaps: dict[str, list[list[float]]] = {name: [] for name in names}
    hooks: dict[str, list[list[float]]] = {name: [] for name in names}
    waited: dict[str, list[list[float]]] = {name: [] for name in names}
    lived: dict[str, list[list[float]]] = {name: [] for name in names}
    try:
        for index in range(rounds):
            for config in rotated(names, index):
                measured = _measure(driver, launch, executable,
                                    Sandbox(base / f"{config}-{index}"), config, count)
                gaps[config].append(measured.gaps)
                hooks[config].append(measured.logged)
                waited[config].append(measured.waited)
                lived[config].append(measured.lived)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    pooled = {name: list(itertools.chain.from_iterable(gaps[name])) for name in names}
    floor = _median_ms(pooled["none"])
    added = {name: _median_ms(pooled[name]) - floor for name in names}
    label = _label(driver)
    calls = f"median of {len(pooled['none'])} calls per configuration"
    way = f"{rounds} interleaved round(s) of {count} calls, the order turning each round"
    out = [Figure(f"{label} per call, no hooks (the floor)", floor, "ms",
                  note=f"{calls}, {way}; per round: "
                  + ", ".join(f"{value:.0f} ms" for value in _per_round(gaps, "none")))]

    def note(config: str) -> str:
        return f"{calls}, {way}; per round: {_listed(_per_round(gaps, config))}"

    if "cat" in names:
        measurable = added["cat"] > 0  # else the cat hooks are lost in this run's noise
        out += [
            Figure(f"{label} added per call: cat >/dev/null hooks", added["cat"], "ms",
                   note=note("cat")),
            Figure(f"{label} added per call: supervisor vs cat hooks", added["supervisor"], "ms",
                   baseline=added["cat"] if measurable else None,
                   max_ratio=MAX_RATIO if measurable else None,
                   note=note("supervisor") + ("" if measurable else "; the cat hooks added "
                                              "nothing measurable in this run (noise): no ratio")),
        ]
    else:
        empty = floor + added["empty"]
        out += [
            Figure(f"{label} added per call: empty plugin", added["empty"], "ms",
                   note=note("empty")),
            Figure(f"{label} per call: supervisor plugin vs empty plugin",
                   floor + added["supervisor"], "ms", baseline=empty,
                   note=f"{calls}, {way}; the whole call, floor included (no target); "
                   "supervisor over the empty plugin per round: "
                   + _listed([ours - theirs for ours, theirs in zip(
                       _per_round(gaps, "supervisor"), _per_round(gaps, "empty"),
                       strict=True)])),
            Figure(f"{label} added per call: supervisor plugin vs no plugin",
                   added["supervisor"], "ms", baseline=floor,
                   note=note("supervisor") + "; baseline: the floor"),
        ]
    if "supervisor-http" in names:
        out.append(Figure(f"{label} added per call: supervisor (http) vs cat hooks",
                          added["supervisor-http"], "ms",
                          baseline=added["cat"] if added["cat"] > 0 else None,
                          note=note("supervisor-http")))
    if "cat" in names and all(hooks["cat"]):
        for config, named in (("supervisor", "supervisor"),
                              ("supervisor-http", "supervisor (http)")):
            if config not in names or not all(hooks[config]):
                continue
            out += _hook_figures(label, named, hooks[config], hooks["cat"],
                                 goal=config == "supervisor",
                                 note=f"(of {len(pooled[config])} measured), {way}")
    if "cat" in names and all(waited["cat"]) and all(waited["supervisor"]):
        way_traced = f"{way}, every run but the floor's under strace (`{ENV_STRACE}=1`)"
        for times, what in ((waited, "from the CLI's start of the hook to its reaping"),
                            (lived, "from the hook's execve to its exit")):
            out.append(_trimmed_figure(
                f"{label} hook time per call in the trace, {what}: supervisor vs cat hooks",
                times["supervisor"], times["cat"], None, f"the {_count(times['supervisor'])} "
                f"and {_count(times['cat'])} calls with both hooks in the trace, {way_traced}"))
    if "cat" in names and all(hooks["cat"]) and "supervisor" in names and all(
            hooks["supervisor"]):
        own = {config: _outside_hooks(gaps[config], hooks[config])
               for config in ("supervisor", "cat")}
        rounds_of = ", ".join(f"{mine:.0f} vs {theirs:.0f} ms" for mine, theirs
                              in zip(own["supervisor"][1], own["cat"][1], strict=True))
        out.append(Figure(
            f"{label} own work per call outside its hooks: supervisor vs cat hooks",
            own["supervisor"][0], "ms", baseline=own["cat"][0],
            note=f"{calls}: the median gap less the median hook time the CLI logged; about "
            "1x when the CLI does the same work whichever hooks answer, so that only the "
            f"hook time above differs; per round: {rounds_of}"))
    return out


def _hook_figures(label: str, named: str, ours: list[list[float]], cats: list[list[float]],
                  goal: bool, note: str) -> list[Figure]:
    """The hooks' logged time per call, `named` against the cat hooks, two ways: the median
    (what the runs before 2026-11-29 09:30 reported) and the trimmed mean, which the goal reads
    (`goal`: the supervisor's command hooks). Every CLI in `HOOK_LOGS` logs whole milliseconds,
    and a call's time is a sum of two to four such durations: its median sits on a grid of half
    milliseconds (8 or 8.5 or 9 against 7: 14 % a step at Droid's 7 ms), and reads the grid
    point the most calls fall on, not where the calls' times are; the mean of durations logged
    at a random phase is not biased by the rounding (`common.trimmed_mean`), and dropping 10 %
    at each end keeps a few calls that waited for a CPU from moving it. The trimmed mean's note
    gives its spread two ways: a bootstrap over the calls (within their rounds) and the rounds'
    own figures, which also move with the machine from one run to the next."""
    counts = f"the {_count(ours)} and {_count(cats)} calls whose hooks the CLI logged whole {note}"
    medians = ", ".join(f"{_median_ms(mine):.1f} vs {_median_ms(theirs):.1f} ms"
                        for mine, theirs in zip(ours, cats, strict=True))
    name = f"{label} hook time per call as the CLI logs it"
    return [
        Figure(f"{name}, median: {named} vs cat hooks", _median_ms(_pooled(ours)), "ms",
               baseline=_median_ms(_pooled(cats)),
               note=f"medians of {counts} (whole or half milliseconds: coarse, the goal reads "
               f"the trimmed mean); per round: {medians}"),
        _trimmed_figure(f"{name}, trimmed mean: {named} vs cat hooks", ours, cats,
                        MAX_RATIO if goal else None, counts),
    ]


def _trimmed_figure(name: str, ours: list[list[float]], cats: list[list[float]],
                    max_ratio: float | None, counts: str) -> Figure:
    """`ours` against `cats` (per round, per call, seconds) by their trimmed means, with the
    spread of the ratio over resamplings of the calls and each round's own figures."""
    per_round = ", ".join(f"{_trimmed_ms(mine):.2f} vs {_trimmed_ms(theirs):.2f} ms "
                          f"({_trimmed_ms(mine) / _trimmed_ms(theirs):.2f}x)"
                          for mine, theirs in zip(ours, cats, strict=True))
    low, high = bootstrap_ratio(ours, cats, trimmed_mean)
    return Figure(name, _trimmed_ms(_pooled(ours)), "ms", baseline=_trimmed_ms(_pooled(cats)),
                  max_ratio=max_ratio,
                  note=f"means of {counts}, {TRIM:.0%} of each side's calls dropped at each "
                  f"end; ratio {low:.2f}x-{high:.2f}x (5th-95th percentile of 2,000 "
                  f"resamplings of the calls within their rounds); per round: {per_round}")


def _pooled(rounds: list[list[float]]) -> list[float]:
    return list(itertools.chain.from_iterable(rounds))


def _trimmed_ms(times: list[float]) -> float:
    return trimmed_mean(times) * 1000.0


def _outside_hooks(gaps: list[list[float]],
                   hooks: list[list[float]]) -> tuple[float, list[float]]:
    """The CLI's own work per call (the tool, its transcript, the next request), pooled and per
    round, in ms: the median gap less the median logged hook time (medians, not call by call:
    a lossy log leaves some calls out)."""
    def own(found: list[float], logged: list[float]) -> float:
        return _median_ms(found) - _median_ms(logged)

    return (own(list(itertools.chain.from_iterable(gaps)),
                list(itertools.chain.from_iterable(hooks))),
            [own(found, logged) for found, logged in zip(gaps, hooks, strict=True)])


def _count(rounds: list[list[float]]) -> int:
    return sum(len(found) for found in rounds)


def rotated(names: tuple[str, ...], index: int) -> tuple[str, ...]:
    """Round `index`'s order: the configurations turned by one place a round, so none of them
    always runs right after the same other on a machine whose load drifts."""
    turn = index % len(names)
    return names[turn:] + names[:turn]


def _median_ms(gaps: list[float]) -> float:
    return statistics.median(gaps) * 1000.0


def _per_round(gaps: dict[str, list[list[float]]], config: str) -> list[float]:
    """Per round: the floor itself (`none`), else the configuration's median minus that same
    round's floor: the spread of these is how far the pooled figure can be trusted."""
    floors = [_median_ms(found) for found in gaps["none"]]
    if config == "none":
        return floors
    return [_median_ms(found) - floor for found, floor in zip(gaps[config], floors, strict=True)]


def _listed(values: list[float]) -> str:
    return ", ".join(f"{value:+.1f} ms" for value in values)


class Measured(NamedTuple):
    """One run's calls 2..count (the first call of a session pays its one-time costs), in
    seconds each."""

    gaps: list[float]
    """The calls as the model server sees them (`_gaps`)."""
    logged: list[float]
    """Their hooks' time as the CLI logged it (`HOOK_LOGS`; empty for the others)."""
    waited: list[float]
    """Under `ENV_STRACE`: their two hooks from the CLI's start of each to its reaping."""
    lived: list[float]
    """Under `ENV_STRACE`: their two hooks from each one's `execve` to its exit."""


def _measure(driver: Driver, launch: Launch, executable: Path, sandbox: Sandbox, config: str,
             count: int) -> Measured:
    """One run of `count` calls under `config` (`Measured`)."""
    sandbox.write_policy(POLICY)
    calls = []
    for i in range(count):
        sandbox.write(f"src/module_{i:02d}.txt", f"module {i}: NAME_{i}\n")
        calls.append(driver.shell(f"cat src/module_{i:02d}.txt"))
    sandbox.commit("modules")
    script = Script(main=[turn(call) for call in calls] + [say("Done.")])
    try:
        kept = _warm(driver, launch, executable, sandbox, calls[0], config)
        with launch.api(script) as server:
            agent = launch.runner(executable, sandbox, server)
            trace = sandbox.base / "strace.txt"
            if os.environ.get(ENV_STRACE) == "1" and config != "none":
                command = agent.command
                agent.command = lambda prompt, args: [  # type: ignore[method-assign]
                    *TRACE_ARGS, "-o", str(trace), *command(prompt, args)]
            if kept is not None:
                _keep_hooks(*kept)
            if config == "supervisor-http":
                _configure(driver, agent, config)  # (warmed up with the command hooks)
            done = agent.run("read the modules", timeout=RUN_TIMEOUT_S + PER_CALL_S * count,
                             env=_log_env(driver), args=_log_args(driver))
            found = _gaps(server)
            waited, lived = _traced_hook_times(trace, _is_hook, _is_tool) if trace.exists() \
                else ([], [])
    finally:
        stop_servers(sandbox.store)  # the warm server waits 600 s for its next call
    if done.returncode != 0:
        raise RuntimeError(f"{config}: {done.describe()}")
    if config.startswith("supervisor"):
        _all_allowed(sandbox, config, count)
    if len(found) < count:
        raise RuntimeError(f"{config}: {len(found)} calls measured, not {count}")
    logged = HOOK_LOGS.get(driver.name)
    read = logged is not None and config != "none" and not (
        logged.commands_only and config == "supervisor-http")
    hooks = logged.read(sandbox) if logged is not None and read else []
    if logged is not None and read and len(hooks) < (
            count // 2 if logged.lossy else count):
        raise RuntimeError(f"{config}: the CLI logged the hooks of {len(hooks)} calls, "
                           f"not {count}")
    return Measured(found[1:count], hooks[1:count], waited[1:count], lived[1:count])


def _is_hook(argv: str) -> bool:
    """A hook's process in a trace: the `cat` configuration's, or the supervisor's client."""
    return CAT in argv or "supervisor-hook" in argv


def _is_tool(argv: str) -> bool:
    """A measured call's tool in a trace (`_measure`'s script: `cat src/module_NN.txt`)."""
    return "src/module_" in argv


def _copilot_hook_times(sandbox: Sandbox) -> list[float]:
    """Per tool call of the measured run, the seconds its hooks took as Copilot CLI logged them
    in its session events (`hook.start` to `hook.end`, between the call's
    `tool.execution_start` and `tool.execution_complete`). The measured run is the home's
    newest session (the warm-up's is older)."""
    logs = sorted((sandbox.home / ".copilot" / "session-state").glob("*/events.jsonl"),
                  key=lambda path: path.stat().st_mtime)
    if not logs:
        return []
    started: dict[str, float] = {}
    per_call: list[float] = []
    in_call = False
    for line in logs[-1].read_text().splitlines():
        event = json.loads(line)
        kind, data = event.get("type"), event.get("data") or {}
        at = datetime.fromisoformat(str(event.get("timestamp")).replace("Z", "+00:00"))
        if kind == "tool.execution_start":
            in_call = True
            per_call.append(0.0)
        elif kind == "tool.execution_complete":
            in_call = False
        elif kind == "hook.start" and in_call:
            started[data["hookInvocationId"]] = at.timestamp()
        elif kind == "hook.end" and data.get("hookInvocationId") in started:
            per_call[-1] += at.timestamp() - started.pop(data["hookInvocationId"])
    return per_call


QWEN_HOOKS = re.compile(r"\bHook execution for (\w+): .*total duration: (\d+)ms$")
"""Qwen Code's debug log line closing an event's hooks (`HookEventHandler.logHookExecution`)."""
QWEN_PER_CALL = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch",
                           "UserPromptSubmit"})


def _qwen_hook_times(sandbox: Sandbox) -> list[float]:
    """Per tool call of the measured run, the seconds its hooks took as Qwen Code logged them in
    its debug log (`QWEN_DEBUG_LOG_FILE=1`: `Hook execution for EVENT: ... total duration: Nms`,
    from the hook's spawn to its close, or the HTTP request's start to its answer): the call's
    PreToolUse and the PostToolUse (or PostToolUseFailure), PostToolBatch and UserPromptSubmit
    that follow it, before the next call's PreToolUse. The measured run's log is the newest
    (one file per session; the warm-up's is older)."""
    logs = sorted((sandbox.home / ".qwen" / "debug").glob("*.txt"),
                  key=lambda path: path.stat().st_mtime)
    per_call: list[float] = []
    for line in logs[-1].read_text().splitlines() if logs else []:
        found = QWEN_HOOKS.search(line)
        if found is None:
            continue
        if found.group(1) == "PreToolUse":
            per_call.append(0.0)
        if per_call and found.group(1) in QWEN_PER_CALL:
            per_call[-1] += int(found.group(2)) / 1000.0
    return per_call


DROID_HOOKS = re.compile(r'^\[([^\]]+)\] \w+: \[Hooks\] (Executing hooks|Hook execution completed) '
                         r'\| Context: \{"name":"(\w+)"')
"""Droid's log lines opening and closing an event's hooks (`Yi.executeHooks`: from before the
hook processes are spawned until their answers are parsed)."""


def _droid_hook_times(sandbox: Sandbox) -> list[float]:
    """Per tool call of the measured run whose hook lines Factory Droid logged whole, the
    seconds its hooks took (`~/.factory/logs/droid-log-single.log`, millisecond stamps:
    `[Hooks] Executing hooks` to `[Hooks] Hook execution completed`): the call's PreToolUse and
    PostToolUse. Droid's logger drops lines on a busy machine (a run of 25 calls once logged 25
    openings of PreToolUse hooks and 26 closings), so an event counts only when its closing
    line directly follows its own opening among the hook lines, and a call only when both of
    its events count. The warm-up and the measured run share the home and the log; the
    measured run is the part from the log's last SessionStart on."""
    log = sandbox.home / ".factory" / "logs" / "droid-log-single.log"
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    opened: tuple[str, float] | None = None
    calls: list[list[float | None]] = []
    for line in lines:
        found = DROID_HOOKS.match(line)
        if found is None:
            continue
        stamp, what, event = found.groups()
        at = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        if what == "Executing hooks":
            if event == "SessionStart":
                calls = []  # a new session: the measured run's calls come last
            opened = (event, at)
            continue
        took = at - opened[1] if opened is not None and opened[0] == event else None
        opened = None
        if event == "PreToolUse":
            calls.append([took, None])
        elif event == "PostToolUse" and calls and calls[-1][1] is None:
            calls[-1][1] = took if took is not None else -1.0  # (taken, not counted)
    return [pre + post for pre, post in calls
            if pre is not None and post is not None and post >= 0]


ENV_STRACE = "SUPERVISOR_BENCH_STRACE"
"""`1`: every measured run (not the warm-up, not `none`) runs under `strace -f` too, and the
hooks' time per call is also read from its trace (`_traced_hook_times`): an instrument
independent of the CLI's own log, finer (microseconds) and the same for every CLI. The trace
slows the CLI's process starts (each is stopped for the tracer), so a traced run's other figures
are not comparable with an untraced run's: a run of its own."""
TRACE_ARGS = ("strace", "-f", "-ttt", "-s", "512", "--seccomp-bpf", "-e", "trace=process")
"""Process starts, `execve`s (their arguments whole enough to tell a hook from a tool), waits and
exits only, stamped to the microsecond; with the seccomp filter the traced processes stop for
no other system call."""
TRACED = re.compile(r"^(\d+) +(\d+\.\d+) (.*)$")
SPAWNED = re.compile(r"^(?:<\.\.\. )?(?:v?fork|clone3?)(?:\(| resumed>).*= (\d+)$")
REAPED = re.compile(r"^(?:<\.\.\. )?wait4(?:\(| resumed>).*= (\d+)$")


class Traced(NamedTuple):
    """One process a traced CLI started: when its parent began to start it (the `vfork` or
    `clone`), when it `execve`d, exited and was reaped by its parent, and its command line as
    the trace shows it (cut)."""

    spawned: float
    argv: str
    execed: float | None
    exited: float | None
    reaped: float | None


def _traced_processes(path: Path) -> list[Traced]:
    """The processes of `strace -f -ttt -e trace=process`'s output, in the order they were
    started. A system call interrupted by another process's line is split into
    `<unfinished ...>` and `<... resumed>` lines: a start is stamped at its first line."""
    begun: dict[str, float] = {}
    spawned: dict[str, tuple[float, str]] = {}
    argv: dict[str, tuple[float, str]] = {}
    exited: dict[str, float] = {}
    reaped: dict[str, float] = {}
    for line in path.read_text(errors="replace").splitlines():
        found = TRACED.match(line)
        if found is None:
            continue
        pid, stamp, rest = found.group(1), float(found.group(2)), found.group(3)
        if rest.startswith(("vfork(", "clone(", "clone3(", "fork(")):
            begun[pid] = stamp
        if (started := SPAWNED.match(rest)) is not None:
            spawned[started.group(1)] = (begun.pop(pid, stamp), pid)
        elif rest.startswith("execve(") and pid not in argv:
            argv[pid] = (stamp, rest)
        elif (waited := REAPED.match(rest)) is not None:
            reaped[waited.group(1)] = stamp
        elif rest.startswith("+++ exited") or rest.startswith("+++ killed"):
            exited[pid] = stamp
    out = []
    for child, (stamp, _parent) in sorted(spawned.items(), key=lambda item: item[1][0]):
        execed, text = argv.get(child, (None, ""))
        out.append(Traced(stamp, text, execed, exited.get(child), reaped.get(child)))
    return out


def _traced_hook_times(path: Path, is_hook: Callable[[str], bool],
                       is_tool: Callable[[str], bool]) -> tuple[list[float], list[float]]:
    """Per tool call, from a trace of the CLI (`ENV_STRACE`): the seconds its two hooks took
    from the CLI's start of the hook's process to its reaping of it (what the CLI waits for,
    its own spawn and wake-up included), and from the hook's `execve` to its exit (the hook
    alone). A call is a tool's process (`is_tool`; the processes it starts count as one) with
    a hook started right before it and one right after it, nothing else of either kind
    between."""
    processes: list[Traced] = []
    for process in _traced_processes(path):  # a tool run through a wrapper counts once
        if is_hook(process.argv) or (is_tool(process.argv) and not (
                processes and is_tool(processes[-1].argv))):
            processes.append(process)
    waited: list[float] = []
    lived: list[float] = []
    for before, tool, after in zip(processes, processes[1:], processes[2:], strict=False):
        if not (is_hook(before.argv) and is_tool(tool.argv) and is_hook(after.argv)):
            continue
        pair = (before, after)
        if all(p.reaped is not None for p in pair):
            waited.append(sum(p.reaped - p.spawned for p in pair))  # type: ignore[operator]
        if all(p.execed is not None and p.exited is not None for p in pair):
            lived.append(sum(p.exited - p.execed for p in pair))  # type: ignore[operator]
    return waited, lived


CLAUDE_HOOKS = re.compile(r"\[DEBUG\] Hooks: (\w+)(?::\S*)? \[.*\] finished with status -?\d+ "
                          r"\((\d+)ms\)$")
"""Claude Code's debug log line closing one command hook (`--debug`: its own timing of the hook,
from the spawn to the answer read, in whole milliseconds); its HTTP hooks log no duration."""
CLAUDE_PER_CALL = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch"})


def _claude_hook_times(sandbox: Sandbox) -> list[float]:
    """Per tool call of the measured run, the seconds its command hooks took as Claude Code
    logged them (`--debug`: `~/.claude/debug/<session>.txt`, one file a session; the warm-up's
    is older): the call's PreToolUse and the PostToolUse (or PostToolUseFailure) and
    PostToolBatch that follow it, before the next call's PreToolUse."""
    logs = sorted((sandbox.home / ".claude" / "debug").glob("*.txt"),
                  key=lambda path: path.stat().st_mtime)
    per_call: list[float] = []
    for line in logs[-1].read_text(errors="replace").splitlines() if logs else []:
        found = CLAUDE_HOOKS.search(line)
        if found is None or found.group(1) not in CLAUDE_PER_CALL:
            continue
        if found.group(1) == "PreToolUse":
            per_call.append(0.0)
        if per_call:
            per_call[-1] += int(found.group(2)) / 1000.0
    return per_call


class HookLog(NamedTuple):
    read: Callable[[Sandbox], list[float]]
    """Per tool call of the measured run, the seconds its hooks took as the CLI logged them."""
    env: dict[str, str]
    """What the CLI needs to keep that log: given to every configuration's runs alike."""
    lossy: bool = False
    """The CLI's log may drop lines: fewer calls than were made are read (at least half)."""
    args: tuple[str, ...] = ()
    """Command-line options the CLI needs to keep that log, given like `env`."""
    commands_only: bool = False
    """The log times command hooks only: the HTTP configuration's hooks are not read."""


HOOK_LOGS: dict[str, HookLog] = {
    "copilot": HookLog(_copilot_hook_times, {}),
    "qwen": HookLog(_qwen_hook_times, {"QWEN_DEBUG_LOG_FILE": "1"}),
    "droid": HookLog(_droid_hook_times, {}, lossy=True),
    "claude": HookLog(_claude_hook_times, {}, args=("--debug", "hooks"), commands_only=True),
}
"""CLIs that log when each hook starts and ends (driver name: reader). Their hooks run one after
the other on the call's path (strace: the preToolUse hook, the tool, the postToolUse hook, then
the next request), so the hooks' logged time is what they add, without the CLI's own work
around them, whose swings on a loaded machine are larger than a process start (Copilot: about
140 ms of its own per call, moving by 20-30 ms between runs; Qwen Code: 300-500 ms, moving by
hundreds between rounds, where its four hooks a call take tens of ms each; Factory Droid: about
100 ms quiet, 300-800 ms at a load of 10, moving by hundreds between rounds; Claude Code: its main
thread's CPU per call, same configuration, 59 to 94 ms from one process to the next, traced)."""


def _log_args(driver: Driver) -> tuple[str, ...]:
    logged = HOOK_LOGS.get(driver.name)
    return logged.args if logged is not None else ()


def _log_env(driver: Driver) -> dict[str, str]:
    logged = HOOK_LOGS.get(driver.name)
    return dict(logged.env) if logged is not None else {}


def _configure(driver: Driver, agent: Any, config: str) -> Path | None:
    """Hooks for `config` into the sandbox (none: the runner's fresh sandbox has none; the
    Claude Code runner installs nothing by itself); the file install wrote."""
    if config == "none":
        return None
    done = agent.install_hooks(*(("--transport", "http") if config == "supervisor-http"
                                 else ()))
    found = INSTALLED.search(done.stdout)
    if found is None:
        raise RuntimeError(f"where did install write? {done.stdout[:300]}")
    if config == "cat":
        _cat_hooks(targets.load(driver.agent).settings, Path(found.group(1)))
    if config == "empty":
        _empty_plugin(Path(found.group(1)))
    return Path(found.group(1))


def _empty_plugin(path: Path) -> None:
    """The installed plugin with its `ask` answering nothing at once: every hook runs, builds its
    payload and waits in its session's queue as with the supervisor, and nothing is sent."""
    text = path.read_text()
    if ASK not in text:
        raise RuntimeError(f"no `{ASK.strip()}` in {path}: the empty plugin cannot be made")
    path.write_text(text.replace(ASK, ASK + "  return null; // the benchmark's empty plugin\n"))


def _keep_hooks(path: Path, hooks: Any) -> None:
    """Put the warm-up's hooks back into `path` if the measured run's runner dropped them: the
    Droid and Qwen Code runners write their CLI's settings file afresh when they are made (the
    model server's address is in it, beside the hooks), so before this the measured runs of
    those CLIs had no hooks at all, whatever the configuration."""
    data = json.loads(path.read_text()) if path.exists() else {}
    if data.get("hooks") != hooks:
        data["hooks"] = hooks
        path.write_text(json.dumps(data, indent=2))


def _cat_hooks(spec: Settings, path: Path) -> None:
    """The installed settings with each of our entries running `cat`: the same file, events
    and matchers as the supervisor's, so the CLI starts as many hook processes per call (Qwen
    Code runs four of ours per call, not only the pair around the tool)."""
    data = json.loads(path.read_text())
    for groups in data["hooks"].values():
        for group in [{"hooks": groups}] if spec.flat else groups:
            for entry in group.get("hooks") or []:
                if spec.is_our_hook(entry):
                    entry[spec.command_key] = CAT
    if not any(PAIR.fullmatch(event) for event in data["hooks"]):
        raise RuntimeError(f"no per-call events in {path}: {sorted(data['hooks'])}")
    path.write_text(json.dumps(data, indent=2))


def _all_allowed(sandbox: Sandbox, config: str, count: int) -> None:
    """The supervised run was supervised, and nothing in it was refused or held: each of its
    `count` calls has its verdict (the warm-up's verdicts alone once hid measured runs without
    hooks; and the HTTP runs' hooks were all refused while the warm-up's server, started before
    `install --transport http` made the root's HTTP configuration, never listened on the port,
    until the server followed that file: `supervisor.hooks.http_follow`)."""
    events = [e for session in sandbox.sessions() for e in sandbox.events(session)]
    verdicts = [e.get("action") for e in events if e.get("type") == "verdict"]
    if len(verdicts) < count or set(verdicts) != {"allow"}:
        kinds = sorted({str(e.get("type")) for e in events})
        raise RuntimeError(f"{config}: {len(verdicts)} verdicts "
                           f"{sorted(map(str, set(verdicts)))} for {count} calls, "
                           f"{len(events)} events of types {kinds}")


def _gaps(server: ModelServer) -> list[float]:
    """Per call: when the request with its result arrived minus when the turn asking for it
    was fully answered (one call per turn)."""
    turns = server.conversation()  # type: ignore[attr-defined]
    return [carried.received - asked.answered for asked, carried in itertools.pairwise(turns)
            if asked.answered is not None]


def _warm(driver: Driver, launch: Launch, executable: Path, sandbox: Sandbox,
          call: ToolCall, config: str) -> tuple[Path, Any] | None:
    """One short run first (against a model server of its own), with the hooks of `config`
    (the command hooks for `supervisor-http`): the CLI's own first run in the sandbox's home
    (its caches, its settings) is then behind every configuration alike, and the resident hook
    server is up and has imported the guard (`_measure` stops it after the measured run). For
    a target with command hooks: the settings file and the hooks it held (`_keep_hooks`)."""
    with launch.api(Script(main=[turn(call), say("Done.")])) as server:
        agent = launch.runner(executable, sandbox, server)
        path = _configure(driver, agent, "supervisor" if config == "supervisor-http" else config)
        hooks = json.loads(path.read_text()).get("hooks") if path is not None and isinstance(
            targets.load(driver.agent).settings, Settings) else None
        done = agent.run("warm up", env={"SUPERVISOR_HOOKD_IDLE_S": WARM_IDLE_S,
                                         **_log_env(driver)}, args=_log_args(driver))
        if done.returncode != 0:
            raise RuntimeError(f"warm-up: {done.describe()}")
    time.sleep(0.5)
    return (path, hooks) if path is not None and hooks else None


if __name__ == "__main__":
    for figure in run(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0):
        print(f"{figure.name}: {figure.value:.1f} {figure.unit}"
              + (f" vs {figure.baseline:.1f} (ratio {figure.ratio:.2f})" if figure.baseline
                 else "") + (f"  [{figure.note}]" if figure.note else ""))
