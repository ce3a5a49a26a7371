"""Enforce the import layering of docs/architecture.md ("Layers and who may import whom"),
statically (every import in every source file, lazy ones included) and at run time (what
importing a layer really loads, in a fresh interpreter), and keep that document's table in step
with `LAYERS`.

Layers whose package does not exist yet are skipped; as soon as such a package exists it is
checked. A module of `supervisor` that belongs to no layer fails the test: add it to `LAYERS`.
"""

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "supervisor"

ALL = frozenset({"protocol", "engine", "store", "guard", "hooks", "analysis", "importers", "tui",
                 "cli", "demo", "notify", "web", "otel", "host", "operator"})
LAYERS: dict[str, frozenset[str]] = {
    # layer: the layers of ours it may import (docs/architecture.md, "Layers and who may
    # import whom": its table's third column says the same, checked below)
    "protocol": frozenset({"protocol"}),
    "engine": frozenset({"protocol", "engine"}),
    "store": frozenset({"protocol", "store"}),
    "guard": frozenset({"protocol", "engine", "store", "guard"}),
    # the sender's side of a decision (refusals, the writer): no answer passes through guard
    "operator": frozenset({"protocol", "engine", "store", "operator"}),
    "hooks": frozenset({"protocol", "engine", "store", "guard", "hooks"}),
    "analysis": frozenset({"protocol", "engine", "analysis", "importers"}),
    "importers": frozenset({"protocol", "engine", "importers"}),
    "notify": frozenset({"protocol", "store", "notify"}),
    "tui": ALL - {"cli", "web"},
    "web": ALL - {"cli"},
    "host": frozenset({"protocol", "engine", "store", "guard", "hooks", "host"}),
    "cli": ALL,
    "demo": frozenset({"protocol", "engine", "store", "guard", "demo"}),  # an agent on the SDK
    "otel": frozenset({"protocol", "engine", "store", "otel"}),  # the engine read-only
}
LEAVES = frozenset({"supervisor", "supervisor.safetext", "supervisor.redact",
                    "supervisor.resources", "supervisor.userconfig", "supervisor.runenv"})
"""Leaf utilities any layer may import (stdlib only)."""
FORBIDDEN_EXTERNAL: dict[str, frozenset[str]] = {
    "protocol": frozenset({"textual", "rich", "watchfiles", "rapidfuzz", "xxhash",
                           "platformdirs"}),
    "engine": frozenset({"textual", "rich", "watchfiles", "platformdirs", "subprocess",
                         "socket", "time"}),  # no I/O and no clock of its own
    "store": frozenset({"textual", "rich", "rapidfuzz"}),
    "guard": frozenset({"textual", "apprise"}),
    "operator": frozenset({"textual", "rich"}),
    "notify": frozenset({"textual", "rich"}),
    "hooks": frozenset({"textual", "rich", "apprise"}),
    "host": frozenset({"textual", "rich"}),
    "demo": frozenset({"textual"}),
    "analysis": frozenset({"textual"}),
    "importers": frozenset({"textual"}),
    "otel": frozenset({"textual", "rich"}),
}


def layer_of(module: str) -> str | None:
    """The layer of one of our modules; None for a leaf utility; "?" for one in no layer."""
    if module in LEAVES:
        return None
    parts = module.split(".")
    if parts[0] != "supervisor":
        raise ValueError(f"not ours: {module}")
    if parts[1:2] in (["__main__"], ["hookclient"]):  # entry points (and the client's old name)
        return "cli"
    return parts[1] if parts[1] in LAYERS else "?"


