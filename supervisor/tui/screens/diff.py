"""The diff of what a rollback to a checkpoint would throw away: from the checkpoint to the
work tree now, as `supervisor checkpoints SESSION --patch CP` prints it. Made by git in a
worker thread; file content is the agent's, so every line is cleaned before it is drawn."""

from rich.text import Text
from textual import work

from supervisor.safetext import clean
from supervisor.store.base import Store
from supervisor.store.units import count
from supervisor.tui.checkpoint_changes import Patch, patch_since
from supervisor.tui.format import safe
from supervisor.tui.model import SessionState
from supervisor.tui.screens.pager import PagerScreen


def diff_style(line: str) -> str:
    """The style of one line of a unified diff (headers bold, additions green, ...)."""
    if line.startswith(("+++", "---", "diff --git", "index ", "new file", "deleted file",
                        "old mode", "new mode", "Binary files")):
        return "bold"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    if line.startswith("@@"):
        return "cyan"
    return ""


class DiffScreen(PagerScreen):
    """The unified diff since a checkpoint, in the work tree now."""

    def __init__(self, store: Store, state: SessionState, checkpoint_id: str) -> None:
        super().__init__()
        self.store = store
        """Where the session's work tree is found (git runs there)."""
        self.state = state
        self.session_id = state.session_id
        self.checkpoint_id = checkpoint_id
        self.patch: Patch | None = None

    def on_mount(self) -> None:
        super().on_mount()
        head = Text("What a rollback to ")
        head.append_text(safe(self.checkpoint_id, 40, "bold"))
        head.append(" throws away: the diff since it, in the work tree now  (")
        head.append_text(safe(self.session_id, 40))
        head.append(")")
        self.set_head(head)
        self.show_state("running git diff…")
        self._load()

    @work(thread=True, exclusive=True, group="checkpoint-patch")
    def _load(self) -> None:
        patch = patch_since(self.store, self.state, self.checkpoint_id)
        self.app.call_from_thread(self._show, patch)

    def _show(self, patch: Patch) -> None:
        self.patch = patch
        if patch.text is None:
            self.set_text([Text(patch.reason, style="bold")])
            return
        if not patch.text:
            self.set_text([Text(f"no changes in the work tree since {self.checkpoint_id}",
                                style="bold")])
            return
        lines = [Text(line, style=diff_style(line)) for line in clean(patch.text).split("\n")]
        if patch.truncated_from:
            lines.append(Text(f"(the diff is {count(patch.truncated_from)} bytes; the first "
                              f"{count(len(patch.text.encode()))} are shown: "
                              "supervisor checkpoints --patch prints all of it)",
                              style="dim italic"))
        self.set_text(lines)

    def state_parts(self) -> list[str]:
        patch = self.patch
        if patch is None or patch.text is None:
            return []
        files = sum(1 for line in patch.text.split("\n") if line.startswith("diff --git"))
        return [f"{count(files)} file(s)", f"{count(len(self.pager.lines))} lines"]
