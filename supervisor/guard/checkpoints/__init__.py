"""Git checkpoints of an agent's working directory, kept in a shadow repository.

The shadow repository lives in the session directory (`<session>/checkpoints.git`); its work tree
is the agent's working directory, passed explicitly with `--git-dir`/`--work-tree` on every git
command. The agent's own `.git` is never written: git never adds a `.git` entry, and the only
thing read from the agent's repository is its `info/exclude`, copied into ours. Every git
command is built by `supervisor.guard.safe_git` (the work tree is the agent's: nothing in it may
name a program git runs): every `GIT_*` variable of the environment is dropped (a hook inherits
`GIT_DIR`, `GIT_INDEX_FILE`, ... from whatever ran the agent), the user's global and system git
configuration is not read, and fsmonitor, hooks, external diffs, textconv and nested
repositories are switched off on the command line; the user's global excludes file is still
honoured through our own `core.excludesFile`.

What a checkpoint holds: every file of the work tree that is not ignored (the work tree's
`.gitignore` files, the agent repository's `info/exclude`, the user's global excludes file),
not in a build or cache folder (`DEFAULT_EXCLUDES`), not over `max_file_bytes`, not unreadable,
and not inside a nested git repository (`git init sub` in the work tree). Nested repositories are
left out explicitly: the checkpoint names them (`CheckpointCommit.nested`), so the operator knows a
rollback will not touch them. Each checkpoint also records its work tree and what it left out
(`untracked`: ignored, oversized, unreadable entries and nested repositories present when it was
taken), because a restore must never delete what the checkpoint did not track.

What a restore may touch (docs/security.md): only paths inside the checkpoint's own work tree
(a restore into any other directory is refused; no path is written or removed through a
symlinked directory leading out); it writes back the files the checkpoint holds that changed
since, and removes files created since, but never a file the checkpoint did not track (an ignored
`.env` whose ignore rule the agent deleted stays). A file it cannot write or remove is reported
(`RestoreResult.failed`), never raised.

    store = CheckpointStore(session_dir / "checkpoints.git", workdir)
    first = store.create("session start")
    ...                                    # the agent edits, creates and deletes files
    store.diff(first.checkpoint_id)        # TreeChanges(added=[...], modified=[...], deleted=[...])
    result = store.restore(first.checkpoint_id)
    result.summary()                       # "restored 2 files, removed 1 created since"

Bounded (docs/security.md, "Checkpoints"): a work tree that is the file system root, the home
directory or a directory above it is refused (`WorkTreeTooBig`), and so is one holding more than
`max_files` files to track or `max_bytes` bytes (counted from git's own listing, which honours
the ignore rules, and stopped as soon as a bound is passed, so `/usr` costs a second, not the
hook's whole budget). Every git process ends by the deadline of the call (`store.waits`). The
objects of a checkpoint are written in a quarantine directory and moved into the repository
only once the checkpoint is complete; a checkpoint that fails leaves nothing behind (no partial
objects, the index as it was).

Checkpoint ids are `cp-1`, `cp-2`, ... in creation order; each is a ref
(`refs/checkpoints/cp-N`) to a commit whose parent is the previous checkpoint.

The package's parts, each small enough to read at once: `store` (`CheckpointStore`, the one
face), `repo` (the shadow repository and how git is run on it), `snapshot` (staging the work
tree, comparing trees), `commit` (taking a checkpoint), `restore` (bringing one back),
`records` (checkpoints, changes and restore results as values; the commit message format) and
`errors`. Import from the package: its parts may move.
"""

from supervisor.guard.checkpoints.errors import (
    CheckpointError,
    GitTimeout,
    RestoreInterrupted,
    WorkTreeTooBig,
    too_broad,
)
from supervisor.guard.checkpoints.records import (
    CheckpointCommit,
    RestoreResult,
    TreeChanges,
    checkpoint_changes,
)
from supervisor.guard.checkpoints.snapshot import (
    DEFAULT_EXCLUDES,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
)
from supervisor.guard.checkpoints.store import CheckpointStore
from supervisor.protocol.names import CHANGED_FILES_KEPT

__all__ = [
    "CHANGED_FILES_KEPT",
    "DEFAULT_EXCLUDES",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_FILE_BYTES",
    "CheckpointCommit",
    "CheckpointError",
    "CheckpointStore",
    "GitTimeout",
    "RestoreInterrupted",
    "RestoreResult",
    "TreeChanges",
    "WorkTreeTooBig",
    "checkpoint_changes",
    "too_broad",
]
