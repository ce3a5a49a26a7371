"""A real HTTP receiver on 127.0.0.1 for apprise's `json://` URLs: it records every message and
can be told to refuse the first N (or all) with an HTTP error."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from supervisor.store.writer import event_writer


class Receiver:
    def __init__(self, fail_first: int = 0, status: int = 503) -> None:
        self.messages: list[dict[str, Any]] = []
        self.refused = 0
        self.fail_first = fail_first
        self.status = status
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if receiver.refused < receiver.fail_first:
                    receiver.refused += 1
                    self.send_response(receiver.status)
                    self.end_headers()
                    return
                receiver.messages.append(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.server.server_address[1]}/hook"

    def __enter__(self) -> "Receiver":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def write_config(folder: Path, urls: list[str], **notify: object) -> Path:
    """Write `[notify]` to `folder/config.toml` (the test's $SUPERVISOR_CONFIG)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["[notify]", f"urls = {json.dumps(urls)}"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in notify.items()]
    path = folder / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def escalate(root: Path, session: str, *, deadline: float | None = None) -> None:
    """What a guard writes when a looping Bash call escalates (no agent process needed)."""
    with event_writer(root, session) as w:
        w.append({"type": "session_start", "agent": "test", "task": "fix it", "cwd": None,
                  "pid": None})
        w.append({"type": "tool_call", "call_id": "c9", "tool": "Bash",
                  "args": {"command": "pytest -q tests/test_dates.py"}})
        w.append({"type": "detection", "detector": "repeat", "level": 3, "signature": "s",
                  "evidence": [2, 5, 8], "message": "same call, same error"})
        w.append({"type": "escalation", "escalation_id": "esc-1", "level": 3,
                  "reason": "Paused: this exact call ran 3 times", "evidence": [2, 5, 8],
                  "options": ["approve", "guidance", "skip", "abort"],
                  "deadline_ts": deadline, "fallback": "skip", "kind": "detection",
                  "call_id": "c9"})