def imports_of(source: str, module: str, is_package: bool = False) -> set[str]:
    """Absolute names of every module `source` imports, anywhere in the file."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.add(name)
            if name == "supervisor" or (node.level and not node.module):
                # `from supervisor import engine`: the names may be submodules
                found.update(f"{name}.{alias.name}" for alias in node.names
                             if alias.name[:1].islower() and not alias.name.startswith("__"))
    return found


def violations(module: str, imported: set[str]) -> list[str]:
    """What in `imported` breaks the table for `module` (one readable sentence each)."""
    layer = layer_of(module)
    if layer == "?":
        return [f"{module} belongs to no layer: add it to LAYERS in tests/test_layering.py"]
    if layer is None:
        ours = {name for name in imported if name.split(".")[0] == "supervisor"}
        return [f"leaf {module} imports {name}" for name in sorted(ours - LEAVES)]
    found = []
    for name in sorted(imported):
        top = name.split(".")[0]
        if top == "supervisor":
            target = layer_of(name)
            if target is not None and target not in LAYERS[layer]:
                found.append(f"{module} ({layer}) imports {name} ({target})")
        elif top in FORBIDDEN_EXTERNAL.get(layer, ()):
            found.append(f"{module} ({layer}) imports {name}")
    return found


def source_modules(src: Path) -> list[tuple[str, Path, bool]]:
    """(module name, file, is package) of every source file under `src`."""
    out = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src.parent).with_suffix("")
        parts = list(rel.parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out.append((".".join(parts), path, is_package))
    return out


def static_violations(src: Path) -> list[str]:
    found = []
    for module, path, is_package in source_modules(src):
        found += violations(module, imports_of(path.read_text(), module, is_package))
    return found


def loaded_modules(modules: list[str], pythonpath: Path = REPO) -> set[str]:
    """`sys.modules` of a fresh interpreter after importing `modules`."""
    code = ("import json, sys\n" + "".join(f"import {m}\n" for m in modules)
            + "print(json.dumps(sorted(sys.modules)))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin"},
                            cwd=pythonpath, timeout=120)
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout))


def pulled(loaded: set[str], forbidden: set[str]) -> list[str]:
    return sorted(m for m in loaded if any(m == f or m.startswith(f + ".") for f in forbidden))


def layer_modules(layer: str, src: Path = SRC) -> list[str]:
    prefix = f"supervisor.{layer}"
    return [m for m, _, _ in source_modules(src)
            if (m == prefix or m.startswith(prefix + ".")) and not m.endswith("__main__")]


def require(layer: str) -> None:
    if not (SRC / layer).is_dir():
        pytest.skip(f"layer '{layer}' is not written yet")


# --- the real package ---------------------------------------------------------------------

def test_static_layering_of_every_source_file() -> None:
    assert static_violations(SRC) == []


RUNTIME_RULES = {
    "protocol": {"textual", "rich", "watchfiles", "supervisor.store", "supervisor.engine",
                 "supervisor.guard", "supervisor.tui", "supervisor.cli"},
    "engine": {"textual", "watchfiles", "supervisor.store", "supervisor.guard", "supervisor.tui",
               "supervisor.cli"},
    "store": {"textual", "supervisor.engine", "supervisor.guard", "supervisor.tui",
              "supervisor.cli"},
    "guard": {"textual", "supervisor.tui", "supervisor.hooks", "supervisor.cli", "apprise",
              "supervisor.notify", "opentelemetry", "supervisor.operator"},
    "operator": {"textual", "rich", "supervisor.guard", "supervisor.tui", "supervisor.cli"},
    "notify": {"textual", "apprise", "supervisor.engine", "supervisor.guard",
               "supervisor.tui"},  # apprise only when a message is sent
    "hooks": {"textual", "rich", "pydantic", "supervisor.tui", "supervisor.cli", "apprise",
              "supervisor.analysis", "supervisor.importers", "opentelemetry"},
    "analysis": {"textual", "supervisor.store", "supervisor.tui", "supervisor.guard"},
    "importers": {"textual", "supervisor.store", "supervisor.tui", "supervisor.guard",
                  "supervisor.analysis"},
    "otel": {"textual", "supervisor.tui", "supervisor.guard", "supervisor.hooks",
             "supervisor.cli"},
}


@pytest.mark.slow
@pytest.mark.parametrize("layer", sorted(RUNTIME_RULES))
def test_importing_a_layer_loads_nothing_it_must_not(layer: str) -> None:
    require(layer)
    loaded = loaded_modules(layer_modules(layer))
    assert pulled(loaded, RUNTIME_RULES[layer]) == []


def test_light_write_path_has_no_pydantic() -> None:
    """The hook writes events through these; pydantic alone costs several Python start-ups."""
    light = ["supervisor.protocol.lines", "supervisor.protocol.names",
             "supervisor.store.writer", "supervisor.store.paths", "supervisor.safetext"]
    loaded = loaded_modules(light)
    assert pulled(loaded, {"pydantic", "pydantic_core", "platformdirs", "textual", "watchfiles",
                           "rich"}) == []


def test_hook_entry_points_are_light() -> None:
    """The in-process path loads no pydantic; the client loads nothing but the stdlib and the
    registry's names (its start-up is paid on every tool call of every agent)."""
    loaded = loaded_modules(["supervisor.hooks.local"])
    assert pulled(loaded, {"pydantic", "textual", "watchfiles"}) == []
    client = loaded_modules(["supervisor.hooks.client"])
    ours = sorted(m for m in client if m.startswith("supervisor"))
    assert ours == ["supervisor", "supervisor.hooks", "supervisor.hooks.args",
                    "supervisor.hooks.client", "supervisor.hooks.targets", "supervisor.runenv"]
    assert pulled(client, {"xxhash", "rapidfuzz", "platformdirs", "typing", "dataclasses",
                           "argparse", "socket", "pathlib"}) == []


