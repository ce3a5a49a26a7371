"""How often an installed plugin (OpenCode, Kilo, Cline) ran the hook client: it sends steps
to the resident server itself and runs the client only when it cannot (no server yet)."""

import json
import shlex
from collections.abc import Callable
from pathlib import Path


def count_client_runs(plugin: Path, scratch: Path) -> Callable[[], int]:
    """Make the plugin at `plugin` run its hook client through a wrapper (in `scratch`) that
    counts the runs; returns what reads the count."""
    text = plugin.read_text()
    start = text.index("const HOOK = ")
    end = text.index("\n", start)
    hook = json.loads(text[start + len("const HOOK = "):end].rstrip(";"))
    counted = scratch / "hook-client-runs"
    wrapper = scratch / "counting-hook-client"
    wrapper.write_text(f"#!/bin/sh\necho run >> {shlex.quote(str(counted))}\n"
                       f'exec {shlex.join(hook)} "$@"\n')
    wrapper.chmod(0o700)
    plugin.write_text(f"{text[:start]}const HOOK = {json.dumps([str(wrapper)])};{text[end:]}")
    return lambda: len(counted.read_text().splitlines()) if counted.exists() else 0
