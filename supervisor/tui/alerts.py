"""Alerts outside the terminal: a desktop notification and a command of the operator's choice
when escalations arrive, so nobody has to watch the dashboard to know an agent needs them.

`supervisor dashboard --notify` sends one desktop notification per burst of arrivals
(`notify-send`, when it is installed); `--on-escalation CMD` runs CMD once per escalation with
`/bin/sh -c`, the escalation in its environment (`SUPERVISOR_SESSION`, `SUPERVISOR_ESCALATION`,
`SUPERVISOR_LEVEL`, `SUPERVISOR_REASON`, `SUPERVISOR_KIND`, `SUPERVISOR_DEADLINE`,
`SUPERVISOR_STORE`), never in its command line: agent text cannot inject a shell command.
Commands run detached (their output discarded) and are reaped later; the dashboard never waits
for one.
"""

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from supervisor.safetext import clean

NOTIFY_SEND = "notify-send"
COMMAND_TIMEOUT_S = 60.0
"""A command still running after this long is killed (a hung webhook must not pile up)."""


@dataclass(frozen=True, slots=True)
class Arrival:
    """One escalation that arrived while the dashboard watched."""

    session_id: str
    escalation: dict[str, Any]

    def environment(self, store: str) -> dict[str, str]:
        esc = self.escalation
        deadline = esc.get("deadline_ts")
        return {
            "SUPERVISOR_SESSION": _text(self.session_id, 128),
            "SUPERVISOR_ESCALATION": _text(esc.get("escalation_id"), 128),
            "SUPERVISOR_LEVEL": _text(esc.get("level"), 4),
            "SUPERVISOR_REASON": _text(esc.get("reason"), 1000),
            "SUPERVISOR_KIND": _text(esc.get("kind") or "", 40),
            "SUPERVISOR_DEADLINE": (f"{deadline:.0f}" if isinstance(deadline, int | float)
                                    else ""),
            "SUPERVISOR_STORE": _text(store, 1000),
        }


def summary(arrivals: list[Arrival]) -> tuple[str, str]:
    """(title, body) of the one notification for a burst of arrivals."""
    if len(arrivals) == 1:
        one = arrivals[0]
        return (f"{_text(one.session_id, 60)} needs you",
                _text(one.escalation.get("reason"), 200))
    names = ", ".join(_text(a.session_id, 40) for a in arrivals[:5])
    more = f" and {len(arrivals) - 5} more" if len(arrivals) > 5 else ""
    return f"{len(arrivals)} escalations need you", f"{names}{more}"


class Alerts:
    """Sends the alerts the operator asked for; `problems` says what cannot be sent."""

    def __init__(self, *, desktop: bool = False, command: str | None = None, store: str = "",
                 which: Callable[[str], str | None] = shutil.which) -> None:
        self.command = command
        self.store = store
        self.problems: list[str] = []
        self.notify_send = which(NOTIFY_SEND) if desktop else None
        if desktop and self.notify_send is None:
            self.problems.append(f"--notify: {NOTIFY_SEND} is not installed, so there will be "
                                 "no desktop notifications (install libnotify-bin)")
        self._running: list[tuple[subprocess.Popen[bytes], float]] = []

    @property
    def active(self) -> bool:
        return self.notify_send is not None or self.command is not None

    def send(self, arrivals: list[Arrival], now: float) -> list[str]:
        """Alert on a burst of arrivals; returns what failed (one line each). Blocking only
        as long as starting the processes takes: call it from a worker thread."""
        self.reap(now)
        failures = []
        if self.notify_send is not None and arrivals:
            title, body = summary(arrivals)
            failures += self._spawn([self.notify_send, "--app-name=Agent Supervisor",
                                     "--urgency=critical", title, _no_markup(body)], None, now)
        if self.command:
            for arrival in arrivals:
                env = {**os.environ, **arrival.environment(self.store)}
                failures += self._spawn(["/bin/sh", "-c", self.command], env, now)
        return failures

    def _spawn(self, argv: list[str], env: dict[str, str] | None, now: float) -> list[str]:
        try:
            proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)
        except OSError as exc:
            return [f"alert not sent: {argv[0]}: {exc.strerror or exc}"]
        self._running.append((proc, now))
        return []

    def reap(self, now: float) -> None:
        """Collect finished commands; kill those running longer than `COMMAND_TIMEOUT_S`."""
        still = []
        for proc, started in self._running:
            if proc.poll() is not None:
                continue
            if now - started > COMMAND_TIMEOUT_S:
                proc.kill()
                proc.wait()
                continue
            still.append((proc, started))
        self._running = still

    def close(self) -> None:
        """At exit: wait a moment for commands still running, then leave them be (they run
        in their own session; a notification being sent should still arrive)."""
        for proc, _ in self._running:
            try:
                proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                continue
        self._running = []


def _text(value: object, limit: int) -> str:
    return clean("" if value is None else str(value), keep_newlines=False, limit=limit)


def _no_markup(text: str) -> str:
    """notify-send bodies may be read as markup by the notification server: escape it."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
