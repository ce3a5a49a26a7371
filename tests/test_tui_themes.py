"""Theme files: shipped themes, user themes, invalid files, --theme and switching."""

from pathlib import Path

import pytest
from tui_support import REPO, load, make_app, start, write_events

from supervisor.tui.app import SupervisorApp
from supervisor.tui.themes import default_folders, load_theme_file, load_themes, user_themes_dir

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_shipped_themes_load() -> None:
    loaded = load_themes(REPO / "themes")
    assert loaded.errors == []
    assert {"supervisor-dark", "supervisor-light", "supervisor-high-contrast"} <= set(
        loaded.themes)
    assert loaded.themes["supervisor-dark"].dark
    assert not loaded.themes["supervisor-light"].dark
    assert loaded.themes["supervisor-high-contrast"].background == "#000000"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('name = "x"\nprimary = ', "invalid TOML"),
        ('name = "x"\nprimary = "not-a-colour"', "not a colour"),
        ('name = "x"', "primary: Field required"),
        ('name = "../evil"\nprimary = "#fff"', "name: String should match pattern"),
        ('name = "x"\nprimary = "#fff"\nsparkle = true', "sparkle: Extra inputs"),
        ('name = 3\nprimary = "#fff"', "name: Input should be a valid string"),
        ('name = "x"\nprimary = 7', "primary: Input should be a valid string"),
        ('name = "x"\nprimary = "#fff"\ndark = "yes"', "dark: Input should be a valid boolean"),
        ('name = "x"\nprimary = "#fff"\ntext_alpha = "x"', "text_alpha: Input should be a valid"),
        ('name = "x"\nprimary = "#fff"\nvariables = 1', "variables: Input should be a valid"),
        ('name = "x"\nprimary = "#fff"\n[variables]\nk = 1', "variables.k: Input should be"),
    ],
)
def test_invalid_theme_files_are_reported_and_skipped(tmp_path: Path, content, reason) -> None:
    (tmp_path / "bad.toml").write_text(content)
    (tmp_path / "good.toml").write_text('name = "good"\nprimary = "#123456"\n')
    loaded = load_themes(tmp_path)
    assert list(loaded.themes) == ["good"]
    assert len(loaded.errors) == 1
    assert str(tmp_path / "bad.toml") in loaded.errors[0] and reason in loaded.errors[0]
    with pytest.raises(ValueError, match=reason.split(":")[0]):
        load_theme_file(tmp_path / "bad.toml")


def test_user_themes_come_from_the_config_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SUPERVISOR_CONFIG", str(tmp_path))
    assert user_themes_dir() == tmp_path / "themes"
    (tmp_path / "themes").mkdir()
    (tmp_path / "themes" / "mine.toml").write_text(
        'name = "supervisor-dark"\nprimary = "#ff00ff"\n')  # overrides the shipped one
    loaded = load_themes(*default_folders())
    assert loaded.themes["supervisor-dark"].primary == "#ff00ff"


@pytest.mark.slow
async def test_unknown_theme_falls_back_with_a_message(root: Path) -> None:
    app = make_app(root, theme="no-such-theme")
    assert app.theme == "supervisor-dark"
    assert "theme 'no-such-theme' not found" in app.startup_messages[0]
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert any("no-such-theme" in str(n.message) for n in app._notifications)


@pytest.mark.slow
async def test_invalid_user_theme_is_notified_and_the_rest_works(root: Path, tmp_path: Path
                                                                  ) -> None:
    folder = tmp_path / "user-themes"
    folder.mkdir()
    (folder / "broken.toml").write_text("name = [")
    app = SupervisorApp(root, live=False, theme="supervisor-light",
                        theme_folders=[REPO / "themes", folder])
    assert app.theme == "supervisor-light"
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert any("broken.toml" in str(n.message) and "invalid TOML" in str(n.message)
                   for n in app._notifications)


@pytest.mark.slow
async def test_switch_theme_from_the_palette_and_with_t(root: Path) -> None:
    write_events(root, "s1", [start()])
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        await pilot.press("ctrl+p", *"Theme: supervisor-high")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.theme == "supervisor-high-contrast"
        await pilot.press("t")
        await pilot.pause()
        assert app.theme == "supervisor-light"
        assert app.get_css_variables()["background"].lower() == "#f7f8fa"


@pytest.mark.slow
def test_dashboard_command_rejects_bad_arguments(tmp_path: Path) -> None:
    from conftest import run_cli

    afile = tmp_path / "file"
    afile.write_text("x")
    result = run_cli("dashboard", "--root", str(afile))
    assert result.returncode == 2 and "is not a directory" in result.stderr
    result = run_cli("dashboard", "--root", str(tmp_path), "--session", "../etc")
    assert result.returncode == 2 and "invalid session id" in result.stderr
    assert "Traceback" not in result.stderr


async def test_a_new_theme_recolours_rows_that_did_not_change(root: Path) -> None:
    """The sessions table makes again only the rows of sessions that changed, but a theme
    switch changes every row's colours: a session that ended long ago is shown in the new
    theme's colours at the next update, not in the old ones for ever."""
    from supervisor.tui import palette
    from supervisor.tui.widgets.session_table import SessionTable

    write_events(root, "s1", [start(), {"type": "session_end", "status": "completed",
                                        "reason": "done"}])
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        table = app.screen.query_one(SessionTable)

        def status_style() -> str:
            return str(table.get_row_at(0)[3].style)

        assert status_style() == palette.style("{ok}")
        before = status_style()
        app.theme = "supervisor-light"
        await load(pilot)
        assert status_style() == palette.style("{ok}") != before
