"""Importers depend on the protocol only: never on the store, the TUI, or pydantic."""

import subprocess
import sys

from tests.conftest import cli_env


def test_importers_import_neither_store_nor_textual() -> None:
    code = (
        "import sys; import supervisor.importers as m; "
        "from pathlib import Path; "
        "bad = sorted(n for n in sys.modules if n.startswith(('supervisor.store', 'textual', "
        "'supervisor.tui', 'pydantic'))); print(','.join(bad))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=cli_env(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""
