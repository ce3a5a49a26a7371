"""The host layer's pure parts: the colour-keeping sanitiser, the AGENT names from the hook
registry, the per-run hook documents (Codex's `-c` TOML values), and the refusals that need no
tmux."""

import json
import re
import tomllib
from pathlib import Path

import pytest

from supervisor.hooks import targets
from supervisor.host import HostError, agents
from supervisor.safetext import clean_sgr
from tests.tui_support import CONTROL_CHARS, HOSTILE


def test_clean_sgr_keeps_colours_and_nothing_else() -> None:
    text = "\x1b[1;31mred\x1b[0m " + HOSTILE + " \x1b[2J\x1b[10;5Hmoved \x1b[38;5;208morange"
    out = clean_sgr(text)
    assert out.startswith("\x1b[1;31mred\x1b[0m ")
    assert "\x1b[38;5;208morange" in out and out.endswith("\x1b[0m")
    rest = re.sub(r"\x1b\[[0-9;]*m", "", out)  # what is left once the SGR sequences go
    assert "moved" in rest and "2J" not in rest and "10;5H" not in rest
    assert "aGVsbG8" not in rest  # the OSC 52 clipboard write went whole
    assert not (set(rest) & CONTROL_CHARS)  # no other escape, no bidi, no bell


def test_the_agents_are_the_hook_registry_and_its_aliases(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    assert agents.agent_names() == [*targets.names(), "claude"]
    monkeypatch.setitem(targets.TARGETS, "new-agent", "supervisor.hooks.codex")
    assert "new-agent" in agents.agent_names()
    with pytest.raises(HostError, match="supervisor run cannot start Codex CLI yet: install its "
                       r"hooks \(supervisor install new-agent\) and use --cmd"):
        agents.resolve("new-agent")
    with pytest.raises(HostError, match=r"unknown agent 'nope' \(known: .*new-agent"):
        agents.resolve("nope")
    assert agents.resolve("claude")[0].name == "claude-code"


def test_codex_gets_its_hooks_as_toml_overrides(tmp_path: Path) -> None:
    target, launcher = agents.resolve("codex")
    document = agents.hooks_document(target, launcher, tmp_path / "store")
    wiring = launcher.wire(target, document, tmp_path)
    assert wiring.args[-1] == "--dangerously-bypass-hook-trust"
    pairs = wiring.args[:-1]
    assert pairs[::2] == ["-c"] * (len(pairs) // 2)
    parsed = {}
    for override in pairs[1::2]:
        key, _, value = override.partition("=")
        parsed[key.removeprefix("hooks.")] = tomllib.loads(f"v = {value}")["v"]
    assert parsed == json.loads(document)["hooks"]
    command = parsed["PreToolUse"][0]["hooks"][0]["command"]
    assert "codex" in command and str(tmp_path / "store") in command


def test_claude_and_gemini_merge_into_files_of_the_run(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    (home / ".gemini" / "tmp").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text('{"ui": {"theme": "x"}}')
    target, launcher = agents.resolve("gemini")
    private = tmp_path / "run"
    private.mkdir()
    wiring = launcher.wire(target, agents.hooks_document(target, launcher, tmp_path / "s"),
                           private)
    run_home = Path(wiring.env["GEMINI_CLI_HOME"])
    settings = json.loads((run_home / ".gemini" / "settings.json").read_text())
    assert settings["ui"] == {"theme": "x"} and "BeforeTool" in settings["hooks"]
    assert (run_home / ".gemini" / "tmp").resolve() == home / ".gemini" / "tmp"
    assert (home / ".gemini" / "settings.json").read_text() == '{"ui": {"theme": "x"}}'
    target, launcher = agents.resolve("claude")
    wiring = launcher.wire(target, agents.hooks_document(target, launcher, tmp_path / "s"),
                           private)
    assert wiring.args[0] == "--settings"
    assert "PreToolUse" in json.loads(Path(wiring.args[1]).read_text())["hooks"]


def test_screen_lines_carry_colours_across_lines_and_reuse_unchanged_lines() -> None:
    from rich.console import Console

    from supervisor.tui.panels.terminal import ScreenLines

    console = Console(width=200, color_system="truecolor")
    lines = ScreenLines()
    text, strips, width = lines.render("\x1b[31mred\nstill red\x1b[0m plain\n\x1b]0;t\x07x\n",
                                       console)
    assert text.plain == "red\nstill red plain\nx" and width == len("still red plain")
    red = [text.plain[s.start:s.end] for s in text.spans if s.style.color  # type: ignore[union-attr]
           and s.style.color.number == 1]  # type: ignore[union-attr]
    assert red == ["red", "still red"]  # the colour went on to the next line, then stopped
    again = lines.render("still red\x1b[0m plain\n\x1b]0;t\x07x\nnew\n", console)[1]
    assert again[1] is strips[2]  # the same line after the same style: not parsed again
    assert again[0] is not strips[1]  # the same bytes after another style: parsed again


def test_an_exited_process_not_yet_reaped_is_not_alive() -> None:
    """A run's pane process can linger as a zombie until tmux reaps it: its agent is gone."""
    import os
    import subprocess
    import sys
    import time

    from supervisor.store.liveness import pid_alive

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while b" Z " not in Path(f"/proc/{child.pid}/stat").read_bytes().rpartition(b")")[2][:3]:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert not pid_alive(child.pid)  # exited, not reaped: kill(pid, 0) alone says it exists
    child.wait()
    assert not pid_alive(child.pid) and pid_alive(os.getpid())