def test_hook_client_start_up_does_not_grow_with_the_targets(tmp_path: Path) -> None:
    """A registry with many more targets loads no more modules in the client: it reads names."""
    copy = tmp_path / "supervisor"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    registry = copy / "hooks" / "targets.py"
    many = "".join(f'    "agent-{i}": "supervisor.hooks.agent_{i}",\n' for i in range(50))
    registry.write_text(registry.read_text().replace("TARGETS = {\n", "TARGETS = {\n" + many))
    before = loaded_modules(["supervisor.hooks.client"])
    after = loaded_modules(["supervisor.hooks.client"], pythonpath=tmp_path)
    assert after == before


def test_cli_parser_does_not_load_the_tui() -> None:
    loaded = loaded_modules(["supervisor.cli"])
    assert pulled(loaded, {"textual", "supervisor.tui"}) == []


# --- the document says what the test enforces ----------------------------------------------

ARCHITECTURE = REPO / "docs" / "architecture.md"
_ROW = re.compile(r"^\|\s*`(\w+)`\s*\|[^|]*\|([^|]*)\|")


def documented_layers(text: str) -> dict[str, frozenset[str]]:
    """Layer -> the layers of ours its row in the document's layer table may import (the
    back-quoted names of the third column)."""
    start = text.index("## Layers and who may import whom")
    end = text.index("\n## ", start + 1)
    rows = {}
    for line in text[start:end].splitlines():
        match = _ROW.match(line)
        if match:
            rows[match.group(1)] = frozenset(re.findall(r"`(\w+)`", match.group(2)))
    return rows


def table_differences(documented: dict[str, frozenset[str]], layers: dict[str, frozenset[str]],
                      src: Path = SRC) -> list[str]:
    """Where the document's table and `layers` disagree (one sentence each). A documented layer
    whose package is not written yet (announced by another branch) may stand in the table
    before it joins `LAYERS`; its name is then ignored in the other rows."""
    pending = {name for name in documented if name not in layers and not (src / name).is_dir()}
    found = []
    for name in sorted(documented.keys() - layers.keys()):
        if name not in pending:
            found.append(f"docs/architecture.md has a row for '{name}', which LAYERS lacks")
    for name, allowed in sorted(layers.items()):
        if name not in documented:
            found.append(f"docs/architecture.md has no row for layer '{name}'")
        elif documented[name] - pending != allowed:
            extra = sorted(documented[name] - pending - allowed)
            missing = sorted(allowed - documented[name])
            found.append(f"docs/architecture.md's row for '{name}' differs from LAYERS: "
                         f"documented but not allowed {extra}, allowed but not documented "
                         f"{missing}")
    return found


