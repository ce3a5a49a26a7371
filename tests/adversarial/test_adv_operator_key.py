"""The operator key is whole, or refused (issue 41, low).

The key was created with `O_EXCL` and then written, so an operator path reading it in between
read an empty key and sealed with it (5 of 200 genuine answers were rejected); and an empty key
file was accepted, which made `HMAC("")` forgeries valid. Now the key is written to a private
temporary file and linked into place whole, and a key that is not 64 hexadecimal characters is
refused. Real processes racing on a fresh root."""

import multiprocessing
import os
from pathlib import Path

import pytest

from supervisor.store import provenance


def _key_of(root: str, start: float, out: "multiprocessing.Queue[str]") -> None:
    import time

    while time.time() < start:
        pass
    try:
        out.put(provenance.operator_key(Path(root)).decode())
    except Exception as exc:  # what the race made of it
        out.put(f"error: {exc}")


@pytest.mark.parametrize("attempt", range(5))
def test_racing_operator_paths_all_get_the_whole_key(tmp_path: Path, attempt: int) -> None:
    import time

    root = tmp_path / "store"
    root.mkdir(mode=0o700)
    ctx = multiprocessing.get_context("fork")
    out: multiprocessing.Queue[str] = ctx.Queue()
    start = time.time() + 0.5
    procs = [ctx.Process(target=_key_of, args=(str(root), start, out)) for _ in range(24)]
    for p in procs:
        p.start()
    keys = [out.get(timeout=30) for _ in procs]
    for p in procs:
        p.join()
    assert len(set(keys)) == 1, sorted(set(keys))
    assert len(keys[0]) == 64 and int(keys[0], 16) >= 0
    assert sorted(os.listdir(root)) == [provenance.KEY_FILE]  # no temporary file left


@pytest.mark.parametrize("content", [b"", b"\n", b"short", b"z" * 64, b"0" * 63])
def test_a_key_that_is_not_64_hex_characters_is_refused(tmp_path: Path,
                                                        content: bytes) -> None:
    root = tmp_path / "store"
    root.mkdir(mode=0o700)
    key = root / provenance.KEY_FILE
    key.write_bytes(content)
    key.chmod(0o600)
    decision = {"type": "decision", "decision_id": "d-1", "action": "approve",
                "operator": "alice"}
    with pytest.raises(PermissionError, match="64 hexadecimal characters"):
        provenance.seal(root, "s1", decision)
    import hashlib
    import hmac

    forged = hmac.new(content.strip(), provenance.canonical("s1", decision),
                      hashlib.sha256).hexdigest()
    assert not provenance.is_sealed(root, "s1", {**decision, "seal": forged})
