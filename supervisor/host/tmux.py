"""The supervisor's own tmux server of a store root: one tmux session per agent.

The server is reached with `tmux -L supervisor-<hash of the root>` and started with no
configuration file (`-f /dev/null`), so the user's tmux server, sessions and configuration are
never touched and a run behaves the same on every machine. Panes stay on screen after their
agent exits (`remain-on-exit`), so the operator can still read its last screen.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from supervisor.host import HostError

TIMEOUT_S = 10.0
"""No tmux command of ours takes longer unless the machine is in trouble."""
WIDTH, HEIGHT = 200, 50
"""The size of a pane no client is attached to (an attached client resizes it)."""


def socket_name(root: Path) -> str:
    """The `-L` name of a root's tmux server: one server per store root."""
    digest = hashlib.sha256(str(Path(root).absolute()).encode()).hexdigest()[:12]
    return f"supervisor-{digest}"


def session_name(session_id: str) -> str:
    """The tmux session of a supervisor session (tmux gives '.' and ':' a meaning)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", session_id)


def require_tmux() -> str:
    """The tmux executable, or `HostError` when it is not installed."""
    found = shutil.which("tmux")
    if found is None:
        raise HostError("tmux is not installed (not on PATH): install it to use supervisor run")
    return found


@dataclass(frozen=True, slots=True)
class Server:
    """One supervisor tmux server, by its socket name."""

    socket: str

    def command(self, *args: str) -> list[str]:
        return [require_tmux(), "-L", self.socket, "-f", os.devnull, *args]

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "TMUX"}  # never the caller's server
        try:
            done = subprocess.run(self.command(*args), capture_output=True, text=True,
                                  env=env, timeout=TIMEOUT_S, errors="replace")
        except subprocess.TimeoutExpired as exc:
            raise HostError(f"tmux did not answer within {TIMEOUT_S:g} s") from exc
        if check and done.returncode != 0:
            raise HostError(f"tmux {args[0]}: {done.stderr.strip() or 'failed'}")
        return done

    def has_session(self, name: str) -> bool:
        return self.run("has-session", "-t", f"={name}", check=False).returncode == 0

    def new_session(self, name: str, cwd: Path, argv: list[str]) -> int:
        """Start `argv` in a new detached session; return the pane's pid."""
        self.run(
            # options first: set later, a status line would push the pane's first line away
            "start-server", ";",
            "set-option", "-g", "remain-on-exit", "on", ";",
            # no "Pane is dead" line: drawn at the bottom, it scrolls the first line away
            "set-option", "-g", "remain-on-exit-format", "", ";",
            "set-option", "-g", "history-limit", "5000", ";",
            "set-option", "-g", "status-left", "[#S] ", ";",
            "set-option", "-g", "status-right", "detach: C-b d", ";",
            "new-session", "-d", "-s", name, "-x", str(WIDTH), "-y", str(HEIGHT),
            "-c", str(cwd), "--", *argv,
        )
        return self.pane_pid(name)

    def pane_pid(self, name: str) -> int:
        out = self.run("display-message", "-p", "-t", f"={name}:", "#{pane_pid}").stdout
        try:
            return int(out.strip())
        except ValueError:
            raise HostError(f"tmux gave no pane pid for {name}: {out.strip()!r}") from None

    def pane_dead(self, name: str) -> bool:
        """True when the pane's process has exited (the pane stays, remain-on-exit)."""
        out = self.run("display-message", "-p", "-t", f"={name}:", "#{pane_dead}").stdout
        return out.strip() == "1"

    def capture(self, name: str, colours: bool = False) -> str:
        """The pane's visible screen as text (with SGR colour sequences when `colours`): raw
        agent output, to be sanitised before it is shown (`supervisor.safetext`)."""
        args = ["capture-pane", "-p", "-t", f"={name}:"]
        if colours:
            args.insert(2, "-e")
        return self.run(*args).stdout

    def send_line(self, name: str, text: str) -> None:
        """Type `text` literally into the pane, then Enter. tmux's parser takes an argument
        ending in `;` for a command separator and drops that `;` (and `\\;` for an escaped
        one): the last `;` is escaped, which tmux turns back into exactly `text`."""
        if text.endswith(";"):
            text = text[:-1] + "\\;"
        self.run("send-keys", "-t", f"={name}:", "-l", "--", text)
        self.run("send-keys", "-t", f"={name}:", "Enter")

    def kill_session(self, name: str) -> None:
        self.run("kill-session", "-t", f"={name}", check=False)

    def kill_server(self) -> None:
        """End the server and every agent in it, and remove its socket (tmux leaves it)."""
        self.run("kill-server", check=False)
        base = os.environ.get("TMUX_TMPDIR") or "/tmp"
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(base, f"tmux-{os.getuid()}", self.socket))

    def socket_path(self) -> str | None:
        """The server's socket path while it runs (to tell whether a client is inside it)."""
        done = self.run("display-message", "-p", "#{socket_path}", check=False)
        return done.stdout.strip() or None if done.returncode == 0 else None

    def attach_command(self, name: str) -> list[str]:
        """What attaches this terminal to the session: `switch-client` from inside this very
        server, else `attach-session` (nested inside another tmux: $TMUX is dropped)."""
        inside = os.environ.get("TMUX", "").split(",")[0]
        if inside and inside == self.socket_path():
            return self.command("switch-client", "-t", f"={name}")
        return self.command("attach-session", "-t", f"={name}")


def attach_env() -> dict[str, str]:
    """The environment to attach with: without $TMUX, so tmux accepts a nested client."""
    return {k: v for k, v in os.environ.items() if k != "TMUX"}
