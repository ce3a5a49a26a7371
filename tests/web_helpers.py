"""Start `supervisor web` in a subprocess on a free port and read the URL it prints."""

import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from tests.conftest import cli_env


class Web:
    def __init__(self, root: Path | None, *extra: str) -> None:
        where = ["--root", str(root)] if root is not None else []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "supervisor", "web", *where, "--port", "0", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env())
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert " at http://" in line, (line, self.proc.stderr.read() if self.proc.stderr else "")
        self.url = line.rsplit(" ", 1)[1].strip()
        self.base, _, self.token = self.url.partition("/?token=")

    def get(self, path: str, headers: dict[str, str] | None = None,
            data: bytes | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(self.base + path, headers=headers or {}, data=data)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def stop(self) -> str:
        """Stop it; return what it logged."""
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err

