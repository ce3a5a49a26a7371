"""Capture the hook payloads the real Codex and Gemini CLIs send, as fixtures for the targets.

`python -m tests.agent_cli.capture codex|gemini [--write]` runs a fixed scripted session with a
capture-only hook on every event the CLI has, prints what each event carried, and with
`--write` stores the payloads, in the order the hooks saw them, as
`tests/data/<agent>/session.payloads.jsonl` (the sandbox's paths rewritten to `/home/dev` and
`/home/dev/myapp`); for Codex also the session's transcript (its rollout file, where the exit
codes are that the hooks do not get) as `tests/data/codex/session.rollout.jsonl`.
`test_payload_fixtures.py` runs the same capture against the pinned binary and checks the
fixtures still have the shape the CLI sends.
"""

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agent_cli import clis
from tests.agent_cli.codex_runner import Codex
from tests.agent_cli.gemini_api import GeminiServer
from tests.agent_cli.gemini_runner import Gemini
from tests.agent_cli.openai_api import OpenAIServer
from tests.agent_cli.sandbox import REPO, Sandbox
from tests.agent_cli.script import Script, Text, ToolCall, say, turn

HOOK = Path(__file__).with_name("capture_hook.py")
DATA = REPO / "tests" / "data"
FAKE_HOME = "/home/dev"
FAKE_WORK = "/home/dev/myapp"
FOO = "def add(a, b):\n    return a - b\n"
CHECK = 'python3 -c "from foo import add; assert add(2, 3) == 5, add(2, 3)"'
PROMPT = "fix foo.py"

CODEX_EVENTS = (
    "PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact", "PostCompact",
    "SessionStart", "SessionEnd", "UserPromptSubmit", "SubagentStart", "SubagentStop", "Stop",
    "Interrupt",
)
CODEX_TOOL_EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse")
CODEX_SCRIPT = Script(main=[
    turn(Text("Looking at foo.py."), ToolCall("exec_command", {"cmd": "cat foo.py"})),
    turn(ToolCall("exec_command", {"cmd": CHECK})),
    turn(ToolCall("exec_command", {"cmd": "exit 3"})),
    turn(ToolCall("exec_command", {"cmd": "echo one"}), ToolCall("exec_command", {"cmd": "ls"})),
    say("The check keeps failing; stopping here."),
])

GEMINI_EVENTS = (
    "SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool",
    "PreCompress", "Notification",
)
"""Gemini CLI's hook events but BeforeModel, AfterModel and BeforeToolSelection, which carry the
whole model request (tens of KiB each turn) and are not ones the supervisor registers."""
GEMINI_TOOL_EVENTS = ("BeforeTool", "AfterTool")
GEMINI_SCRIPT = Script(main=[
    turn(Text("Looking at foo.py."), ToolCall("read_file", {"file_path": "foo.py"})),
    turn(ToolCall("replace", {"file_path": "foo.py", "old_string": "return a * b",
                              "new_string": "return a + b", "instruction": "fix add"})),
    turn(ToolCall("replace", {"file_path": "foo.py", "old_string": "return a - b",
                              "new_string": "return a + b", "instruction": "fix add"})),
    turn(ToolCall("run_shell_command", {"command": CHECK, "description": "check add"})),
    turn(ToolCall("run_shell_command", {"command": "exit 3", "description": "fail"})),
    turn(ToolCall("read_file", {"file_path": "missing.py"})),
    turn(ToolCall("glob", {"pattern": "*.py"}), ToolCall("grep_search", {"pattern": "def add"})),
    say("Fixed add; stopping here."),
])


@dataclass(frozen=True, slots=True)
class Captured:
    event: str
    payload: dict[str, Any]


@dataclass(slots=True)
class Capture:
    """A captured session: the payloads, the model's view, and the transcript's text."""

    payloads: list[Captured]
    outputs: list[str]
    """What the model received for each call (tool output texts), in order."""
    transcript: str


