"""Start `supervisor web` in a subprocess on a free port and read the login URL it prints."""

import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.conftest import cli_env


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Web:
    def __init__(self, root: Path | None, *extra: str, env: dict[str, str] | None = None,
                 **popen: Any) -> None:
        where = ["--root", str(root)] if root is not None else []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "supervisor", "web", *where, "--port", "0", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=cli_env(**(env or {})), **popen)
        assert self.proc.stdout is not None
        self.line = self.proc.stdout.readline()
        assert " at http://" in self.line, (self.line, self.proc.stderr.read()
                                            if self.proc.stderr else "")
        self.url = self.line.rsplit(" ", 1)[1].strip()
        """The printed login URL (its code works once)."""
        self.base, _, self.code = self.url.partition("/login?code=")
        config = Path((env or {}).get("SUPERVISOR_CONFIG") or os.environ["SUPERVISOR_CONFIG"])
        self.token = (config / "web-token").read_text().strip()
        """The token scripts send as `Authorization: Bearer`."""

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def get(self, path: str, headers: dict[str, str] | None = None,
            data: bytes | None = None, *, follow: bool = True
            ) -> tuple[int, bytes]:
        request = urllib.request.Request(self.base + path, headers=headers or {}, data=data)
        opener = (urllib.request.build_opener() if follow
                  else urllib.request.build_opener(_NoRedirect))
        try:
            with opener.open(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def login(self, code: str | None = None) -> str:
        """Spend a login code (the printed one by default); the session cookie's value."""
        request = urllib.request.Request(f"{self.base}/login?code={code or self.code}")
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            opener.open(request, timeout=10)
        except urllib.error.HTTPError as exc:
            assert exc.code == 303, exc.code
            cookie = exc.headers["Set-Cookie"]
            name, _, rest = cookie.partition("=")
            assert name == f"supervisor_session_{self.port}", cookie
            return rest.split(";", 1)[0]
        raise AssertionError("a login code did not redirect")

    def stop(self) -> str:
        """Stop it; return what it logged."""
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err
