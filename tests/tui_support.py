"""Helpers for the dashboard tests: real files in a temporary root, a frozen clock, UTC times."""

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from supervisor.store.writer import event_writer
from supervisor.tui.app import SupervisorApp

REPO = Path(__file__).resolve().parent.parent
PERSON_READS_S = 1.0
"""How long a test in a real terminal waits before a key that decides (a person reads the
screen first). The dashboard ignores a decision key without a proven quiet of 0.3 s before it
(`supervisor.tui.deliberate`); a loaded machine can delay the input thread that proves it, so a
test pressing sooner than a person would is told it came too soon, as a person would be."""
FROZEN_NOW = 1767229200.0  # 2026-01-01 01:00:00 UTC
HOSTILE = ("[bold red]pwned[/] [link=https://evil.example]click[/link] \x1b[31mred\x1b[0m "
           "\x1b]52;c;aGVsbG8=\x07 \x1b]8;;https://evil.example\x1b\\x\x1b]8;;\x1b\\ "
           "\u202eevil\u202c \x07\x9b2J")
CONTROL_CHARS = set(map(chr, [*range(0, 9), *range(11, 32), *range(0x7F, 0xA0)])) | {
    "\u202e", "\u202c", "\u2066", "\u2069"}


def utc_clock(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(ts)) if ts else "--:--:--"


def write_events(root: Path, sid: str, events: list[dict[str, Any]], *, t0: float = FROZEN_NOW
                 - 600, step: float = 2.0) -> None:
    """Append events with deterministic timestamps (unless an event carries its own `ts`)."""
    writer = event_writer(root, sid)
    try:
        ts = t0 + step * _count(root, sid)
        for event in events:
            ts += step
            writer.append({"ts": ts, **event})
    finally:
        writer.close()


def _count(root: Path, sid: str) -> int:
    path = root / "sessions" / sid / "events.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


def start(agent: str = "demo-agent", task: str = "Fix the build", **extra: Any) -> dict[str, Any]:
    return {"type": "session_start", "agent": agent, "task": task, "cwd": "/work", "pid": 7,
            "policy": {"limits": {"iterations_per_session": {"limit": 10, "action": "stop"},
                                   "errors_per_session": {"limit": 5, "action": "pause"}}}, **extra}


def call(n: int, tool: str = "bash", cmd: str = "make") -> list[dict[str, Any]]:
    return [
        {"type": "tool_call", "call_id": f"c{n}", "tool": tool, "args": {"cmd": cmd}},
        {"type": "tool_result", "call_id": f"c{n}", "ok": n % 2 == 0, "output": f"out {n}",
         "output_bytes": 5, "output_hash": f"h{n}", "error": None if n % 2 == 0 else "exit 1"},
    ]


def escalation(eid: str = "esc-1", evidence: list[int] | None = None, **extra: Any
               ) -> dict[str, Any]:
    return {"type": "escalation", "escalation_id": eid, "level": 3,
            "reason": "exact_repeat: make 5 times", "evidence": evidence or [2, 4],
            "options": ["approve", "guidance", "rollback", "skip", "abort"],
            "deadline_ts": FROZEN_NOW + 125, "fallback": "abort", **extra}


def checkpoint(cid: str, at_seq: int, changed: list[str] | None = None) -> dict[str, Any]:
    event = {"type": "checkpoint", "checkpoint_id": cid, "label": f"label {cid}",
             "commit": "abc123def456", "at_seq": at_seq, "files": 3}
    if changed is not None:
        event["changed_files"] = changed
    return event


def escalated_session(root: Path, sid: str = "s1") -> None:
    """A session with calls, two checkpoints and a pending escalation."""
    events = [start(), checkpoint("cp-1", 1, ["a.py", "b.py"])]
    for n in range(1, 4):
        events += call(n)
    events += [checkpoint("cp-2", 8, ["b.py"]),
               {"type": "detection", "detector": "exact_repeat", "level": 2,
                "signature": "bash:make", "evidence": [3, 5], "message": "make 3 times"},
               escalation(evidence=[3, 5])]
    write_events(root, sid, events)


def followed_app(root: Path, **kwargs: Any) -> SupervisorApp:
    """The dashboard as `supervisor dashboard` runs it, its follower reading in a thread of its
    own (`follower=`: one the test paces), with the tests' theme, frozen clock and UTC times;
    `make_app` is the same dashboard with the test doing the reads."""
    return SupervisorApp(root, theme="supervisor-dark", theme_folders=[REPO / "themes"],
                         clock=lambda: FROZEN_NOW, clock_format=utc_clock, **kwargs)


