"""How the dashboard is built (docs/dashboard.md): state goes down, requests come up.

Screens, panels and widgets are given what they show (`DashboardView`, the session) and post
messages for what they want done; they never reach into the app. Decisions are written in one
place, the app's `DecisionRequested` handler; the app's tick and palette know no screen by name.
"""

import ast
from pathlib import Path

import pytest
from tui_support import escalated_session, load, make_app

from supervisor.tui.messages import DecisionRequested

TUI = Path(__file__).resolve().parent.parent / "supervisor" / "tui"
VIEWS = sorted(p for d in ("screens", "panels", "widgets") for p in (TUI / d).glob("*.py"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _is_self_app(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "app"
            and isinstance(node.value, ast.Name) and node.value.id == "self")


@pytest.mark.parametrize("path", VIEWS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_views_do_not_reach_into_the_app(path: Path) -> None:
    """No `.sv.` locator, no import of the app, no `getattr(self.app, ...)`, no attribute of
    `self.app` that Textual's `App` does not have."""
    from textual.app import App

    textual_app = set(dir(App()))
    text = path.read_text(encoding="utf-8")
    assert ".sv." not in text and "self.sv" not in text
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom):
            assert node.module != "supervisor.tui.app", f"{path.name} imports the app"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "getattr" and node.args:
            assert not _is_self_app(node.args[0]), f"{path.name}: getattr(self.app, ...)"
        if isinstance(node, ast.Attribute) and _is_self_app(node.value):
            assert node.attr in textual_app, f"{path.name}: self.app.{node.attr}"


def test_decisions_are_written_in_one_place() -> None:
    """`send_decision` is called by the app's `DecisionRequested` handler only."""
    callers = []
    for path in sorted(TUI.rglob("*.py")):
        for fn in ast.walk(_tree(path)):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(fn):
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                            and node.func.id == "send_decision":
                        callers.append((path.name, fn.name))
    assert callers == [("app.py", "_write")]
    app = _tree(TUI / "app.py")
    handler = next(n for n in ast.walk(app) if isinstance(n, ast.FunctionDef)
                   and n.name == "on_decision_requested")
    assert any(isinstance(n, ast.Attribute) and n.attr == "_write" for n in ast.walk(handler))


def test_the_tick_and_the_palette_name_no_screen() -> None:
    """The tick redraws every `LiveScreen`, the palette asks the screen for its commands: no
    list of screens, no duck typing."""
    screens = {n.name for p in (TUI / "screens").glob("*.py") for n in ast.walk(_tree(p))
               if isinstance(n, ast.ClassDef)}
    app = _tree(TUI / "app.py")
    for name in ("refresh_screens", "get_system_commands"):
        fn = next(n for n in ast.walk(app) if isinstance(n, ast.FunctionDef) and n.name == name)
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        assert not used & screens, (name, used & screens)
        assert "getattr" not in used, name


@pytest.mark.anyio
async def test_a_decision_posted_by_any_view_is_refused_in_one_place(root: Path) -> None:
    """A read-only dashboard refuses a request from anywhere with the CLI's words; nothing is
    written and the requester is told."""
    escalated_session(root)
    app = make_app(root, read_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        app.screen.post_message(DecisionRequested("s1", "pause", follow=True))
        for _ in range(5):
            await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert "not sent: read-only: decisions are not written" in said
    assert not (root / "sessions" / "s1" / "control.jsonl").exists()


def test_every_screen_keeps_the_css_of_its_textual_base() -> None:
    """Textual inherits CSS along each class's first base that is a DOMNode: a mixin that is
    one (listed first) cut every screen using it off `Screen`'s and `ModalScreen`'s CSS, and
    the escalation prompt stopped dimming the screen under it."""
    import importlib

    from textual.screen import Screen

    screens = []
    for path in sorted((TUI / "screens").glob("*.py")):
        module = importlib.import_module(f"supervisor.tui.screens.{path.stem}")
        screens += [cls for cls in vars(module).values() if isinstance(cls, type)
                    and issubclass(cls, Screen) and cls.__module__ == module.__name__]
    assert len(screens) > 10
    for cls in screens:
        base = next(b for b in cls.__mro__ if b.__module__.startswith("textual."))
        assert base.__name__ in cls._css_type_names, (cls.__name__, cls._css_type_names)