def test_architecture_doc_table_matches_layers() -> None:
    assert table_differences(documented_layers(ARCHITECTURE.read_text()), LAYERS) == []


def test_architecture_doc_names_every_leaf() -> None:
    text = ARCHITECTURE.read_text()
    assert [leaf for leaf in sorted(LEAVES - {"supervisor"}) if f"`{leaf}`" not in text] == []


def test_table_check_flags_a_missing_or_different_row(tmp_path: Path) -> None:
    documented = documented_layers(ARCHITECTURE.read_text())
    without = {k: v for k, v in documented.items() if k != "store"}
    assert table_differences(without, LAYERS) == [
        "docs/architecture.md has no row for layer 'store'"]
    wrong = {**documented, "engine": documented["engine"] | {"store"}}
    assert len(found := table_differences(wrong, LAYERS)) == 1
    assert "'engine'" in found[0] and "['store']" in found[0]
    short = {**documented, "tui": documented["tui"] - {"guard"}}
    assert "allowed but not documented ['guard']" in table_differences(short, LAYERS)[0]
    # a documented layer whose package exists must be in LAYERS, and the rows naming it must
    # match exactly (here: LAYERS as it was before `host` was written)
    before_host = {k: v - {"host"} for k, v in LAYERS.items() if k != "host"}
    (tmp_path / "host").mkdir()
    found = table_differences(documented, before_host, tmp_path)
    assert found[0] == "docs/architecture.md has a row for 'host', which LAYERS lacks"
    assert any("'tui'" in sentence and "['host']" in sentence for sentence in found[1:])


# --- the checker itself can fail ----------------------------------------------------------

@pytest.mark.parametrize(
    ("module", "imported", "expected"),
    [
        ("supervisor.engine.core", {"supervisor.store.paths"}, ["supervisor.store.paths"]),
        ("supervisor.engine.core", {"textual.app", "time"}, ["textual.app", "time"]),
        ("supervisor.engine.core", {"supervisor.protocol.models", "supervisor.safetext",
                                    "supervisor", "rapidfuzz", "json"}, []),
        ("supervisor.protocol.codec", {"supervisor.store"}, ["supervisor.store"]),
        ("supervisor.protocol.codec", {"pydantic"}, []),
        ("supervisor.store.follower", {"supervisor.engine"}, ["supervisor.engine"]),
        ("supervisor.store.follower", {"watchfiles"}, []),
        ("supervisor.analysis.run", {"supervisor.store.reading"}, ["supervisor.store.reading"]),
        ("supervisor.importers.swe", {"supervisor.engine"}, []),
        ("supervisor.importers.swe", {"supervisor.analysis"}, ["supervisor.analysis"]),
        ("supervisor.guard.core", {"supervisor.tui.app"}, ["supervisor.tui.app"]),
        ("supervisor.guard.core", {"supervisor.engine", "supervisor.store.writer"}, []),
        ("supervisor.guard.core", {"supervisor.hooks.runtime"}, ["supervisor.hooks.runtime"]),
        ("supervisor.hooks.runtime", {"supervisor.guard.core", "supervisor.engine"}, []),
        ("supervisor.hooks.server", {"supervisor.cli.common"}, ["supervisor.cli.common"]),
        ("supervisor.hooks.server", {"textual"}, ["textual"]),
        ("supervisor.tui.app", {"supervisor.guard", "textual"}, []),
        ("supervisor.safetext", {"supervisor.store"}, ["supervisor.store"]),
    ],
)
def test_checker_flags_violations(module: str, imported: set[str], expected: list[str]) -> None:
    found = violations(module, imported)
    assert len(found) == len(expected), found
    for name, sentence in zip(expected, found, strict=True):
        assert name in sentence


