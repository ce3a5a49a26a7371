"""Every fixture imports to exactly the events it imported when the digests were taken.

The importers are made faster from time to time (issue 40); that must not move a single
imported step. Each fixture's runs (names, formats, meta, every event) are reduced to a digest,
checked against `tests/data/imported-digests.json`. The path of the checkout is taken
out (the fixture's path relative to the repository stands for it), and so are synthetic time
stamps' origin (the file's modification time, which a checkout sets): what is left is what the
importers decided.

A change that is meant to change what is imported updates the digests, and says why in its
commit: `python -m tests.test_importers_pinned` rewrites them.
"""

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from supervisor.importers import ImportedRun, load_runs
from tests.importer_helpers import DATA

DIGESTS = DATA.parent / "imported-digests.json"
FIXTURES = sorted(p for p in DATA.rglob("*") if p.is_file() and p.suffix != ".md")


def _relative(value: Any, absolute: str, relative: str) -> Any:
    if isinstance(value, str):
        return value.replace(absolute, relative)
    if isinstance(value, dict):
        return {k: _relative(v, absolute, relative) for k, v in value.items()}
    if isinstance(value, list):
        return [_relative(v, absolute, relative) for v in value]
    return value


def normalised(path: Path, runs: list[ImportedRun], relative: str) -> list[dict[str, Any]]:
    """The runs as plain data, without what depends on where and when the checkout was made
    (the path is written as `relative`)."""
    out = []
    for run in runs:
        events = run.events
        if run.meta.get("ts") == "synthetic":  # the file's mtime plus a step per event
            origin = events[0]["ts"]
            events = [{**e, "ts": round(e["ts"] - origin, 6)} for e in events]
        out.append(_relative({"name": run.name, "format": run.format, "meta": run.meta,
                              "events": events}, str(path), relative))
    return out


def digest(path: Path, relative: str) -> dict[str, Any]:
    runs = load_runs(path)
    text = json.dumps(normalised(path, runs, relative), sort_keys=True, ensure_ascii=False)
    return {"runs": len(runs), "events": sum(len(r.events) for r in runs),
            "steps": sum(r.steps for r in runs),
            "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()}


def _key(path: Path) -> str:
    return path.relative_to(DATA).as_posix()


def test_every_fixture_is_pinned() -> None:
    pinned = json.loads(DIGESTS.read_text())
    assert sorted(pinned) == [_key(p) for p in FIXTURES], \
        "fixtures added or removed: run `python -m tests.test_importers_pinned`"


@pytest.mark.parametrize("path", FIXTURES, ids=_key)
def test_fixture_imports_as_pinned(path: Path) -> None:
    pinned = json.loads(DIGESTS.read_text())[_key(path)]
    assert digest(path, _key(path)) == pinned


def test_digest_sees_a_changed_step(tmp_path: Path) -> None:
    """The digest is of every event: one changed output of one step changes it."""
    source = DATA / "swe-agent" / "portalocker-no-file-open.traj"
    text = source.read_text()
    assert "No file open" in text
    same, edited = tmp_path / "same" / source.name, tmp_path / "edited" / source.name
    for path, content in ((same, text), (edited, text.replace("No file open", "No file op", 1))):
        path.parent.mkdir()
        path.write_text(content)
    unchanged = digest(same, _key(source))
    assert unchanged == digest(source, _key(source))  # where the file is does not count
    changed = digest(edited, _key(source))
    assert changed["steps"] == unchanged["steps"]
    assert changed["sha256"] != unchanged["sha256"]

if __name__ == "__main__":
    DIGESTS.write_text(json.dumps({_key(p): digest(p, _key(p)) for p in FIXTURES}, indent=1,
                                  sort_keys=True) + "\n")
    print(f"wrote {DIGESTS} ({len(FIXTURES)} fixtures)", file=sys.stderr)
