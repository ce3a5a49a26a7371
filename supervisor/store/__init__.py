"""The store: where sessions are kept, and the one interface operators and tools read them through.

- `base`: the store interface (`Store`: sessions, summaries, readers from an opaque cursor, a
  follower of every session, random access for the history view, decisions and their outcomes);
- `open`: a store from a URL (`--store`, `$SUPERVISOR_STORE`), the registry of backends;
- `local`: the local directory tree, the default backend;
- `paths`: where the root is, session-id validation, where a session's files are, private
  directories and files;
- `writer`: appends whole lines under an advisory lock, assigning `seq` (the agent side);
- `tailer`: reads one growing file incrementally, never raising on bad content;
- `follower`: one watchfiles watcher over the whole root, delivering batches to a consumer;
- `summary`: folds a session's events into what the `sessions` table shows.

Nothing here imports pydantic at module level except `tailer`/`follower` (which parse lines), so
the hook can write events cheaply.
"""
