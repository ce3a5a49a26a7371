"""The hook token never goes into the settings a team commits (issue 41, held but mend).

`supervisor install claude-code --project DIR --transport http` wrote the HTTP entries, with the
hook token in their headers, into `DIR/.claude/settings.json`, which teams commit. Now they go
into `DIR/.claude/settings.local.json` (Claude Code's file for this machine only, kept out of
git), and `uninstall --project` removes them from there too; an agent without such a file
refuses an HTTP install for a project. The real CLI."""

import json
from pathlib import Path

import pytest

from supervisor.hooks.http_transport import load_config
from tests.conftest import run_cli


def _cli(tmp_path: Path, *args: str):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return run_cli(*args, HOME=str(home), CLAUDE_CONFIG_DIR="",
                   SUPERVISOR_HOME=str(tmp_path / "store"))


@pytest.mark.slow
def test_a_project_http_install_keeps_the_token_out_of_shared_settings(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    done = _cli(tmp_path, "install", "claude-code", "--project", str(project), "--transport",
                "http", "--timeout", "120")
    assert done.returncode == 0, done.stderr
    token = load_config(tmp_path / "store").token
    shared = project / ".claude" / "settings.json"
    local = project / ".claude" / "settings.local.json"
    assert not shared.exists() or token not in shared.read_text()
    assert token in local.read_text()
    assert oct(local.stat().st_mode & 0o777) == "0o600"
    assert json.loads(local.read_text())["hooks"]["PreToolUse"]
    gone = _cli(tmp_path, "uninstall", "claude-code", "--project", str(project))
    assert gone.returncode == 0, gone.stderr
    assert not local.exists() or token not in local.read_text()


def test_an_agent_without_a_private_project_file_refuses(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    done = _cli(tmp_path, "install", "qwen-code", "--project", str(project), "--transport",
                "http")
    assert done.returncode != 0 and "hook token" in done.stderr
    assert not (project / ".qwen" / "settings.json").exists()


def _ours(path: Path) -> list[str]:
    """The supervisor's hook entries in a settings file (command or HTTP), as text."""
    if not path.exists():
        return []
    hooks = json.loads(path.read_text()).get("hooks", {})
    return [json.dumps(entry) for groups in hooks.values() for entry in groups
            if "supervisor" in json.dumps(entry) or "/hook" in json.dumps(entry)]


@pytest.mark.slow
def test_switching_a_project_between_transports_leaves_one_of_them(tmp_path: Path) -> None:
    """Command entries in the shared file and HTTP entries in the private one would both run:
    every call recorded twice. Installing one transport removes the other's entries."""
    project = tmp_path / "proj"
    project.mkdir()
    shared = project / ".claude" / "settings.json"
    local = project / ".claude" / "settings.local.json"
    assert _cli(tmp_path, "install", "claude-code", "--project", str(project)).returncode == 0
    assert _ours(shared) and not _ours(local)
    done = _cli(tmp_path, "install", "claude-code", "--project", str(project), "--transport",
                "http", "--timeout", "120")
    assert done.returncode == 0, done.stderr
    assert _ours(local) and not _ours(shared)
    back = _cli(tmp_path, "install", "claude-code", "--project", str(project))
    assert back.returncode == 0, back.stderr
    assert _ours(shared) and not _ours(local)
