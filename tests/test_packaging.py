"""themes/ and sample_sessions/ reach an installed (non-editable) package, found from any cwd.

Two ways to get an installed copy: CI's own `pip install '.[test]'` (checked with `python -I`,
which ignores this checkout), or, in a development virtualenv where the package is not
installed, a wheel built here with hatchling and unpacked into a temporary site directory.
"""

import importlib.metadata
import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

PROBE = ("from supervisor.resources import data_dir; import supervisor; "
         "print(supervisor.__file__); print(data_dir('themes')); "
         "print(data_dir('sample_sessions'))")


def installed_copy() -> bool:
    try:
        files = importlib.metadata.distribution("agent-supervisor").files or []
    except importlib.metadata.PackageNotFoundError:
        return False
    return any("_data" in str(f) for f in files)


def check(output: str, site: Path) -> None:
    package, themes, samples = (Path(x) for x in output.split("\n")[:3])
    assert site in package.parents and package.parent != REPO / "supervisor"
    assert themes == package.parent / "_data" / "themes" and themes.is_dir()
    assert samples == package.parent / "_data" / "sample_sessions" and samples.is_dir()


@pytest.mark.slow
def test_data_folders_ship_with_the_installed_package(tmp_path: Path) -> None:
    if installed_copy():
        result = subprocess.run([sys.executable, "-I", "-c", PROBE], cwd=tmp_path,
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        site = Path(importlib.metadata.distribution("agent-supervisor").locate_file(""))
        check(result.stdout, site.resolve())
        return
    if importlib.util.find_spec("hatchling") is None:
        pytest.skip("neither an installed copy nor hatchling to build one")
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(wheels), str(REPO)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    [wheel] = wheels.glob("agent_supervisor-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        archive.extractall(site)
    assert any(n.startswith("supervisor/_data/themes/") for n in names)
    assert any(n.startswith("supervisor/_data/sample_sessions/") for n in names)
    assert "supervisor/web/page.html" in names  # `supervisor web` serves it
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=elsewhere, capture_output=True,
                            text=True, timeout=60, env={"PYTHONPATH": str(site),
                                                        "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    check(result.stdout, site)


def test_data_dir_in_the_checkout_and_a_clear_error() -> None:
    from supervisor.resources import data_dir

    assert data_dir("themes").is_dir()
    with pytest.raises(FileNotFoundError, match="'nope' is missing"):
        data_dir("nope")
