"""Waiting on the control file: watchfiles, and the polling fallback, on a real file."""

import threading
import time
from pathlib import Path

import pytest

from supervisor.guard.waiting import ChangeWaiter


@pytest.mark.parametrize("use_watchfiles", [True, False])
def test_wakes_on_append_and_times_out_otherwise(tmp_path: Path, use_watchfiles: bool) -> None:
    path = tmp_path / "control.jsonl"
    path.touch()  # so the append below is one change (creating the file would be another)
    waiter = ChangeWaiter(path, use_watchfiles=use_watchfiles)
    try:
        assert waiter.wait(0.05) is False  # nothing yet

        def append() -> None:
            time.sleep(0.1)
            with path.open("ab") as f:
                f.write(b'{"x": 1}\n')

        writer = threading.Thread(target=append)
        writer.start()
        assert waiter.wait(10) is True
        writer.join()
        assert waiter.wait(0.05) is False  # the change was seen once
    finally:
        waiter.close()
