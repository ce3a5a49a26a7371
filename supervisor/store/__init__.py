"""The local store: one directory per session holding its event log and control channel.

- `paths`: where the root is, session-id validation, private directories and files;
- `writer`: appends whole lines under an advisory lock, assigning `seq`;
- `tailer`: reads one growing file incrementally, never raising on bad content;
- `follower`: one watchfiles watcher over the whole root, delivering batches to a consumer;
- `summary`: folds a session's events into what the `sessions` table shows.

Nothing here imports pydantic at module level except `tailer`/`follower` (which parse lines), so
the hook can write events cheaply.
"""
