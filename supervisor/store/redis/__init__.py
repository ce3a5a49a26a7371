"""The Redis Streams store, for one dashboard over agents on many hosts.

- `connect`: the URL, credentials (never printed), TLS, the refusal of unauthenticated remote
  servers;
- `layout`: key names, `host/id` session names, cursors, the least-privilege ACL;
- `scripts`: the Lua that makes shipping exactly-once and decisions atomic;
- `backend`: `RedisStore`, the store interface for the dashboard and the CLI;
- `relay`: `Relay`, one per host, between the local root and Redis.

See docs/fleet.md.
"""
