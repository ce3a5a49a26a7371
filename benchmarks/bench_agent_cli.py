"""Hooks as Claude Code experiences them: the added latency per tool call, through the real CLI.

The real Claude Code CLI (pinned, from the agent CLI suite's npm cache) runs a script of distinct
calls (Reads of distinct files, Globs, Greps) against the suite's fake Messages API. For each call
the fake logs when it finished answering the turn that asked for the call and when the request
carrying its result arrived: that gap is the call as Claude Code runs it, hooks included. Each
configuration runs the same script, interleaved over several rounds:

- none: no hooks (the floor: Claude Code's own work per call);
- `cat >/dev/null`: a PreToolUse + PostToolUse command pair that reads its payload;
- python `json.load`: the same pair as a minimal Python hook;
- supervisor (command): `supervisor install claude-code`, the default transport (the native
  client where the machine has a C compiler, `supervisor.hooks.native`), warm server;
- supervisor (http): `supervisor install claude-code --transport http`.

Figures are the median added latency per call (the configuration's median minus none's, in the
same run). Targets: the supervisor's command hooks at most 1.2x the `cat` pair's added latency
(issue 40); its HTTP hooks below the `cat` pair's.
"""

import itertools
import json
import shutil
import statistics
import sys
import time

from common import Figure, work_dir

from tests.agent_cli import clis
from tests.agent_cli.anthropic_api import AnthropicServer
from tests.agent_cli.claude_runner import ClaudeCode
from tests.agent_cli.sandbox import Sandbox
from tests.agent_cli.script import Script, ToolCall, say, turn
from tests.hookd_helpers import stop_servers

CONFIGS = ("none", "cat", "python", "supervisor", "supervisor-http")
PAIR_EVENTS = ("PreToolUse", "PostToolUse")
SIMPLE_HOOKS = {
    "cat": "cat >/dev/null",
    "python": f"{sys.executable} -c 'import json,sys; json.load(sys.stdin)'",
}
POLICY = "[guard]\ncheckpoints = false\n"


def _calls(sandbox: Sandbox, count: int) -> list[ToolCall]:
    """`count` distinct, healthy calls: Reads of distinct files, with a Glob and a Grep now and
    then, so no detector has anything to say."""
    calls = []
    for i in range(count):
        path = sandbox.write(f"src/module_{i:02d}.py", f"NAME_{i} = 'module {i}'\n")
        if i % 5 == 3:
            calls.append(ToolCall("Grep", {"pattern": f"NAME_{i}\\b", "path": str(path.parent)}))
        elif i % 5 == 4:
            calls.append(ToolCall("Glob", {"pattern": f"src/module_{i:02d}*.py"}))
        else:
            calls.append(ToolCall("Read", {"file_path": str(path)}))
    sandbox.commit("modules")
    return calls


def _configure(claude: ClaudeCode, config: str) -> None:
    settings = claude.sandbox.work / ".claude" / "settings.json"
    if settings.exists():
        settings.unlink()
    if config in SIMPLE_HOOKS:
        entry = {"type": "command", "command": SIMPLE_HOOKS[config], "timeout": 60}
        settings.parent.mkdir(exist_ok=True)
        settings.write_text(json.dumps({"hooks": {
            event: [{"matcher": "*", "hooks": [entry]}] for event in PAIR_EVENTS}}))
    elif config == "supervisor":
        claude.install_hooks()
    elif config == "supervisor-http":
        claude.install_hooks("--transport", "http")


def _gaps(server: AnthropicServer) -> list[float]:
    """Per call: when the request with its result arrived minus when the turn asking for it
    was fully answered (one call per turn)."""
    turns = server.conversation()
    gaps = []
    for asked, carried in itertools.pairwise(turns):
        if asked.answered is not None:
            gaps.append(carried.received - asked.answered)
    return gaps[:-1] if gaps else gaps  # the last gap is the closing text's, not a call's


def run(scale: float = 1.0) -> list[Figure]:
    executable = clis.ensure(clis.CLAUDE)
    count = max(4, round(20 * scale))
    rounds = max(1, round(3 * scale))
    base = work_dir("agent_cli")
    gaps: dict[str, list[float]] = {name: [] for name in CONFIGS}
    try:
        for index in range(rounds):
            for config in CONFIGS:
                sandbox = Sandbox(base / f"{config}-{index}")
                sandbox.write_policy(POLICY)
                calls = _calls(sandbox, count)
                script = Script(main=[turn(call) for call in calls] + [say("Done.")])
                with AnthropicServer(script) as server:
                    claude = ClaudeCode(executable, sandbox, server)
                    _configure(claude, config)
                    if config.startswith("supervisor"):  # measure a warm server
                        _warm(executable, sandbox, calls[0])
                    try:
                        done = claude.run("read the modules")
                    finally:
                        stop_servers(sandbox.store)
                    if done.returncode != 0 or done.result.get("result") != "Done.":
                        raise RuntimeError(f"{config}: {done.describe()}")
                    found = _gaps(server)
                    if len(found) != count - 1:
                        raise RuntimeError(f"{config}: {len(found)} calls measured, not "
                                           f"{count - 1}")
                    gaps[config] += found
    finally:
        shutil.rmtree(base, ignore_errors=True)
    ms = 1000.0
    floor = statistics.median(gaps["none"]) * ms
    added = {name: statistics.median(gaps[name]) * ms - floor for name in CONFIGS}
    note = f"median of {len(gaps['none'])} calls per configuration, {rounds} interleaved rounds"
    return [
        Figure("Claude Code per call, no hooks (the floor)", floor, "ms", note=note),
        Figure("added per call: cat >/dev/null pair", added["cat"], "ms", note=note),
        Figure("added per call: supervisor (command) vs cat >/dev/null pair",
               added["supervisor"], "ms", baseline=added["cat"], max_ratio=1.2, note=note),
        Figure("added per call: supervisor (command) vs python json.load pair",
               added["supervisor"], "ms", baseline=added["python"], note=note),
        Figure("added per call: supervisor (http) vs cat >/dev/null pair",
               added["supervisor-http"], "ms", baseline=added["cat"], max_ratio=1.0,
               note=note),
        Figure("added per call: python json.load pair vs cat pair", added["python"], "ms",
               baseline=added["cat"], note=note),
    ]


def _warm(executable, sandbox: Sandbox, call: ToolCall) -> None:
    """One short run first (against a model server of its own), so the resident hook server
    is up and has imported the guard."""
    with AnthropicServer(Script(main=[turn(call), say("Done.")])) as server:
        ClaudeCode(executable, sandbox, server).run("warm up")
    time.sleep(0.5)


if __name__ == "__main__":
    for figure in run(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0):
        print(f"{figure.name}: {figure.value:.1f} {figure.unit}"
              + (f" vs {figure.baseline:.1f} (ratio {figure.ratio:.2f})" if figure.baseline
                 else ""))
