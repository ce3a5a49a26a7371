"""The argument names a recorded `tool_call` uses for a file edit, and an agent's own names for
them.

The engine reads an edit's path, the text searched for and its replacement under one set of
names (`file_path`, `old_string`, `new_string`, ...: the vocabulary's keys, engine/tools.py).
OpenCode (and Kilo, its fork) names the same arguments in camelCase (`filePath`, `oldString`,
...). Its live hook target (hooks/opencode) and the importer of its session exports
(importers/opencode) both record calls under the engine's names, from this one map, so a live
run and the export of the same run record a call alike. Stdlib only: the hook path reads it.
"""

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

OPENCODE: Final[Mapping[str, str]] = MappingProxyType({
    "filePath": "file_path", "oldString": "old_string", "newString": "new_string",
    "replaceAll": "replace_all",
})
"""OpenCode's argument names, and the engine's for the same thing."""


def renamed(args: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """`args` with each key `names` knows under the engine's name, the others as they are."""
    return {names.get(key, key): value for key, value in args.items()}
