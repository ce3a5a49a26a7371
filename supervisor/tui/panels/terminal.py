"""Terminal: the agent's own screen, for a session `supervisor run` started (docs/run.md).

Its tmux pane is captured with its colours (`tmux capture-pane -e`) a few times a second, only
while the panel is on screen: a timer that runs between the panel's `Show` and `Hide` events,
so a hidden panel costs nothing. Every byte goes through `safetext.clean_sgr` (colour and style
sequences kept, everything else removed) before Rich reads the colours. `a` attaches this
terminal to the pane (the dashboard is suspended until you detach with C-b d; from inside the
supervisor's own tmux, it switches to it); `i` types one line to the agent, recorded in the
session as yours. A run in a worktree shows its branch and diffstat, and `v` shows its diff
beside the screen (`git diff` against the branch's base, new files named), made in the same
worker at the diffstat's pace and only while shown.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.ansi import AnsiDecoder
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static

from supervisor.safetext import clean, clean_sgr
from supervisor.tui.panels.base import Panel
from supervisor.tui.screens.diff import diff_style
from supervisor.tui.view import DashboardView
from supervisor.tui.widgets.text_pager import TextPager

if TYPE_CHECKING:
    from supervisor.host.records import RunRecord, Worktree
    from supervisor.tui.model import SessionState

REFRESH_S = 0.25
"""How often the screen is captured while the panel is shown."""
DIFFSTAT_S = 3.0
"""How often a worktree run's diffstat (and its diff, when shown) is recomputed (git is slower
than tmux)."""
DIFF_LIMIT = 200_000
"""Characters of a worktree's diff shown beside the terminal (`supervisor worktree diff` prints
all of it)."""


class ScreenView(ScrollView, can_focus=True):
    """The captured screen, drawn with the Line API: the worker thread turns each capture into
    strips (sanitising, parsing the colours, rendering the segments), and drawing a line here
    only crops one, so the screen's refresh costs the app's thread next to nothing."""

    DEFAULT_CSS: ClassVar[str] = "ScreenView { height: 1fr; }"

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.text = Text()
        """The screen shown, as text with its colours."""
        self._strips: list[Strip] = []

    def show(self, text: Text, strips: list[Strip], width: int) -> None:
        self.text = text
        self._strips = strips
        self.virtual_size = Size(width, len(strips))
        self.refresh()

    def render_line(self, y: int) -> Strip:
        x, top = self.scroll_offset
        width = self.size.width
        index = top + y
        if index >= len(self._strips):
            return Strip.blank(width, self.rich_style)
        return self._strips[index].crop_extend(x, x + width, self.rich_style)


class TerminalPanel(Panel):
    ID = "terminal"
    TITLE = "Terminal"
    KEY = "T"
    HELP = ("The agent's own terminal (supervisor run): a attaches, i types a line to it, z "
            "shows it across the whole width, v shows its worktree's diff beside it")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "attach", "Attach", show=True),
        Binding("i", "type_line", "Type a line", show=True),
        Binding("z", "full_width", "Full width", show=True),
        Binding("v", "toggle_diff", "Worktree diff", show=True),
    ]
    ALLOW_MAXIMIZE = True
    """`z` shows it alone, across the whole width (Textual's maximize; escape restores)."""
    DEFAULT_CSS: ClassVar[str] = """
    TerminalPanel #terminal-head { height: auto; color: $text-muted; }
    TerminalPanel #terminal-body { height: 1fr; }
    TerminalPanel #terminal-screen { width: 1fr; }
    TerminalPanel #worktree-diff { width: 1fr; display: none; border-left: solid $primary; }
    TerminalPanel #worktree-diff.-shown { display: block; }
    """

    def __init__(self, view: DashboardView, state: SessionState) -> None:
        super().__init__(view, state)
        self.captures = 0
        """Screens captured so far (what a hidden panel must not add to)."""
        self._record: RunRecord | None = None
        self._busy = False
        self._diffstat = ""
        self._diffstat_at = 0.0
        self.diff_shown = False
        """`v`: the worktree's diff is shown beside the screen."""
        self._diff: list[Text] | None = None
        self._last_raw = ""
        self._head = Text()
        self._lines = ScreenLines()

    def compose(self) -> ComposeResult:
        yield Static(id="terminal-head")
        with Horizontal(id="terminal-body"):
            yield ScreenView(id="terminal-screen")
            yield TextPager(id="worktree-diff")

    def on_mount(self) -> None:
        self._timer = self.set_interval(REFRESH_S, self._tick, pause=True)

    def on_show(self) -> None:
        self._timer.resume()
        self._tick()

    def on_hide(self) -> None:
        self._timer.pause()

    def focus_target(self) -> ScreenView:
        return self.query_one(ScreenView)

    def update(self, state: SessionState, now: float) -> None:
        """Nothing to do on the session's events: the screen has its own clock."""

    # -- the screen ----------------------------------------------------------------------------

    def _root(self) -> Path | None:
        root = getattr(self.view.store, "root", None)  # a local store's; Redis has none
        return Path(root) if root is not None else None

    def _tick(self) -> None:
        if self._busy or not self.is_on_screen:
            return
        self._busy = True
        self.run_worker(self._capture, thread=True, exclusive=True, group="terminal")

    def _capture(self) -> None:
        """In a thread: the run's record, its screen, its diffstat; shown by the app's thread."""
        from supervisor.host import HostError, records, worktree
        from supervisor.host.control import server_of

        head: Text = Text()
        screen: tuple[Text, list[Strip], int] | None = (Text(), [], 0)
        diff: list[Text] | None = None
        try:
            root = self._root()
            if root is None:
                head = Text("The agent's terminal is shown for a local root only.",
                            style="dim")
                return
            if self._record is None:
                self._record = records.find(root, self.session_id)
            record = self._record
            if record is None:
                head = Text("Not started by `supervisor run`: no terminal to show.",
                            style="dim")
                return
            server = server_of(record)
            try:
                raw = server.capture(record.tmux_session, colours=True)  # one tmux call a tick
            except HostError:
                if server.has_session(record.tmux_session):
                    raise
                head = Text("Stopped: its tmux session is gone.", style="dim")
                return
            self.captures += 1
            if raw == self._last_raw:
                screen = None  # unchanged: nothing to sanitise nor to draw again
            else:
                self._last_raw = raw
                screen = self._lines.render(raw, self.app.console)
            head = Text("running" if record.alive() else "exited", style="bold")
            head.append("   a attach · i type a line · z full width · v worktree diff",
                        style="dim")
            if record.worktree is not None:
                now = time.monotonic()
                if now - self._diffstat_at > DIFFSTAT_S or (self.diff_shown
                                                            and self._diff is None):
                    self._diffstat = worktree.diffstat(record.worktree)
                    self._diffstat_at = now
                    if self.diff_shown:
                        diff = diff_lines(record.worktree)
                head.append("\nbranch ", style="dim")
                head.append(clean(record.worktree.branch, limit=80))
                head.append("  ")
                head.append(clean(self._diffstat, limit=120))
        except (HostError, OSError) as exc:
            head = Text(clean(str(exc), keep_newlines=False, limit=300), style="red")
        finally:
            self.app.call_from_thread(self._show, head, screen, diff)

    def _show(self, head: Text, screen: tuple[Text, list[Strip], int] | None,
              diff: list[Text] | None = None) -> None:
        self._busy = False
        if diff is not None and self.diff_shown:
            pager = self.query_one("#worktree-diff", TextPager)
            if self._diff is None or [t.plain for t in diff] != [t.plain for t in self._diff]:
                pager.set_lines(diff)
            self._diff = diff
        if (head.plain, head.spans) != (self._head.plain, self._head.spans):
            self._head = head
            self.query_one("#terminal-head", Static).update(head)
        if screen is not None:
            self.query_one(ScreenView).show(*screen)

    # -- attach and type -----------------------------------------------------------------------

    def action_attach(self) -> None:
        from supervisor.host import HostError
        from supervisor.host.control import attach_command

        root = self._root()
        if root is None:
            return
        try:
            argv, env = attach_command(root, self.session_id)
        except (HostError, OSError) as exc:
            self.notify(clean(str(exc), limit=300), severity="error", markup=False)
            return
        if "switch-client" in argv:  # inside the supervisor's own tmux: go there, stay here
            subprocess.run(argv, env=env, capture_output=True)
            return
        try:
            with self.app.suspend():
                subprocess.run(argv, env=env)
        except Exception as exc:  # SuspendNotSupported (a browser, a test driver)
            self.notify(f"cannot attach from here ({type(exc).__name__}): run supervisor "
                        f"attach {self.session_id}", severity="warning", markup=False)

    def action_type_line(self) -> None:
        from supervisor.tui.screens.line import LineScreen

        self.app.push_screen(LineScreen(self.session_id), self._send_line)

    def _send_line(self, line: str | None) -> None:
        root = self._root()
        if root is None or not line:
            return
        from supervisor.host import HostError
        from supervisor.host.control import send
        from supervisor.operator.send import default_operator

        operator = os.environ.get("SUPERVISOR_OPERATOR") or default_operator()
        try:
            send(root, self.session_id, line, operator)
        except (HostError, OSError, ValueError) as exc:
            self.notify(clean(str(exc), limit=300), severity="error", markup=False)
            return
        self.notify("sent to the agent", markup=False)
        self._tick()

    def action_toggle_diff(self) -> None:
        """`v`: the worktree's diff beside the agent's screen, or the screen alone again."""
        self.diff_shown = not self.diff_shown
        self._diff = None
        pager = self.query_one("#worktree-diff", TextPager)
        pager.set_class(self.diff_shown, "-shown")
        if self.diff_shown:
            pager.set_lines([Text("running git diff…", style="dim")])
            self._tick()

    def action_full_width(self) -> None:
        """The agent's screen alone, across the whole terminal (escape comes back)."""
        if self.screen.maximized is self:
            self.screen.minimize()
        else:
            self.screen.maximize(self, container=False)


def diff_lines(tree: Worktree) -> list[Text]:
    """The worktree's diff as lines to show (cleaned: the agent wrote those files), or why
    there is none."""
    from supervisor.host import HostError, worktree

    try:
        text = worktree.diff(tree)
    except HostError as exc:
        return [Text(clean(str(exc), keep_newlines=False, limit=300), style="red")]
    if not text.strip():
        return [Text(f"no changes: the worktree ({clean(tree.branch, limit=80)}) is as it was "
                     "made", style="bold")]
    lines = [Text(line, style=diff_style(line))
             for line in clean(text[:DIFF_LIMIT]).split("\n")]
    if len(text) > DIFF_LIMIT:
        lines.append(Text(f"(the first {DIFF_LIMIT} characters of {len(text)}: supervisor "
                          "worktree diff prints all of it)", style="dim italic"))
    return lines


class ScreenLines:
    """Turns captures into strips, line by line, remembering the lines of the last capture: a
    screen that scrolled or changed a little costs only its new lines. Each line is parsed with
    the style the previous one left (tmux carries colours across lines), so a cached line is
    reused only after the same style."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str], tuple[Text, Strip, Style]] = {}

    def render(self, raw: str, console: Console) -> tuple[Text, list[Strip], int]:
        """The capture, sanitised (colours kept): as text, one strip per line, and its width."""
        known: dict[tuple[str, str], tuple[Text, Strip, Style]] = {}
        decoder = AnsiDecoder()
        texts, strips = [], []
        for line in raw.rstrip("\n").split("\n"):
            key = (str(decoder.style), line)
            found = self._known.get(key) or known.get(key)
            if found is None:
                text = decoder.decode_line(clean_sgr(line, reset=False))
                text.no_wrap = True
                found = (text, Strip(list(text.render(console, end="")), text.cell_len),
                         decoder.style)
            known[key] = found
            decoder.style = found[2]
            texts.append(found[0])
            strips.append(found[1])
        self._known = known
        width = max((strip.cell_length for strip in strips), default=0)
        return Text("\n").join(texts), strips, width
