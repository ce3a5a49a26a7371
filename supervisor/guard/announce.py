"""Start the notifier beside the agent when an escalation is written, so the operator hears of
it with no dashboard open (`supervisor notify deliver`, docs/notify.md).

The guard does not import the notifier (apprise is heavy, and a service that hangs must never
hold a tool call): it starts a detached process and goes on. Starting it costs a fork and an
exec on the escalating call only; whether to start one at all is read from the operator's
`config.toml` (a `[notify]` table with `urls`), with the stdlib's TOML reader.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import tomllib
from pathlib import Path

from supervisor.userconfig import config_file


def notify_configured() -> bool:
    """True when the operator's config asks for notifications (its URLs are checked later,
    by the notifier, which says what is wrong with them)."""
    try:
        data = tomllib.loads(config_file().read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    table = data.get("notify")
    return isinstance(table, dict) and bool(table.get("urls"))


def announce(root: Path, session_id: str, escalation_id: str) -> None:
    """Start `supervisor notify deliver` for this escalation, detached; never raises."""
    if not notify_configured():
        return
    argv = [sys.executable, "-m", "supervisor", "notify", "deliver", "--root", str(root),
            session_id, escalation_id]
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return  # no notification: the dashboard and the CLI still show the escalation
    # reap it when it ends, so a long-lived process (the SDK, the resident hook server)
    # keeps no zombie; a one-shot hook process exits first and leaves it to init
    threading.Thread(target=proc.wait, name="notify-reaper", daemon=True).start()
