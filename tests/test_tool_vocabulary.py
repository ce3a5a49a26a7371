"""The agents' tool vocabulary (`engine/tools.py`): one answer per tool name in every station,
contributions checked when they are made, and every contribution seen wherever a policy is
built. The decision kinds' registry checks its names and keys the same way, and the dashboard's
own keys are checked against the kinds' here (the protocol may not import the dashboard)."""

import subprocess
import sys

import pytest

from supervisor.analysis.seen_files import SeenFiles
from supervisor.engine import tools, workspace
from supervisor.engine.categories import classify
from supervisor.engine.edits import edits_of
from supervisor.engine.facts import facts_of
from supervisor.engine.policy import Policy
from supervisor.engine.tools import ToolVocabulary, VocabularyError
from tests.conftest import REPO


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Contributions made by a test stay in the test (every module that contributes is
    imported first, so none contributes into the test's copy only)."""
    from supervisor.cli.vocabulary import load_all

    load_all()
    monkeypatch.setattr(tools, "_CONTRIBUTIONS", dict(tools._CONTRIBUTIONS))
    monkeypatch.setattr(tools, "_merged", None)


# --- one answer per name in every station -------------------------------------------------

@pytest.mark.parametrize(("tool", "args"), [
    ("exec_command", {"cmd": "rm foo.py"}),
    ("shell", {"command": "rm foo.py"}),
    ("shell", {"command": ["bash", "-lc", "rm foo.py"]}),
    ("Bash", {"command": "rm foo.py"}),
    ("run_shell_command", {"command": "rm foo.py"}),
])
def test_a_shell_line_is_judged_alike_under_every_shell_name_and_key(tool: str, args: dict
                                                                      ) -> None:
    policy = Policy.profile()
    assert classify(tool, args, policy) == "mutate"
    assert workspace.plan(tool, args) == [[["delete", "foo.py"]]]


def test_codex_cmd_reads_as_its_command_in_every_station() -> None:
    policy = Policy.profile()
    assert classify("exec_command", {"cmd": "pytest -q"}, policy) == "run"
    assert classify("exec_command", {"cmd": "cat a.py"}, policy) == "read"
    facts = facts_of("exec_command", {"cmd": "cat a.py"}, policy)
    assert (facts.category, workspace.viewed_path(facts.path, facts.commands)) == ("read", "a.py")
    patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: n.py\n+x = 1\n*** End Patch\nEOF"
    assert [e.path for e in edits_of("exec_command", {"cmd": patch})] == ["n.py"]
    seen = SeenFiles()
    seen.files["a.py"] = seen.get("a.py")
    seen.get("a.py").lines[1] = "x"
    seen.observe({"tool": "exec_command", "args": {"cmd": "rm a.py"}},
                 {"ok": True, "output": ""})
    assert seen.known_blocks("a.py") == []


def test_the_policy_defaults_are_the_vocabulary() -> None:
    policy, names = Policy.profile(), tools.vocabulary()
    assert policy["shell_tools"] == list(names.shell)
    assert policy["path_args"] == list(names.path_keys)
    assert policy["ignore_arg_keys"] == list(names.noise_keys)
    assert set(names.poll) <= set(policy["categories"]["poll"])
    assert set(names.edit + names.write) <= set(policy["categories"]["mutate"])


# --- contributions ------------------------------------------------------------------------

@pytest.mark.usefixtures("registry")
def test_a_contribution_made_after_the_engine_was_imported_is_in_the_next_policy() -> None:
    assert classify("crush_bash", {"command": "rm x"}, Policy.profile()) == "run"
    tools.contribute("crush", ToolVocabulary(shell=("crush_bash",), command_keys=("script",)))
    policy = Policy.profile()
    assert classify("crush_bash", {"script": "rm x"}, policy) == "mutate"
    assert workspace.plan("crush_bash", {"script": "rm x"}) == [[["delete", "x"]]]
    assert "crush" in tools.contributors()


@pytest.mark.usefixtures("registry")
def test_a_name_in_another_role_fails_naming_both_contributors() -> None:
    with pytest.raises(VocabularyError, match=r"crush names 'exec_command' a edit tool; "
                                              r"engine named it a shell tool"):
        tools.contribute("crush", ToolVocabulary(edit=("exec_command",)))
    tools.contribute("crush", ToolVocabulary(edit=("patch_file",)))
    with pytest.raises(VocabularyError, match=r"later names 'patch_file' a read tool; crush"):
        tools.contribute("later", ToolVocabulary(read=("patch_file",)))
    with pytest.raises(VocabularyError, match=r"reads argument 'path' as command_keys; "
                                              r"engine reads it as path_keys"):
        tools.contribute("later", ToolVocabulary(command_keys=("path",)))
    assert "later" not in tools.contributors()


@pytest.mark.usefixtures("registry")
@pytest.mark.parametrize("bad", ["", " Bash", "two words", "tab\there", "nl\n"])
def test_a_malformed_name_fails_when_contributed(bad: str) -> None:
    with pytest.raises(VocabularyError, match="malformed name"):
        tools.contribute("crush", ToolVocabulary(shell=(bad,)))
    with pytest.raises(VocabularyError, match="both shell and read"):
        tools.contribute("crush", ToolVocabulary(shell=("x",), read=("x",)))


@pytest.mark.usefixtures("registry")
def test_repeating_what_is_known_is_no_collision() -> None:
    tools.contribute("codex", ToolVocabulary(shell=("exec_command",), command_keys=("cmd",)))
    tools.contribute("codex", ToolVocabulary(shell=("exec_command",), command_keys=("cmd",)))
    assert tools.vocabulary().shell.count("exec_command") == 1


@pytest.mark.usefixtures("registry")
def test_a_target_and_an_importer_contribute_when_built() -> None:
    from supervisor.hooks import targets
    from supervisor.hooks.target import Target
    from supervisor.importers.base import Importer

    codex = targets.load("codex")
    with pytest.raises(VocabularyError, match="naughty names 'exec_command'"):
        Target(name="naughty", label="N", read=codex.read, answers=codex.answers,
               settings=codex.settings, tools=ToolVocabulary(read=("exec_command",)))
    Importer("crush-log", "Crush session", lambda _: False, lambda _v, _p: [],
             tools=ToolVocabulary(write=("crush_write",)))
    assert "crush_write" in tools.vocabulary().write


_CONTRIBUTORS = """
import json, sys
from supervisor.engine import tools
{before}
from supervisor.engine.policy import Policy
policy = Policy.profile()
{after}
print(json.dumps([list(tools.contributors()), policy["shell_tools"]]))
"""


def _contributors(before: str, after: str = "") -> list:
    import json

    out = subprocess.run([sys.executable, "-c", _CONTRIBUTORS.format(before=before, after=after)],
                         capture_output=True, text=True, check=True, cwd=REPO)
    return json.loads(out.stdout)


def test_every_replay_entry_point_sees_every_contribution() -> None:
    from supervisor.cli.vocabulary import load_all
    from supervisor.hooks import targets
    from supervisor.importers import IMPORTERS

    expected = {t.name for t in map(targets.load, targets.names()) if t.tools} | {
        i.name for i in IMPORTERS.values() if i.tools}
    assert {"codex", "gemini", "gemini-cli"} <= expected
    assert expected <= set(load_all())
    # a fresh `supervisor analyze` process: loaded before its policy is built
    contributors, shell = _contributors(
        "from supervisor.cli import analyze_cmd\nimport supervisor.cli.vocabulary as v\n"
        "v.load_all()")
    assert expected <= set(contributors) and "exec_command" in shell
    # the live hook: its own target, imported before the guard builds the policy
    contributors, _ = _contributors("from supervisor.hooks import targets\n"
                                    "targets.load('codex')")
    assert contributors[:2] == ["engine", "codex"]


def test_the_quality_benchmark_and_analyze_load_the_vocabulary_first() -> None:
    for path in ("benchmarks/bench_quality.py", "supervisor/cli/analyze_cmd.py"):
        text = (REPO / path).read_text()
        assert "load_all()" in text
        assert text.index("load_all()") < text.index("Policy.profile(\"default\")" if "bench"
                                                     in path else "load_policy(")


# --- decision kinds: names and keys --------------------------------------------------------

def test_decision_kinds_check_names_and_keys_when_registered() -> None:
    from supervisor.protocol.decisions import KINDS
    from supervisor.protocol.decisions.registry import registered

    kinds = tuple(KINDS.values())
    assert registered(kinds) == KINDS

    class Echo(type(KINDS["pause"])):  # type: ignore[misc]
        name = "echo"
        command_key = "P"

    with pytest.raises(ValueError, match="'pause' and 'echo' share the command_key 'P'"):
        registered((*kinds, Echo()))
    Echo.command_key = "PP"
    with pytest.raises(ValueError, match="command_key must be one letter"):
        registered((*kinds, Echo()))
    Echo.name, Echo.command_key = "pause", None
    with pytest.raises(ValueError, match="are both named 'pause'"):
        registered((*kinds, Echo()))


def dashboard_key_clashes(command_keys: frozenset[str], answer_keys: frozenset[str]
                          ) -> list[str]:
    """The dashboard's own keys (screens, panels, their bindings, the app's) that a decision
    kind's key would shadow."""
    from supervisor.tui.app import SupervisorApp
    from supervisor.tui.panels import PANELS
    from supervisor.tui.screens.escalation import EscalationScreen
    from supervisor.tui.screens.session import SessionScreen
    from supervisor.tui.screens.sessions import SessionsScreen

    def own(*classes: type, skip: str) -> dict[str, str]:
        keys = {}
        for klass in classes:
            for binding in klass.__dict__.get("BINDINGS", ()):
                if skip not in binding.action:
                    for key in binding.key.split(","):
                        keys[key] = f"{klass.__name__} {binding.action}"
        return keys

    session_keys = own(SessionScreen, SessionsScreen, SupervisorApp, *PANELS, skip="command(")
    session_keys.update({panel.KEY: f"panel {panel.ID}" for panel in PANELS})
    escalation_keys = own(EscalationScreen, SupervisorApp, skip="decide(")
    return ([f"command key {k!r} is {session_keys[k]}'s" for k in sorted(command_keys)
             if k in session_keys]
            + [f"answer key {k!r} is {escalation_keys[k]}'s" for k in sorted(answer_keys)
               if k in escalation_keys])


def test_no_decision_key_shadows_a_dashboard_key() -> None:
    from supervisor.tui.decision_keys import answer_bindings, command_bindings

    commands = frozenset(b.key for b in command_bindings())
    answers = frozenset(b.key for b in answer_bindings())
    assert dashboard_key_clashes(commands, answers) == []
    # a new kind's command key `E` would take the plan panel's "Edit plan"
    found = dashboard_key_clashes(commands | {"E"}, answers | {"n"})
    assert len(found) == 2 and "'E'" in found[0] and "replan" in found[0]
    assert "next_pending" in found[1]
