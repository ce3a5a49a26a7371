"""Find the data folders that ship with the package: `themes/` and `sample_sessions/`.

In the repository they sit at the top level; an installed wheel carries them inside the package
as `supervisor/_data/` (see `force-include` in pyproject.toml). Both layouts are looked up, the
installed one first, so a plain `pip install .` works from any directory.
"""

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """The folder `name` (e.g. "themes", "sample_sessions"); raises if neither layout has it."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"data folder '{name}' is missing from this installation")
