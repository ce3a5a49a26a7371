"""A project install never writes through a link out of the project (attack round 4).

`supervisor install|uninstall AGENT --project DIR` writes DIR's settings file, which is the
agent's (or its repository's) to write, and a settings file that is a link is written through
(a dotfile manager's, for the user's own file). So a project whose `.claude/settings.json` (or
whose `.claude`) was a link to the user's own settings had a project install add the hooks
there, and an uninstall take them out of every session. Now a project's file that leads outside
the project is refused, with nothing written. The real CLI.
"""

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

USERS = {"theme": "dark", "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
    {"type": "command", "command": "/usr/local/bin/my-own-hook"}]}]}}


@pytest.mark.parametrize("command", ["install", "uninstall"])
@pytest.mark.parametrize("linked", ["the file", "its folder"])
def test_a_project_file_linked_out_of_the_project_is_not_written(
        tmp_path: Path, command: str, linked: str) -> None:
    home = tmp_path / "home" / ".claude"
    home.mkdir(parents=True)
    users = home / "settings.json"
    installed = run_cli("install", "claude-code", "--user", HOME=str(tmp_path / "home"),
                        CLAUDE_CONFIG_DIR=str(home))
    assert installed.returncode == 0, installed.stderr
    data = json.loads(users.read_text())
    data.update(USERS)
    users.write_text(json.dumps(data))
    before = users.read_text()
    project = tmp_path / "proj"
    project.mkdir()
    if linked == "the file":
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.json").symlink_to(users)
    else:
        (project / ".claude").symlink_to(home)
    done = run_cli(command, "claude-code", "--project", str(project),
                   HOME=str(tmp_path / "home"), CLAUDE_CONFIG_DIR=str(home))
    assert done.returncode != 0
    assert "leads outside the project" in done.stderr
    assert users.read_text() == before
    assert sorted(p.name for p in home.iterdir()) == ["settings.json"]  # not even a backup


def test_a_link_inside_the_project_is_still_written_through(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "shared").mkdir(parents=True)
    (project / "shared" / "claude.json").write_text("{}")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").symlink_to(project / "shared" / "claude.json")
    done = run_cli("install", "claude-code", "--project", str(project), HOME=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (project / ".claude" / "settings.json").is_symlink()
    assert "PreToolUse" in json.loads((project / "shared" / "claude.json").read_text())["hooks"]
