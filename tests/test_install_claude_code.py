"""`supervisor install/uninstall claude-code` on real settings files, through the real CLI."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from supervisor.hooks.claude_code import EVENTS as HOOK_EVENTS
from supervisor.hooks.claude_code import TARGET
from tests.conftest import run_cli

is_our_command = TARGET.settings.is_ours

EXISTING = """{
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": []},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check-bash"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]
    },
    "zzz_unknown": {"kept": [1, 2, 3]}
}
"""


def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "CLAUDE_CONFIG_DIR": ""}


def _install(tmp_path: Path, *args: str):
    return run_cli("install", "claude-code", *args, **_env(tmp_path))


def _uninstall(tmp_path: Path, *args: str):
    return run_cli("uninstall", "claude-code", *args, **_env(tmp_path))


def _ours(settings: dict) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for event, groups in settings.get("hooks", {}).items():
        for group in groups:
            for hook in group["hooks"]:
                if is_our_command(hook.get("command")):
                    found.setdefault(event, []).append({**hook, "matcher": group.get("matcher")})
    return found


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob("settings.json.bak-*"))


def _python_client() -> list[str]:
    """The Python hook client of this interpreter: the `supervisor-hook` script of an installed
    package, else this interpreter with `-m supervisor.hooks.client` (a checkout)."""
    script = Path(sys.executable).with_name("supervisor-hook")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "supervisor.hooks.client"]


def _client_command(tmp_path: Path) -> list[str]:
    """The hook command the installer should write: the native client, built (this machine has
    a C compiler) into the user's cache, which falls back to the Python client."""
    [native] = (tmp_path / "home" / ".cache" / "agent-supervisor" / "hook-client").glob(
        "*/supervisor-hook")
    check = subprocess.run([str(native), "--check"], capture_output=True, text=True, timeout=30)
    assert check.stdout.splitlines()[1] == _python_client()[0]
    return [str(native)]


@pytest.mark.slow
def test_install_into_a_new_user_settings_file(tmp_path: Path) -> None:
    done = _install(tmp_path, "--user", "--timeout", "120")
    assert done.returncode == 0, done.stderr
    path = tmp_path / "home" / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    ours = _ours(settings)
    assert list(ours) == [name for name, _ in HOOK_EVENTS]
    for name, takes_matcher in HOOK_EVENTS:
        [entry] = ours[name]
        assert entry["type"] == "command"
        assert entry["matcher"] == ("*" if takes_matcher else None)
        # the events that may hold a call for the operator get the long timeout
        held = ("PreToolUse", "PostToolBatch", "PreSkillShellCommand")
        assert entry["timeout"] == (120 if name in held else 60)
    command = shlex.split(ours["PreToolUse"][0]["command"])
    assert command[0] == "exec" and Path(command[1]).is_absolute()  # (sh -c: no fork)
    # the native client of the resident hook server (docs/hooks.md)
    assert command == ["exec", *_client_command(tmp_path), "claude-code", "--timeout", "120"]
    assert _backups(path) == []  # nothing was there to back up
    assert "installed" in done.stdout and str(path) in done.stdout


@pytest.mark.slow
def test_without_the_native_client_the_python_client_is_installed(tmp_path: Path) -> None:
    done = run_cli("install", "claude-code", "--user", "--timeout", "120",
                   SUPERVISOR_HOOK_NATIVE="0", **_env(tmp_path))
    assert done.returncode == 0, done.stderr
    settings = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())
    command = shlex.split(_ours(settings)["PreToolUse"][0]["command"])
    assert command == ["exec", *_python_client(), "claude-code", "--timeout", "120"]
    assert not (tmp_path / "home" / ".cache" / "agent-supervisor").exists()


