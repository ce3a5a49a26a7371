"""Helpers for the Claude Code hook tests: run the real hook in a subprocess, read sessions."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli_env

DATA = Path(__file__).parent / "data" / "claude_code"

CAPTURED = {  # a real session of each command-hook target, as its CLI sent it
    name: Path(__file__).parent / "data" / path for name, path in {
        "claude-code": "claude_code/2.1.332.payloads.jsonl",
        "codex": "codex/session.payloads.jsonl",
        "gemini": "gemini/session.payloads.jsonl",
        "qwen-code": "qwen_code/session.payloads.jsonl",
        "droid": "droid/session.payloads.jsonl",
        "copilot": "copilot/session.payloads.jsonl",
    }.items()
}
SID = "8a1f2c3d-4e5f-4a6b-9c7d-0e1f2a3b4c5d"


def fixture_payload(name: str, workspace: Path | None = None) -> bytes:
    """A recorded payload, its paths moved into `workspace` (so checkpoints have a real tree)."""
    raw = (DATA / f"{name}.payload.json").read_bytes()
    if workspace is not None:
        raw = raw.replace(b"/home/dev/myapp", str(workspace).encode())
    return raw


def hook_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "supervisor", "hook", "claude-code", *extra]


_native: list[Path] = []


def native_command(*extra: str, target: str = "claude-code") -> list[str]:
    """The native hook client (`supervisor.hooks.native`), built once per test process into a
    private cache of its own, falling back to this interpreter's Python client; the test is
    skipped on a machine without a C compiler."""
    if not _native:
        from supervisor.hooks import native

        if shutil.which("cc") is None:
            pytest.skip("no C compiler: the hooks run the Python client")
        cache = Path(tempfile.mkdtemp(prefix="native-hook-"))
        old = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = str(cache)
        try:
            built = native.client([sys.executable, "-m", "supervisor.hooks.client"])
        finally:
            if old is None:
                del os.environ["XDG_CACHE_HOME"]
            else:
                os.environ["XDG_CACHE_HOME"] = old
        assert built is not None, "the native hook client did not build"
        _native.append(built)
    return [str(_native[0]), target, *extra]


def run_hook(
    payload: bytes | dict[str, Any], root: Path, *extra: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run `supervisor hook claude-code` once with `payload` on stdin."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    done = subprocess.run(
        hook_command(*extra), input=data, capture_output=True, timeout=timeout,
        env=cli_env(SUPERVISOR_HOME=str(root)),
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def start_hook(payload: dict[str, Any], root: Path, *extra: str) -> subprocess.Popen[bytes]:
    """Start the hook without waiting (for holds and parallel runs); stdin is written and closed."""
    proc = subprocess.Popen(
        hook_command(*extra), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=cli_env(SUPERVISOR_HOME=str(root)),
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(payload).encode())
    proc.stdin.close()
    proc.stdin = None  # communicate() must not flush it again
    return proc


def events(root: Path, session: str = SID) -> list[dict[str, Any]]:
    path = root / "sessions" / session / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def payload(event: str, session: str = "loop-1", cwd: Path | None = None, **fields: Any) -> dict:
    """A payload as Claude Code sends it (common fields filled in)."""
    return {
        "session_id": session, "transcript_path": f"/tmp/{session}.jsonl",
        "cwd": str(cwd) if cwd else "/nonexistent", "permission_mode": "default",
        "hook_event_name": event, **fields,
    }
