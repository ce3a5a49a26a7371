"""One checkpoint in detail, for the Checkpoints panel and the rollback picker alike.

What the checkpoint changed since the previous one comes from its event (the guard records it:
no git); what a rollback to it would throw away (since it, in the work tree now) runs git over
the workspace, so it is asked in a worker thread and shown when it arrives, and asked again
every `RECHECK_S` while it is shown: the agent may go on editing, and what an operator reads
before a rollback must be what the rollback would do now.
"""

from rich.text import Text
from textual import work
from textual.widgets import Static

from supervisor.store.base import Store
from supervisor.store.units import count
from supervisor.tui.checkpoint_changes import SinceCheckpoint, files_since
from supervisor.tui.format import safe
from supervisor.tui.model import CheckpointInfo, SessionState

FILES_SHOWN = 200
RECHECK_S = 2.0
"""How often what a rollback throws away is asked of git again while it is shown."""


class CheckpointDetail(Static):
    """The facts of one checkpoint and what a rollback to it would undo."""

    def __init__(self, store: Store, state: SessionState, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.store = store
        """Where the session's work tree is found (git runs there)."""
        self.state = state
        self.checkpoint: CheckpointInfo | None = None
        self.since: SinceCheckpoint | None = None
        """What differs since the shown checkpoint (None: still looking)."""
        self._looking = False

    def on_mount(self) -> None:
        self.set_interval(RECHECK_S, self._recheck)

    def show(self, cp: CheckpointInfo) -> None:
        self.checkpoint, self.since = cp, None
        self.update(detail_text(cp, None))
        self._looking = True
        self._look(cp)

    def _recheck(self) -> None:
        """Ask again (the work tree may have changed since), unless still asking."""
        if self.checkpoint is not None and not self._looking and self.display:
            self._looking = True
            self._look(self.checkpoint)

    @work(thread=True, exclusive=True, group="checkpoint-since")
    def _look(self, cp: CheckpointInfo) -> None:
        """Git over the workspace: never on the UI thread (one per highlight; the latest
        wins)."""
        since = files_since(self.store, self.state, cp.checkpoint_id)
        self.app.call_from_thread(self._arrived, cp, since)

    def _arrived(self, cp: CheckpointInfo, since: SinceCheckpoint) -> None:
        self._looking = False
        if cp is self.checkpoint and since != self.since:  # redrawn only when it changed
            self.since = since
            self.update(detail_text(cp, since))


def detail_text(cp: CheckpointInfo, since: SinceCheckpoint | None) -> Text:
    text = Text()
    text.append(f"{cp.checkpoint_id}", style="bold")
    text.append(f"  commit {cp.commit[:12]}  at #{cp.at_seq}  {count(cp.files)} files\n")
    text.append(f"{cp.label}\n", style="dim")
    if cp.nested:  # what a rollback to it will not touch
        text.append("not checkpointed (nested git repositories): ", style="dim")
        text.append(", ".join(cp.nested) + "\n")  # cleaned by the model
    text.append_text(_changed(cp))
    text.append(f"\nA rollback to {cp.checkpoint_id} throws away ", style="bold")
    if since is None:
        text.append("(looking…)\n", style="dim")
    elif since.files is None:
        text.append(": unknown (no checkpoint repository here, and a later checkpoint does "
                    "not say what it changed)\n", style="dim")
    else:
        where = ("since it, in the work tree now" if since.exact else
                 "at least what the later checkpoints changed; the work tree since the last "
                 "one is not known here")
        text.append(f"({where}): {count(len(since.files))} file(s)\n", style="bold")
        for name in since.files[:FILES_SHOWN]:
            text.append("  ")
            text.append_text(safe(name, 200))
            text.append("\n")
        if len(since.files) > FILES_SHOWN:
            text.append(f"  … and {count(len(since.files) - FILES_SHOWN)} more\n", style="dim")
    text.append("v: view the diff of what it throws away", style="dim")
    return text


def _changed(cp: CheckpointInfo) -> Text:
    """What the checkpoint changed since the previous one, as its event says."""
    text = Text()
    stat = cp.diffstat
    if stat is not None and stat.since is None:
        text.append(f"The first checkpoint: {count(stat.added)} files\n")
        return text
    if stat is None and cp.changed_files is None:
        text.append("Changed since the previous checkpoint: not recorded\n", style="dim")
        return text
    since = stat.since if stat is not None else "the previous checkpoint"
    files = stat.files if stat is not None else len(cp.changed_files or [])
    text.append(f"Changed since {since}: {count(files)} file(s)", style="bold")
    if stat is not None:
        text.append(f"  +{stat.added} ~{stat.modified} -{stat.deleted}")
        if stat.insertions is not None:
            text.append(f"  lines +{count(stat.insertions)} -{count(stat.deletions or 0)}")
    text.append("\n")
    for name in (cp.changed_files or [])[:FILES_SHOWN]:
        text.append("  ")
        text.append(name)  # cleaned by the model
        text.append("\n")
    if cp.changed_files is not None and files > len(cp.changed_files):
        text.append(f"  … and {count(files - len(cp.changed_files))} more\n", style="dim")
    return text