def make_app(root: Path, **kwargs: Any) -> SupervisorApp:
    kwargs.setdefault("theme", "supervisor-dark")
    kwargs.setdefault("theme_folders", [REPO / "themes"])
    kwargs.setdefault("alert_window", 0.0)  # announce arrivals at the next redraw
    app = SupervisorApp(root, live=False, clock=lambda: FROZEN_NOW, clock_format=utc_clock,
                        table_tick=0.0, **kwargs)
    said: list[str] = []
    notify = app.notify

    def recording(message: Any, *args: Any, **options: Any) -> None:
        said.append(str(message))
        notify(message, *args, **options)

    app.notify = recording  # type: ignore[method-assign]
    app._test_told = said  # type: ignore[attr-defined]
    return app


@asynccontextmanager
async def opened(root: Path, key: str, size: tuple[int, int] = (120, 40)
                 ) -> AsyncIterator[tuple[SupervisorApp, Any]]:
    """The dashboard on `root`, `size` wide and high, its files read, `key` pressed on its
    first screen (`e`: the first escalation's prompt, `R`: a reset): the app and its pilot,
    with whatever `key` opened (or refused) for the test to judge."""
    app = make_app(root)
    async with app.run_test(size=size) as pilot:
        await load(pilot, initial=True)
        await press(pilot, key)
        await pilot.pause()
        yield app, pilot


def told(app: SupervisorApp) -> list[str]:
    """Every notification the app made, in order. `app._notifications` holds only the toasts
    still shown: each goes after its timeout in wall time, which a loaded machine can spend
    between two steps of a test."""
    return app._test_told  # type: ignore[attr-defined,no-any-return]


async def load(pilot: Any, *, initial: bool = False) -> None:
    """Read what is new on disk into the app and redraw (what the live follower does)."""
    app = pilot.app
    await pilot.pause()
    batches = app.follower.scan()
    while True:  # a big file arrives in chunks of the follower's budget
        app.ingest(batches, initial=initial)
        batches = [b for b in app.follower.scan() if not b.gone]
        if not batches:
            break
    app.refresh_screens()
    await pilot.pause()


def control_lines(root: Path, sid: str) -> list[dict[str, Any]]:
    import json

    path = root / "sessions" / sid / "control.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def screen_text(app: SupervisorApp) -> str:
    """What the terminal shows right now, as plain text."""
    from rich.console import Console

    console = Console(record=True, width=app.size.width, file=open("/dev/null", "w"),  # noqa: SIM115
                      color_system=None)
    screen = app.screen
    lines = screen._compositor.render_update(full=True,
                                             screen_stack=list(app._background_screens))
    console.print(lines)
    return console.export_text()


async def until(pilot: Any, predicate: Any, timeout: float = 20.0) -> None:
    """Pause until `predicate()` holds (a worker thread's result arrived), or fail."""
    import asyncio

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError("timed out waiting for the condition")
        await pilot.pause(0.02)
    await pilot.pause()
    await pilot.pause()  # the result is drawn


async def press(pilot: Any, *keys: str) -> None:
    """Press keys as a person does: a key that decides (in the screen's `DELIBERATE_KEYS`)
    comes after a pause longer than a burst's gap (`supervisor.tui.deliberate`); other keys
    at Pilot's pace."""
    from supervisor.tui.deliberate import BURST_GAP_S, key_matches

    for key in keys:
        deliberate = getattr(pilot.app.screen, "DELIBERATE_KEYS", frozenset())
        if key_matches(deliberate, key, key if len(key) == 1 else None):
            await pilot.pause(BURST_GAP_S + 0.05)
        await pilot.press(key)
        await pilot.pause()


async def burst(pilot: Any, keys: str) -> None:
    """Keys as a paste or a shell command typed into the wrong pane deliver them: all at once,
    each stamped on arrival, then handled in order."""
    from textual import events

    from supervisor.tui.deliberate import BURST_GAP_S

    await pilot.pause(BURST_GAP_S + 0.05)  # the burst starts after a quiet moment
    app = pilot.app
    for char in keys:
        key = {"\r": "enter", " ": "space"}.get(char, char)
        app.post_message(events.Key(key, char))
    for _ in range(5):
        await pilot.pause()
