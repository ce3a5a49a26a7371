"""Hooks as each agent CLI experiences them: the added latency per tool call, through the real CLI.

For every target of the agent CLI scenario kit (`tests/agent_cli/drivers`: Claude Code, Codex,
Gemini, Qwen Code, Droid, Copilot, OpenCode, Kilo, Cline, Pi), the real pinned binary runs a script
of distinct healthy shell calls (`cat` of a different file each time: new output at every step,
so no detector has anything to say), one call per model turn, against the kit's fake model API.
For each call the fake logs when it finished answering the turn that asked for the call and when
the request carrying its result arrived: that gap is the call as the CLI runs it, hooks
included. Each configuration runs the same script, in interleaved rounds:

- none: no hooks, no plugin (the floor: the CLI's own work per call);
- cat: the supervisor's own installed settings with the per-call pair of events (before and
  after a tool: `PreToolUse`/`PostToolUse`, `BeforeTool`/`AfterTool`, `preToolUse`/...) running
  `cat >/dev/null` and nothing else (CLIs with command hooks only);
- supervisor: `supervisor install TARGET` as the kit's runner does it (the native client where a
  C compiler is found, `supervisor.hooks.native`; the plugin for OpenCode, Kilo, Cline and Pi),
  after one short run that starts the resident hook server (a warm server is what a session
  sees);
- supervisor (http): `--transport http`, for the targets that offer it.

Figures per target: the floor, the cat pair's added latency, and the supervisor's added latency
against the cat pair's (target at most 1.2x, issue 40); for a plugin target, the supervisor's
added latency against no plugin (there is no command hook to compare with). A target whose CLI
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
from pathlib import Path
from typing import Any

from common import Figure, work_dir

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
RUN_TIMEOUT_S, PER_CALL_S = 120.0, 20.0
"""A run's time limit: a loaded machine makes some CLIs take seconds per call."""


def run(scale: float = 1.0) -> list[Figure]:
    count = max(4, round(50 * scale))
    rounds = max(1, round(3 * scale))
    wanted = {n for n in os.environ.get("SUPERVISOR_BENCH_AGENTS", "").split(",") if n}
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
        return ("none", "supervisor")  # a plugin: with it, without it
    return ("none", "cat", "supervisor") + (("supervisor-http",) if settings.http_events
                                              else ())


def _target(driver: Driver, count: int, rounds: int) -> list[Figure]:
    launch = LAUNCH[driver.fixture]
    executable = clis.ensure(launch.cli)
    names = configs(driver)
    base = work_dir(f"agent_cli-{driver.name}")
    gaps: dict[str, list[float]] = {name: [] for name in names}
    try:
        for index in range(rounds):
            for config in names:
                gaps[config] += _measure(driver, launch, executable,
                                         Sandbox(base / f"{config}-{index}"), config, count)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    ms = 1000.0
    floor = statistics.median(gaps["none"]) * ms
    added = {name: statistics.median(gaps[name]) * ms - floor for name in names}
    label = _label(driver)
    note = (f"median of {len(gaps['none'])} calls per configuration, {rounds} interleaved "
            f"round(s) of {count} calls")
    out = [Figure(f"{label} per call, no hooks (the floor)", floor, "ms", note=note)]
    if "cat" in names:
        measurable = added["cat"] > 0  # else the pair is lost in this run's noise: no ratio
        out += [
            Figure(f"{label} added per call: cat >/dev/null pair", added["cat"], "ms", note=note),
            Figure(f"{label} added per call: supervisor vs cat pair", added["supervisor"], "ms",
                   baseline=added["cat"] if measurable else None,
                   max_ratio=MAX_RATIO if measurable else None,
                   note=note if measurable else note + "; the cat pair added nothing measurable "
                   "in this run (noise): no ratio"),
        ]
    else:
        out.append(Figure(f"{label} added per call: supervisor plugin vs no plugin",
                          added["supervisor"], "ms", baseline=floor,
                          note=note + "; baseline: the floor (a plugin has no cat pair)"))
    if "supervisor-http" in names:
        out.append(Figure(f"{label} added per call: supervisor (http) vs cat pair",
                          added["supervisor-http"], "ms",
                          baseline=added["cat"] if added["cat"] > 0 else None, note=note))
    return out