def test_checker_flags_a_module_in_no_layer() -> None:
    assert "belongs to no layer" in violations("supervisor.misc", {"json"})[0]


def test_relative_imports_are_resolved() -> None:
    source = "from ..store import paths\nfrom . import core\nfrom .. import tui\n"
    assert imports_of(source, "supervisor.engine.x") >= {
        "supervisor.store", "supervisor.engine", "supervisor.engine.core", "supervisor.tui"}


@pytest.mark.slow
def test_a_violating_module_in_a_copy_fails_both_checks(tmp_path: Path) -> None:
    copy = tmp_path / "supervisor"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    engine = copy / "engine"
    engine.mkdir(exist_ok=True)
    (engine / "__init__.py").touch()
    (engine / "_bad.py").write_text(
        "import supervisor.store.paths\n\ndef later():\n    import textual\n")
    assert static_violations(copy) == [
        "supervisor.engine._bad (engine) imports supervisor.store.paths (store)",
        "supervisor.engine._bad (engine) imports textual",
    ]
    loaded = loaded_modules(layer_modules("engine", copy), pythonpath=tmp_path)
    assert "supervisor.store.paths" in pulled(loaded, RUNTIME_RULES["engine"])


def test_no_module_is_exempt_from_the_type_check() -> None:
    """`mypy` checks the whole package (docs/architecture.md, "Principles"): no override may
    switch its errors off for a module again."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]
    exempt = [o.get("module") for o in config.get("overrides", []) if o.get("ignore_errors")]
    assert exempt == [], f"modules exempt from mypy: {exempt}"
    assert config["files"] == ["supervisor"]


# --- the document names every hook target -------------------------------------------------

_NUMBERS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
            "eleven", "twelve", "thirteen", "fourteen", "fifteen")


def documented_targets(text: str) -> tuple[str | None, list[str]]:
    """The number word and the back-quoted target names of the guard's paragraph in "The
    parts" ("a hook command for the nine agent CLIs we do not own, ...: Claude Code
    (`claude-code`), ...")."""
    start = text.index("1. **The guard**")
    paragraph = text[start:text.index("\n2. ", start)]
    count = re.search(r"for the (\w+) agent CLIs we do not own", paragraph)
    return (count.group(1) if count else None,
            re.findall(r"\(`([a-z][a-z0-9-]*)`\)", paragraph))


def target_differences(text: str, registered: tuple[str, ...]) -> list[str]:
    """Where the document's list of agent CLIs and the hook targets' registry disagree."""
    count, names = documented_targets(text)
    found = []
    if count != _NUMBERS[len(registered)]:
        found.append(f"docs/architecture.md says '{count}' agent CLIs; TARGETS has "
                     f"{len(registered)}")
    if names != list(registered):
        found.append(f"docs/architecture.md names the targets {names}; TARGETS has "
                     f"{list(registered)} (same order)")
    return found


def test_architecture_doc_names_every_hook_target() -> None:
    from supervisor.hooks import targets

    assert target_differences(ARCHITECTURE.read_text(), targets.names()) == []


def test_target_check_flags_a_missing_or_extra_target() -> None:
    from supervisor.hooks import targets

    text = ARCHITECTURE.read_text()
    with_crush = (*targets.names(), "crush")
    found = target_differences(text, with_crush)
    assert len(found) == 2 and f"'{_NUMBERS[len(targets.names())]}'" in found[0]
    assert "'crush'" in found[1]
    without_pi = text.replace(" and Pi (`pi`)", "")
    assert len(target_differences(without_pi, targets.names())) == 1