@pytest.mark.slow
def test_install_merges_keeps_everything_and_is_idempotent(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    path = project / ".claude" / "settings.json"
    path.write_text(EXISTING)

    first = _install(tmp_path, "--project", str(project), "--timeout", "300")
    assert first.returncode == 0, first.stderr
    merged = json.loads(path.read_text())
    original = json.loads(EXISTING)
    assert list(merged) == list(original)  # key order kept, nothing dropped
    assert merged["model"] == "opus" and merged["zzz_unknown"] == original["zzz_unknown"]
    assert merged["permissions"] == original["permissions"]
    # the user's hooks come first, untouched; ours are appended as groups of their own
    assert merged["hooks"]["PreToolUse"][0] == original["hooks"]["PreToolUse"][0]
    assert merged["hooks"]["Stop"][0] == original["hooks"]["Stop"][0]
    assert len(merged["hooks"]["PreToolUse"]) == 2 and len(merged["hooks"]["Stop"]) == 2
    [backup] = _backups(path)
    assert backup.read_text() == EXISTING

    text_after_first = path.read_text()
    second = _install(tmp_path, "--project", str(project), "--timeout", "300")
    assert second.returncode == 0, second.stderr
    assert "already installed" in second.stdout
    assert path.read_text() == text_after_first
    assert len(_backups(path)) == 1  # no write, no new backup

    # a new timeout updates our entries in place instead of adding more
    third = _install(tmp_path, "--project", str(project), "--timeout", "400")
    assert third.returncode == 0, third.stderr
    ours = _ours(json.loads(path.read_text()))
    assert all(len(entries) == 1 for entries in ours.values())
    assert ours["PreToolUse"][0]["timeout"] == 400

    removed = _uninstall(tmp_path, "--project", str(project))
    assert removed.returncode == 0, removed.stderr
    assert path.read_text() == EXISTING  # byte for byte, formatting included


@pytest.mark.slow
def test_uninstall_removes_only_ours_after_the_user_edited_the_file(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    path = project / ".claude" / "settings.json"
    path.write_text(EXISTING)
    assert _install(tmp_path, "--project", str(project), "--timeout", "120").returncode == 0
    settings = json.loads(path.read_text())
    settings["theme"] = "dark"
    # the user put a hook of their own into the group we created
    settings["hooks"]["PostToolUse"][0]["hooks"].append({"type": "command", "command": "log-it"})
    path.write_text(json.dumps(settings, indent=2))

    assert _uninstall(tmp_path, "--project", str(project)).returncode == 0
    after = json.loads(path.read_text())
    expected = json.loads(EXISTING)
    expected["theme"] = "dark"
    expected["hooks"]["PostToolUse"] = [
        {"matcher": "*", "hooks": [{"type": "command", "command": "log-it"}]}
    ]
    assert after == expected
    assert _ours(after) == {}
    again = _uninstall(tmp_path, "--project", str(project))
    assert again.returncode == 0 and "no supervisor hooks" in again.stdout


@pytest.mark.slow
def test_uninstall_of_a_file_the_installer_created_removes_it(tmp_path: Path) -> None:
    config = tmp_path / "claude-config"
    env = {**_env(tmp_path), "CLAUDE_CONFIG_DIR": str(config)}
    assert run_cli("install", "claude-code", "--timeout", "60", **env).returncode == 0
    path = config / "settings.json"
    assert path.is_file()  # $CLAUDE_CONFIG_DIR is honoured
    done = run_cli("uninstall", "claude-code", **env)
    assert done.returncode == 0, done.stderr
    assert not path.exists()


@pytest.mark.parametrize(
    ("content", "unreadable"),
    [
        ('{"model": "opus", // a comment\n}', True),
        ('{"hooks": {"PreToolUse": ', True),
        ("[1, 2, 3]", True),
        ('{"hooks": []}', False),
        ('{"hooks": {"PreToolUse": {"matcher": "*"}}}', False),
    ],
)
@pytest.mark.slow
def test_a_malformed_settings_file_is_refused_and_left_untouched(
    tmp_path: Path, content: str, unreadable: bool
) -> None:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    path = project / ".claude" / "settings.json"
    path.write_text(content)
    done = _install(tmp_path, "--project", str(project), "--timeout", "60")
    assert done.returncode == 2, done.stdout
    assert done.stderr.startswith("supervisor: error: ")
    assert str(path) in done.stderr and "Traceback" not in done.stderr
    assert path.read_text() == content and _backups(path) == []

    # uninstall refuses what it cannot read, and finds nothing of ours in odd shapes
    done = _uninstall(tmp_path, "--project", str(project))
    assert done.returncode == (2 if unreadable else 0), done.stderr
    assert ("not valid JSON" in done.stderr or "not a JSON object" in done.stderr) == unreadable
    assert path.read_text() == content and _backups(path) == []


@pytest.mark.slow
def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    path = project / ".claude" / "settings.json"
    path.write_text(EXISTING)
    done = _install(tmp_path, "--project", str(project), "--timeout", "90", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("---") and "+++" in done.stdout
    assert f"{shlex.join(_client_command(tmp_path))} claude-code --timeout 90" in done.stdout
    assert path.read_text() == EXISTING and _backups(path) == []

    assert _install(tmp_path, "--project", str(project), "--timeout", "90").returncode == 0
    installed = path.read_text()
    dry = _uninstall(tmp_path, "--project", str(project), "--dry-run")
    assert dry.returncode == 0 and "-" in dry.stdout and "claude-code" in dry.stdout
    assert path.read_text() == installed


@pytest.mark.slow
def test_the_default_timeout_is_the_policys_hold_time_plus_a_margin(tmp_path: Path) -> None:
    store = tmp_path / "store"
    env = {**_env(tmp_path), "SUPERVISOR_HOME": str(store)}
    assert run_cli("install", "claude-code", **env).returncode == 0
    path = tmp_path / "home" / ".claude" / "settings.json"
    assert _ours(json.loads(path.read_text()))["PreToolUse"][0]["timeout"] == 600 + 30

    store.mkdir()
    (store / "policy.toml").write_text("[guard]\nescalation_deadline_s = 120\n")
    assert run_cli("install", "claude-code", **env).returncode == 0
    [entry] = _ours(json.loads(path.read_text()))["PreToolUse"]
    assert entry["timeout"] == 150 and entry["command"].endswith("--timeout 150")

    (store / "policy.toml").write_text("[guard]\nescalation_deadline_s = 'soon'\n")
    bad = run_cli("install", "claude-code", **env)
    assert bad.returncode == 2 and "policy.toml" in bad.stderr


@pytest.mark.slow
def test_the_installed_command_runs_the_hook_from_a_shell(tmp_path: Path) -> None:
    import subprocess

    from tests.conftest import cli_env

    project = tmp_path / "proj"
    project.mkdir()
    store = tmp_path / "store"
    done = _install(tmp_path, "--project", str(project), "--timeout", "90", "--root", str(store))
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    command = _ours(settings)["PreToolUse"][0]["command"]
    payload = {"session_id": "installed-1", "hook_event_name": "PreToolUse", "cwd": str(project),
               "tool_name": "Read", "tool_input": {"file_path": "/etc/hostname"},
               "tool_use_id": "toolu_1"}
    env = cli_env()
    env.pop("SUPERVISOR_HOME", None)
    env["PATH"] = "/nonexistent"  # the command must not depend on PATH
    run = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), text=True,
                         capture_output=True, env=env, timeout=60)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    events = (store / "sessions" / "installed-1" / "events.jsonl").read_text()
    assert '"type":"tool_call"' in events


@pytest.mark.slow
def test_a_held_call_answers_within_the_installed_entrys_timeout(tmp_path: Path) -> None:
    """Run the installed entries the way Claude Code does (shell, stdin, the entry's timeout):
    a call held for the operator is answered by the fallback before that timeout."""
    import subprocess
    import time

    from supervisor.operator.send import send_decision
    from tests.conftest import cli_env

    project, store = tmp_path / "proj", tmp_path / "store"
    project.mkdir()
    store.mkdir()
    (store / "policy.toml").write_text("[guard]\nescalation_deadline_s = 600\n")
    done = _install(tmp_path, "--project", str(project), "--timeout", "14", "--root", str(store))
    assert done.returncode == 0, done.stderr
    entries = _ours(json.loads((project / ".claude" / "settings.json").read_text()))

    def claude_code_runs(event: str, **fields: object) -> subprocess.CompletedProcess[str]:
        [entry] = entries[event]
        payload = {"session_id": "cc-1", "cwd": str(project), "hook_event_name": event, **fields}
        return subprocess.run(["/bin/sh", "-c", entry["command"]], input=json.dumps(payload),
                              text=True, capture_output=True, env=cli_env(),
                              timeout=entry["timeout"])  # Claude Code gives up here

    assert claude_code_runs("SessionStart", source="startup").returncode == 0
    send_decision(store, "cc-1", "pause", operator="ana")
    started = time.monotonic()
    held = claude_code_runs("PreToolUse", tool_name="Bash", tool_input={"command": "make"},
                            tool_use_id="toolu_1")
    assert time.monotonic() - started < 14
    assert held.returncode == 0, held.stderr
    assert json.loads(held.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.slow
def test_install_and_uninstall_write_through_a_symlinked_settings_file(tmp_path: Path) -> None:
    """A dotfile manager keeps settings.json as a link into its repository: install and
    uninstall change the file it points to and leave the link a link (issue 18). The user's
    own file: a project's that leads out of the project is refused
    (`tests/adversarial/test_adv_project_link.py`)."""
    project = tmp_path / "home"
    (project / ".claude").mkdir(parents=True)
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude-settings.json"
    real.write_text(EXISTING)
    link = project / ".claude" / "settings.json"
    link.symlink_to(real)

    assert _install(tmp_path, "--user", "--timeout", "120").returncode == 0
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert _ours(json.loads(real.read_text()))  # the hooks went into the linked file
    assert [p.name for p in dotfiles.iterdir()] == ["claude-settings.json"]  # no temp left there

    done = _uninstall(tmp_path, "--user")
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and real.read_text() == EXISTING


@pytest.mark.slow
def test_a_link_to_a_file_the_installer_created_stays_a_link_on_uninstall(tmp_path: Path
                                                                         ) -> None:
    project = tmp_path / "home"  # the user's own settings (a project's may not lead out)
    (project / ".claude").mkdir(parents=True)
    real = tmp_path / "dotfiles" / "settings.json"
    link = project / ".claude" / "settings.json"
    real.parent.mkdir()
    link.symlink_to(real)  # dangling: the file does not exist yet
    assert _install(tmp_path, "--user", "--timeout", "120").returncode == 0
    assert link.is_symlink() and _ours(json.loads(real.read_text()))
    assert _uninstall(tmp_path, "--user").returncode == 0
    assert link.is_symlink() and json.loads(real.read_text()) == {}
