"""Helpers shared by the command modules: the root option, errors, safe output."""

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from supervisor.safetext import clean, strip_unsafe

if TYPE_CHECKING:
    from supervisor.store.base import Store


class SafeOutput:
    """A text stream that passes everything written through `safetext.strip_unsafe`: the CLI's
    stdout and stderr, so no command can put a control sequence, a bidi override or an invisible
    character on the terminal, even with a string it forgot to `clean` (which remains the way to
    show agent text well: sequences removed whole, one line, a length limit)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(strip_unsafe(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, buffer, encoding, ...
        return getattr(self._stream, name)


class CliError(Exception):
    """An error to show as one line (`supervisor: error: ...`) with an exit status."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def terminal_columns(out: Any = None) -> int | None:
    """The width of the terminal `out` (stdout) goes to (`COLUMNS` first); None through a pipe,
    where every command writes its lines whole, for a program or a file to read unbroken."""
    import shutil

    stream = sys.stdout if out is None else out
    return shutil.get_terminal_size((120, 20)).columns if stream.isatty() else None


def fitted(text: str, columns: int | None) -> str:
    """A line of prose for a terminal `columns` wide: broken between words short of its edge,
    the lines after the first indented by two (one sentence, not several); whole when
    `columns` is None. A line the terminal wraps by itself breaks words and reads as several."""
    if columns is None:
        return text
    import textwrap

    return textwrap.fill(text, width=max(columns - 1, 20), subsequent_indent="  ",
                         break_long_words=False, break_on_hyphens=False)


def report_error(message: str, status: int) -> int:
    print(f"supervisor: error: {clean(message, keep_newlines=False)}", file=sys.stderr)
    return status


def add_root_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="store root (default: $SUPERVISOR_HOME, else the user state directory)",
    )


def root_from(args: argparse.Namespace) -> Path:
    from supervisor.store.paths import resolve_root

    return resolve_root(getattr(args, "root", None))


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    """`--root DIR` (a local root) or `--store URL` (any store), with what a remote store may
    need: a password file and `--insecure`."""
    add_root_argument(parser)
    parser.add_argument(
        "--store", metavar="URL",
        help="the store: a local root, file:///DIR, redis://[USER[:PASSWORD]@]HOST[:PORT][/DB] "
             "or rediss://... (default: $SUPERVISOR_STORE, else the local root)",
    )
    parser.add_argument(
        "--password-file", metavar="FILE",
        help="read the store's password from FILE (or set $SUPERVISOR_STORE_PASSWORD)",
    )
    parser.add_argument(
        "--insecure", action="store_true",
        help="allow a store on another machine without a password",
    )


def store_from(args: argparse.Namespace) -> "Store":
    """The store the command line names: `--store`, else `--root`, else $SUPERVISOR_STORE,
    else the local root."""
    from supervisor.store.open import StoreOptions, open_store

    url = getattr(args, "store", None)
    root = getattr(args, "root", None)
    if url and root:
        raise CliError("give --root or --store, not both")
    options = StoreOptions(insecure=bool(getattr(args, "insecure", False)),
                           password_file=getattr(args, "password_file", None))
    if root:  # an explicit root beats $SUPERVISOR_STORE
        from supervisor.store.local import LocalStore
        from supervisor.store.paths import resolve_root

        return LocalStore(resolve_root(root))
    return open_store(url, options=options)


def hide_store_password(args: argparse.Namespace) -> None:
    """For a long-running command (relay, dashboard, a followed tail): a password in the
    `--store` URL of its command line shows in every user's process list (`ps`,
    `/proc/PID/cmdline`) for as long as it runs. So the command starts itself again, at once
    and under the same pid, with the password moved to `$SUPERVISOR_STORE_PASSWORD` (the
    environment of a process is readable only by its user) and says so on stderr. Nothing
    happens when the password is not on the command line (`$SUPERVISOR_STORE`, a file)."""
    import os
    from urllib.parse import urlsplit, urlunsplit

    url = getattr(args, "store", None)
    argv = list(getattr(sys, "orig_argv", []))
    if not url or not argv or url not in argv[1:]:
        return
    parts = urlsplit(url)
    if parts.password is None:
        return
    user = parts.username or ""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = (f"{user}@" if user else "") + host + (f":{parts.port}" if parts.port else "")
    stripped = urlunsplit(parts._replace(netloc=netloc))
    from urllib.parse import unquote

    env = {**os.environ, "SUPERVISOR_STORE_PASSWORD": unquote(parts.password)}
    env.pop("SUPERVISOR_STORE_PASSWORD_FILE", None)  # the URL's password came before it
    print("supervisor: warning: a password in --store shows in the process list of this "
          "long-running command; it was moved to the environment (next time use "
          "--password-file or $SUPERVISOR_STORE_PASSWORD_FILE)", file=sys.stderr, flush=True)
    new = [argv[0], *(stripped if a == url else a for a in argv[1:])]
    os.execve(sys.executable, new, env)


def store_label(store: "Store") -> str:
    """The store as a command prints it: a local root as its resolved absolute path (no `~`:
    the line is read, pasted and logged far from the folder and the user it ran as), anything
    else as the store says."""
    from supervisor.store.local import LocalStore

    if isinstance(store, LocalStore):
        return str(store.root.resolve())
    return store.describe()
