"""A shell command's exit code, read from Codex's transcript (the session's rollout file).

Codex's PostToolUse gives the bare output of a command: no exit code, no failure flag (a
command that exited 3 without output gives `""`). Codex writes the command's end to the rollout
before it runs PostToolUse: an `event_msg` line whose `item_completed` payload is a
`CommandExecution` item with the call's id, `exit_code` and `status` ("failed" when non-zero).
The item was just written, so only the end of the file is read (`TAIL_BYTES`), which keeps the
cost flat as the session grows. The format is internal to Codex: anything unexpected gives
None (the outcome is then unknown, and recorded as a success).
"""

import json
import os

from supervisor.protocol.bounded import loads

TAIL_BYTES = 256 * 1024
"""How much of the rollout's end is searched for the call's item."""


def exit_code(path: str, call_id: str) -> int | None:
    """The exit code Codex recorded for the command `call_id`, or None if not found."""
    needle = json.dumps(call_id).encode()
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(size - TAIL_BYTES, 0))
            data = handle.read(TAIL_BYTES)
    except OSError:
        return None
    for line in reversed(data.splitlines()):
        if needle not in line or b"CommandExecution" not in line:
            continue
        code = _item_exit_code(line, call_id)
        if code is not None:
            return code
    return None


def _item_exit_code(line: bytes, call_id: str) -> int | None:
    try:
        entry = loads(line)
    except ValueError:  # not JSON, or nested too deeply
        return None
    payload = entry.get("payload") if isinstance(entry, dict) else None
    item = payload.get("item") if isinstance(payload, dict) else None
    if not isinstance(item, dict) or item.get("type") != "CommandExecution":
        return None
    if item.get("id") != call_id:
        return None
    code = item.get("exit_code")
    return code if isinstance(code, int) and not isinstance(code, bool) else None
