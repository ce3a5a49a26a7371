"""Start the notifier beside the agent when an escalation is written, so the operator hears of
it with no dashboard open (`supervisor notify deliver`, docs/notify.md).

The guard does not import the notifier (apprise is heavy, and a service that hangs must never
hold a tool call): a thread of its own reads the operator's `config.toml` (is there a `[notify]`
table with `urls`?) and starts a detached process, while the call goes on. The thread is not a
daemon, so a one-shot hook process that exits at once still starts the notifier first; the
process it starts is reaped by a daemon thread (a long-lived SDK agent or resident hook server
keeps no zombie; a hook process that exits leaves it to init).
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from supervisor.userconfig import config_file


def notify_configured() -> bool:
    """True when the operator's config asks for notifications (its URLs are checked later,
    by the notifier, which says what is wrong with them)."""
    import tomllib

    try:
        data = tomllib.loads(config_file().read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    table = data.get("notify")
    return isinstance(table, dict) and bool(table.get("urls"))


def announce(root: Path, session_id: str, escalation_id: str) -> threading.Thread:
    """Start `supervisor notify deliver` for this escalation from a thread; never raises."""
    thread = threading.Thread(target=_start, args=(root, session_id, escalation_id),
                              name="notify-start", daemon=False)
    thread.start()
    return thread


def _start(root: Path, session_id: str, escalation_id: str) -> None:
    import subprocess

    if not notify_configured():
        return
    argv = [sys.executable, "-m", "supervisor", "notify", "deliver", "--root", str(root),
            session_id, escalation_id]
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return  # no notification: the dashboard and the CLI still show the escalation
    threading.Thread(target=proc.wait, name="notify-reaper", daemon=True).start()
