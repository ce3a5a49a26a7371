"""The decision-kind registry (`supervisor.protocol.decisions`): everything that lists operator
actions derives from it, and the sender and the agent side refuse in the same words."""

import importlib
import pkgutil
import re
import shlex
import time
from pathlib import Path

import pytest

import supervisor.protocol.decisions as decisions
from supervisor.cli import build_parser
from supervisor.engine.effects import EFFECTS
from supervisor.guard import Session
from supervisor.operator.refusals import command_refusal, unread_decisions
from supervisor.operator.send import send_decision
from supervisor.protocol.decisions import KINDS, actions, decision_problem, escalation_options
from supervisor.protocol.decisions.base import DecisionKind
from supervisor.store.open import as_store
from tests.guard_helpers import events, of_type

DOCS = Path(__file__).resolve().parent.parent / "docs" / "decisions.md"
NOT_KINDS = {"base", "registry", "validate", "plan"}


def docs_row(kind: DecisionKind) -> str:
    """The row docs/decisions.md must have for `kind`."""
    keys = ([f"`{kind.key}` ({kind.protection})"] if kind.key else []) + (
        [f"`{kind.command_key}`"] if kind.command_key else [])
    return (f"| `{kind.name}` | `{kind.action}` | {'yes' if kind.answers else '-'} | "
            f"{'yes' if kind.command else '-'} | {kind.needs or '-'} | `{kind.effect}` | "
            f"{', '.join(keys) or '-'} "
            f"| `{kind.cli}` | {kind.summary} |")


def test_every_kind_module_is_registered_once() -> None:
    modules = {m.name for m in pkgutil.iter_modules(decisions.__path__)} - NOT_KINDS
    registered = {type(k).__module__.rpartition(".")[2] for k in KINDS.values()}
    assert registered == modules
    for name in modules:
        module = importlib.import_module(f"supervisor.protocol.decisions.{name}")
        assert KINDS[module.KIND.name] is module.KIND


def test_the_lists_derive_from_the_registry() -> None:
    assert tuple(k.name for k in KINDS.values() if k.wire is None) == actions()
    assert escalation_options() == ("approve", "guidance", "rollback", "skip", "abort", "split")
    for kind in KINDS.values():
        assert kind.effect in EFFECTS, kind.name
        assert kind.wire is None or kind.wire in actions()
        assert kind.answers == (kind.key is not None), kind.name
    keys = [k.key for k in KINDS.values() if k.key]
    assert len(keys) == len(set(keys))


def test_the_validator_knows_every_action_and_only_those() -> None:
    base = {"type": "decision", "v": 1, "seq": 1, "ts": 0.0, "decision_id": "d",
            "operator": "ana", "text": "t", "checkpoint_id": "cp-1", "tasks": ["a"],
            "detector": "exact_repeat"}
    for action in actions():
        assert decision_problem({**base, "action": action}) is None, action
    assert decision_problem({**base, "action": "resume"}) == (
        f"unknown action \"resume\" (one of {', '.join(actions())})")


def test_docs_table_matches_the_registry() -> None:
    text = DOCS.read_text()
    rows = [line for line in text.splitlines() if re.match(r"\| `[a-z_]+` \| `", line)]
    expected = [docs_row(k) for k in KINDS.values()]
    assert rows == expected, "docs/decisions.md's table, as it should read:\n" + "\n".join(
        expected)


@pytest.mark.parametrize("kind", list(KINDS.values()), ids=list(KINDS))
def test_each_kind_names_a_command_line_that_parses(kind: DecisionKind) -> None:
    line = re.sub(r"\[[^]]*\]", "", kind.cli)
    words = [{"SESSION": "s1", "TEXT": "do this", "CHECKPOINT": "cp-1", "STEP...": "a",
              "NAME": "exact_repeat"}.get(w, w) for w in shlex.split(line)]
    assert words[0] == "supervisor"
    build_parser().parse_args(words[1:])  # exits (fails the test) if there is no such command


def test_sender_and_agent_side_refuse_in_the_same_words(root: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with Session("test-agent", task="t", cwd=work, root=root, session_id="s1",
                 heartbeat_s=None) as s:
        s.before_call("bash", {"command": "ls"})
        s.guard.pause("test")
        store = as_store(root)
        summary = store.summary("s1")
        said = {cmd: command_refusal(summary, cmd, time.time(),
                                     unread_decisions(store, "s1", summary))
                for cmd in ("pause", "reset")}
        send_decision(root, "s1", "pause")   # written past the sender's check, as a stale
        send_decision(root, "s1", "reset")   # dashboard would
        s.guard.poll()
    ignored = [e["reason"] for e in of_type(events(root, "s1"), "decision_ignored")]
    assert said == {"pause": "already paused (esc-1): resume it or decide",
                    "reset": "esc-1 is pending: answer it first (a reset cannot apply while "
                             "the agent waits)"}
    assert ignored == [said["pause"], said["reset"]]


def test_the_dashboard_binds_the_registry_keys_as_deliberate_keys() -> None:
    from textual.binding import Binding

    from supervisor.tui.decision_keys import RegistryKeys
    from supervisor.tui.screens.escalation import EscalationScreen
    from supervisor.tui.screens.session import SessionScreen
    from supervisor.tui.screens.sessions import SessionsScreen

    def bound(screen: type[RegistryKeys], prefix: str) -> dict[str, str]:
        bindings = screen.checked_bindings()  # what an instance binds as it is built
        assert all(isinstance(b, Binding) and b.action.startswith(prefix) for b in bindings)
        return {b.key: b.action for b in bindings}

    answers = bound(EscalationScreen, "decide(")
    assert answers == {k.key: f"decide('{k.name}')" for k in KINDS.values() if k.key}
    for screen in (SessionScreen, SessionsScreen):
        commands = bound(screen, "command(")
        assert commands == {k.command_key: f"command('{k.name}')" for k in KINDS.values()
                            if k.command_key}