def _measure(driver: Driver, launch: Launch, executable: Path, sandbox: Sandbox, config: str,
             count: int) -> list[float]:
    """One run of `count` calls under `config`; the gaps of calls 2..count, in seconds (the
    first call of a session pays its one-time costs)."""
    sandbox.write_policy(POLICY)
    calls = []
    for i in range(count):
        sandbox.write(f"src/module_{i:02d}.txt", f"module {i}: NAME_{i}\n")
        calls.append(driver.shell(f"cat src/module_{i:02d}.txt"))
    sandbox.commit("modules")
    if config.startswith("supervisor"):
        _warm(driver, launch, executable, sandbox, calls[0])
    script = Script(main=[turn(call) for call in calls] + [say("Done.")])
    with launch.api(script) as server:
        agent = launch.runner(executable, sandbox, server)
        _configure(driver, agent, config)
        try:
            done = agent.run("read the modules", timeout=RUN_TIMEOUT_S + PER_CALL_S * count)
        finally:
            stop_servers(sandbox.store)
        if done.returncode != 0:
            raise RuntimeError(f"{config}: {done.describe()}")
        if config.startswith("supervisor"):
            _all_allowed(sandbox, config)
        found = _gaps(server)
    if len(found) < count:
        raise RuntimeError(f"{config}: {len(found)} calls measured, not {count}")
    return found[1:count]


def _configure(driver: Driver, agent: Any, config: str) -> None:
    """Hooks for `config` into the sandbox (none: the runner's fresh sandbox has none; the
    Claude Code runner installs nothing by itself)."""
    if config == "none":
        return
    if config == "supervisor-http":
        agent.install_hooks("--transport", "http")
        return
    done = agent.install_hooks()
    if config == "cat":
        found = INSTALLED.search(done.stdout)
        if found is None:
            raise RuntimeError(f"where did install write? {done.stdout[:300]}")
        _cat_pair(targets.load(driver.agent).settings, Path(found.group(1)))


def _cat_pair(spec: Settings, path: Path) -> None:
    """The installed settings with our entries of the per-call pair of events running `cat`,
    and our other entries gone: the same file, events and matchers as the supervisor's."""
    data = json.loads(path.read_text())
    hooks = data["hooks"]
    for event in list(hooks):
        groups = [{"hooks": hooks[event]}] if spec.flat else hooks[event]
        for group in groups:
            entries = group.get("hooks") or []
            for entry in entries:
                if spec.is_our_hook(entry) and PAIR.fullmatch(event):
                    entry[spec.command_key] = CAT
            group["hooks"] = [e for e in entries
                              if not spec.is_our_hook(e) or e.get(spec.command_key) == CAT]
        kept = [g for g in groups if g["hooks"]]
        if spec.flat:
            kept = kept[0]["hooks"] if kept else []
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not any(PAIR.fullmatch(event) for event in hooks):
        raise RuntimeError(f"no per-call events in {path}: {sorted(hooks)}")
    path.write_text(json.dumps(data, indent=2))


def _all_allowed(sandbox: Sandbox, config: str) -> None:
    """The supervised run was supervised, and nothing in it was refused or held."""
    events = [e for session in sandbox.sessions() for e in sandbox.events(session)]
    verdicts = {e.get("action") for e in events if e.get("type") == "verdict"}
    if not verdicts or verdicts != {"allow"}:
        kinds = sorted({str(e.get("type")) for e in events})
        raise RuntimeError(f"{config}: verdicts {sorted(map(str, verdicts))}, "
                           f"{len(events)} events of types {kinds}")


def _gaps(server: ModelServer) -> list[float]:
    """Per call: when the request with its result arrived minus when the turn asking for it
    was fully answered (one call per turn)."""
    turns = server.conversation()  # type: ignore[attr-defined]
    return [carried.received - asked.answered for asked, carried in itertools.pairwise(turns)
            if asked.answered is not None]


def _warm(driver: Driver, launch: Launch, executable: Path, sandbox: Sandbox,
          call: ToolCall) -> None:
    """One short run first (against a model server of its own), so the resident hook server
    is up and has imported the guard."""
    with launch.api(Script(main=[turn(call), say("Done.")])) as server:
        agent = launch.runner(executable, sandbox, server)
        agent.install_hooks()
        done = agent.run("warm up the server")
        if done.returncode != 0:
            raise RuntimeError(f"warm-up: {done.describe()}")
    time.sleep(0.5)


if __name__ == "__main__":
    for figure in run(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0):
        print(f"{figure.name}: {figure.value:.1f} {figure.unit}"
              + (f" vs {figure.baseline:.1f} (ratio {figure.ratio:.2f})" if figure.baseline
                 else "") + (f"  [{figure.note}]" if figure.note else ""))
