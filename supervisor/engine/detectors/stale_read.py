"""Stale read: a file read the agent already has, answered from the file cache.

A read with the same arguments as an earlier one, the file not written since and no shell
command or script run since (it might have written it), is skipped: the agent gets the cached
content with a note. Live, the guard reports with each read what the file holds on disk (size,
modification time, digest: `StepRecord.file`); the cache answers only while that is what it was when
the content was cached, so a change by the user's editor or a background job lets the read
run. Not a loop detector: it saves a call; nothing escalates.
"""

from typing import Any, ClassVar, TypedDict

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, finding
from supervisor.engine.state import State
from supervisor.engine.step import StepRecord
from supervisor.engine.types import Finding
from supervisor.engine.workspace import file_key


class StaleReadParams(TypedDict):
    """`[detectors.stale_read]` of the policy, merged for one tool (defaults and meaning in
    docs/policy.md)."""

    enabled: bool


class StaleRead(Detector[StaleReadParams]):
    name = "stale_read"
    summary = "a re-read of a file that has not changed since it was read: skipped, cached"
    defaults: ClassVar[StaleReadParams] = {
        "enabled": True,
    }
    loop = False
    skips = True

    def memory(self) -> Memory:
        # entries: read signature -> {path, output, step, seq, bytes}, oldest first
        return {"entries": {}, "bytes": 0}

    def refuse(self, st: State, step: StepRecord, mem: Memory,
               p: StaleReadParams) -> Finding | None:
        if not step["is_read"]:
            return None
        entry = mem["entries"].get(step["signature"])
        if entry is None:
            return None
        if step["file"] is not None and step["file"] != entry.get("file"):
            # the file on disk is not the one cached (size, mtime or content differ, or it
            # is gone): the read runs, and its result is cached anew
            mem["bytes"] -= mem["entries"].pop(step["signature"])["bytes"]
            return None
        f = finding(self.name, 0, step["signature"], [entry["seq"]],
                    g.stale_read(entry["path"]), step["index"], "skip")
        f.cached_output = entry["output"]
        return f

    def keep(self, st: State, step: StepRecord, mem: Memory, output: str) -> None:
        """Cache the output of a successful read (the oldest entries go past the budget)."""
        budget = st.sizes["file_cache_bytes"]
        size = len(output.encode("utf-8", "replace"))
        if size > budget:
            return
        entries: dict[str, Any] = mem["entries"]
        old = entries.pop(step["signature"], None)
        if old:
            mem["bytes"] -= old["bytes"]
        entries[step["signature"]] = {"path": step["path"], "output": output,
                                      "step": step["index"], "seq": step["seq"], "bytes": size,
                                      "file": step["file"]}
        mem["bytes"] += size
        while mem["bytes"] > budget and entries:
            mem["bytes"] -= entries.pop(next(iter(entries)))["bytes"]

    def workspace_changed(self, mem: Memory, path: str | None) -> None:
        entries = mem["entries"]
        if path is None:
            entries.clear()
            mem["bytes"] = 0
            return
        changed = file_key(path)
        for key in [k for k, e in entries.items() if file_key(e["path"]) == changed]:
            mem["bytes"] -= entries.pop(key)["bytes"]
