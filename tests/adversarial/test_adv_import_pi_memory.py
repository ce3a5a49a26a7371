"""A hostile Pi session file cannot make the import hold it whole (attack round 5).

The Pi importer (`supervisor.importers.pi`, new since round 4) holds an assistant response
until its results are read (a call Oh My Pi never ran is told only by its result), and every
`toolResult` that followed was held with it: one response followed by 80,000 results held all
of them, so the import's memory grew with the file as the whole-document parse did before
imports were streamed (docs/security.md, "Bounded input"). Now a response holds at most the
results of its own calls; the others are read as they come. The real `supervisor import`, its
peak memory from the kernel."""

import json
from pathlib import Path

import pytest

from tests.adversarial.test_adv_import_memory import _import

pytestmark = pytest.mark.slow


def _pi(path: Path, results: int) -> Path:
    header = {"type": "session", "version": 3, "id": "pi-1", "cwd": "/w",
              "timestamp": "2026-11-29T09:00:00.000Z"}
    response = {"type": "message", "timestamp": "2026-11-29T09:00:01.000Z", "message": {
        "role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "bash",
                                          "arguments": {"command": "ls"}}]}}
    result = json.dumps({"type": "message", "timestamp": "2026-11-29T09:00:02.000Z",
                         "message": {"role": "toolResult", "toolCallId": "c1",
                                     "content": [{"type": "text", "text": "x" * 1000}]}})
    with path.open("w") as f:
        f.write(json.dumps(header) + "\n" + json.dumps(response) + "\n")
        block = (result + "\n") * 1000
        for _ in range(results // 1000):
            f.write(block)
    return path


def test_results_after_one_response_are_not_held_whole(tmp_path: Path) -> None:
    small = _pi(tmp_path / "small.jsonl", 20_000)
    large = _pi(tmp_path / "large.jsonl", 80_000)
    done_small, peak_small, _ = _import(tmp_path / "a", small)
    done_large, peak_large, _ = _import(tmp_path / "b", large)
    assert done_small.returncode == 0 and done_large.returncode == 0, done_large.stderr
    assert peak_large - peak_small < 12 * 1024, f"{peak_small // 1024} -> {peak_large // 1024} MB"
