"""A world for the store-interface tests: agents write into a local root as the guard does; the
test reads through a store. `LocalWorld`: the store is that root. (Each backend adds its world;
`sync()` is what it takes for what was written to be readable through the store.)"""

import json
import time
from pathlib import Path
from typing import Any

from supervisor.store.local import LocalStore
from supervisor.store.paths import session_files
from supervisor.store.writer import event_writer


class LocalWorld:
    """The agents' root is the store."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = LocalStore(root)

    def name(self, sid: str) -> str:
        """The name of a local session in the store."""
        return sid

    def write(self, sid: str, events: list[dict[str, Any]]) -> None:
        with event_writer(self.root, sid) as writer:
            writer.append_many(events)

    def write_raw(self, sid: str, data: bytes) -> None:
        with open(session_files(self.root, sid).events, "ab") as f:
            f.write(data)

    def offset_of_line(self, sid: str, index: int) -> int:
        """Byte offset of line `index` (0-based) of the local events file."""
        lines = session_files(self.root, sid).events.read_bytes().splitlines(keepends=True)
        return sum(len(line) for line in lines[:index])

    def sync(self) -> None:
        """Nothing to do: the store reads the files themselves."""

    def control_lines(self, sid: str, wait: float) -> list[dict[str, Any]]:
        """The decisions in the local control file, once there is at least one."""
        path = session_files(self.root, sid).control
        deadline = time.monotonic() + wait
        while True:
            data = path.read_bytes() if path.exists() else b""
            if data or time.monotonic() > deadline:
                return [json.loads(line) for line in data.splitlines() if line.strip()]
            time.sleep(0.05)

    def close(self) -> None:
        self.store.close()


class RedisWorld(LocalWorld):
    """The agents' root is host `h1`, relayed by a real `Relay` to a private redis-server; the
    store is Redis."""

    HOST = "h1"

    def __init__(self, root: Path, server: Any) -> None:
        from supervisor.store.open import open_store
        from tests.redis_helpers import RelayThread

        super().__init__(root)
        self.server = server
        self.store = open_store(server.url())
        self.relay = RelayThread(root, server.url(), self.HOST)

    def name(self, sid: str) -> str:
        return f"{self.HOST}/{sid}"

    def sync(self, timeout: float = 30.0) -> None:
        """Wait until Redis has every complete line of every local session."""
        from supervisor.store.paths import list_session_ids
        from tests.redis_helpers import wait_for

        def shipped() -> bool:
            with self.server.admin() as admin:
                positions = admin.hgetall(f"sv:host:{self.HOST}")
            for sid in list_session_ids(self.root):
                data = session_files(self.root, sid).events.read_bytes()
                raw = positions.get(sid.encode())
                if raw is None or int(raw.split()[1]) != data.rfind(b"\n") + 1:
                    return False
            return True

        wait_for(shipped, timeout, "the relay to ship every line")

    def close(self) -> None:
        self.relay.stop()
        self.store.close()