def hooks_table(
    events: tuple[str, ...], tool_events: tuple[str, ...], command: str, timeout: int
) -> dict[str, Any]:
    """Claude Code's hooks shape, which Codex and Gemini share."""
    table: dict[str, Any] = {}
    for event in events:
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": command,
                                            "timeout": timeout}]}
        if event in tool_events:
            group = {"matcher": "*", **group}
        table[event] = [group]
    return table


def read_captured(path: Path) -> list[Captured]:
    if not path.exists():
        return []
    return [
        Captured(str(d["event"]), d["payload"])
        for d in map(json.loads, path.read_text().splitlines())
    ]


def anonymize(value: Any, sandbox: Sandbox) -> Any:
    """The sandbox's paths as `/home/dev/myapp` (the work dir) and `/home/dev` (HOME)."""
    text = json.dumps(value)
    for real, fake in ((sandbox.work, FAKE_WORK), (sandbox.home, FAKE_HOME)):
        text = text.replace(str(real), fake)
    return json.loads(text)


def capture_codex(executable: Path, sandbox: Sandbox) -> Capture:
    out = sandbox.base / "captured.jsonl"
    sandbox.write("foo.py", FOO)
    sandbox.commit("add foo")
    with OpenAIServer(CODEX_SCRIPT) as server:
        codex = Codex(executable, sandbox, server)
        codex.codex_home.mkdir(parents=True, exist_ok=True)
        command = f"python3 {HOOK} {out}"
        table = hooks_table(CODEX_EVENTS, CODEX_TOOL_EVENTS, command, 60)
        (codex.codex_home / "hooks.json").write_text(json.dumps({"hooks": table}, indent=1))
        run = codex.run(PROMPT)
        assert run.returncode == 0, run.describe()
        outputs = [o.output for o in server.call_outputs()]
    payloads = read_captured(out)
    transcript = Path(payloads[0].payload["transcript_path"]).read_text() if payloads else ""
    return Capture(payloads, outputs, transcript)


def capture_gemini(executable: Path, sandbox: Sandbox) -> Capture:
    out = sandbox.base / "captured.jsonl"
    sandbox.write("foo.py", FOO)
    sandbox.commit("add foo")
    with GeminiServer(GEMINI_SCRIPT) as server:
        gemini = Gemini(executable, sandbox, server)
        command = f"python3 {HOOK} {out}"
        table = hooks_table(GEMINI_EVENTS, GEMINI_TOOL_EVENTS, command, 60_000)
        gemini.write_user_settings({"hooks": table})
        run = gemini.run(PROMPT)
        assert run.returncode == 0, run.describe()
        outputs = [r.text for r in server.function_responses()]
    return Capture(read_captured(out), outputs, "")


CAPTURES = {"codex": (clis.CODEX, capture_codex), "gemini": (clis.GEMINI, capture_gemini)}


def fixture_path(agent: str) -> Path:
    return DATA / agent / "session.payloads.jsonl"


def transcript_fixture_path(agent: str) -> Path:
    return DATA / agent / "session.rollout.jsonl"


def load_fixture(agent: str) -> list[Captured]:
    return read_captured(fixture_path(agent))


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in CAPTURES:
        print(f"usage: python -m tests.agent_cli.capture {{{','.join(CAPTURES)}}} [--write]",
              file=sys.stderr)
        return 2
    agent = argv[0]
    cli, capture = CAPTURES[agent]
    with tempfile.TemporaryDirectory(prefix="capture-") as tmp:
        sandbox = Sandbox(Path(tmp))
        result = capture(clis.ensure(cli), sandbox)
        captured = [Captured(c.event, anonymize(c.payload, sandbox)) for c in result.payloads]
        transcript = "".join(
            json.dumps(anonymize(json.loads(line), sandbox)) + "\n"
            for line in result.transcript.splitlines() if line.strip()
        )
    for c in captured:
        print(c.event, json.dumps(c.payload)[:300])
    if "--write" in argv:
        path = fixture_path(agent)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(
            json.dumps({"event": c.event, "payload": c.payload}) + "\n" for c in captured
        ))
        print(f"wrote {len(captured)} payloads to {path}")
        if transcript:
            transcript_fixture_path(agent).write_text(transcript)
            print(f"wrote the transcript to {transcript_fixture_path(agent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
