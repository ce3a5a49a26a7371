"""Load a policy from TOML, validated by pydantic with clear errors; dump a policy as TOML.

Kept apart from `policy.py` because the hot path (the hook) must not import pydantic: the guard
loads the file once, and hands the engine the plain `Policy` (or its dict).
"""

import math
import tomllib
from collections.abc import Mapping
from pathlib import Path
from types import GenericAlias
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from typing_extensions import TypeForm

from supervisor.engine.detectors import REGISTRY
from supervisor.engine.policy import _DEFAULT, CATEGORIES, DETECTORS, LIMITS, PROFILES, Policy


class PolicyError(ValueError):
    """A policy file that cannot be used; the message names the file and the bad key."""


_STRICT = ConfigDict(extra="forbid", strict=False)


Category = Literal["read", "mutate", "run", "poll", "other"]
"""A tool category a policy may name (`categories`, `category_overrides`, `tools.*.category`)."""

FieldSpec = tuple[TypeForm[Any], None]
"""One field for `create_model`: its type and its default (always None: every key is optional)."""


def _optional(kind: type[BaseModel] | GenericAlias) -> TypeForm[Any]:
    """`kind | None` for a type built at run time from the registry (a model or a mapping of
    models). mypy checks type forms written in the source; these exist only once the registry is
    read, so the union, which pydantic accepts like any written `X | None`, is cast to one."""
    return cast(TypeForm[Any], kind | None)


def _scalar(value: object) -> TypeForm[Any]:
    """The optional field type of a default value, as pydantic should check a setting of it."""
    if isinstance(value, bool):
        return TypeForm(bool | None)
    if isinstance(value, int):
        return TypeForm(int | None)
    if isinstance(value, float):
        return TypeForm(float | None)
    if isinstance(value, list):
        return TypeForm(list[str] | None)
    return TypeForm(str | None)


def _fields(defaults: dict[str, Any]) -> dict[str, FieldSpec]:
    """Optional fields named by the keys of `defaults`, each typed after its default."""
    return {key: (_scalar(value), None) for key, value in defaults.items()}


def _model(name: str, fields: Mapping[str, FieldSpec]) -> type[BaseModel]:
    """A strict model with `fields`, whose names come from the registry at run time.

    mypy checks a `**mapping` against every keyword `create_model` takes (`__config__`,
    `__base__`, ...), as if a field could be named so; ours are detector, limit, category and
    setting names, never dunders, so the mapping is widened to the field definitions it is."""
    definitions = cast(dict[str, Any], fields)
    return create_model(name, __config__=_STRICT, **definitions)


def _model_for(name: str, defaults: dict[str, Any]) -> type[BaseModel]:
    """A model whose fields are the keys of `defaults`, each optional, with their types."""
    return _model(name, _fields(defaults))


_DETECTOR_MODELS = {n: _model_for(f"Detector_{n}", _DEFAULT["detectors"][n]) for n in DETECTORS}
_DetectorTable = _model("Detectors", {n: (_optional(m), None) for n, m in _DETECTOR_MODELS.items()})


class _LimitSpec(BaseModel):
    model_config = _STRICT
    limit: float | None = None
    action: Literal["pause", "stop"] | None = None


_LimitTable = _model("Limits", {n: (TypeForm(_LimitSpec | None), None) for n in LIMITS})
_CategoryTable = _model("Categories", {n: (TypeForm(list[str] | None), None) for n in CATEGORIES})
_ToolOverride = create_model(
    "_ToolOverride", __base__=_DetectorTable, category=(TypeForm(Category | None), None)
)


class _GuardTable(BaseModel):
    """The `[guard]` table: how the guard checkpoints and escalates (read by the guard, not the
    engine; defaults and meaning in docs/guard.md)."""

    model_config = _STRICT
    checkpoints: bool | None = None
    checkpoint_at_start: bool | None = None
    checkpoint_every: int | None = Field(default=None, ge=0)
    checkpoint_max_file_bytes: int | None = Field(default=None, ge=0)
    escalation_deadline_s: float | None = Field(default=None, ge=0)
    fallback: Literal["skip", "abort"] | None = None
    memory: bool | None = None
    memory_expire_days: float | None = Field(default=None, ge=0)
    memory_project: str | None = None


_SCALARS = {k: v for k, v in _DEFAULT.items() if not isinstance(v, dict)}
_PolicyModel = _model("PolicyFile", {
    **_fields(_SCALARS),
    "detectors": (_optional(_DetectorTable), None),
    "limits": (_optional(_LimitTable), None),
    "categories": (_optional(_CategoryTable), None),
    "category_overrides": (_optional(GenericAlias(dict, (Category, _DetectorTable))), None),
    "tools": (_optional(GenericAlias(dict, (str, _ToolOverride))), None),
    "guard": (TypeForm(_GuardTable | None), None),
    # the daily budgets over many sessions: the guard's (guard/spend.py checks each table)
    "budgets": (TypeForm(dict[str, dict[str, Any]] | None), None),
})


def validate_policy_dict(data: dict[str, Any], *, source: str = "policy",
                         profile: str | None = None) -> Policy:
    """Validate a (partial) policy mapping and merge it onto its profile."""
    try:
        model = _PolicyModel.model_validate(data)
    except ValidationError as exc:
        raise PolicyError(f"{source}: {_first_error(exc)}") from None
    clean = model.model_dump(exclude_none=True)
    name = profile or clean.get("profile") or "default"
    if name not in PROFILES:
        raise PolicyError(f"{source}: unknown profile {name!r} (known: {', '.join(PROFILES)})")
    _check_values(clean, source)
    try:
        return Policy.from_dict(clean, profile=name)
    except ValueError as exc:
        raise PolicyError(f"{source}: {exc}") from None


def load_policy(path: Path | None, profile: str | None = None) -> Policy:
    """The effective policy: `profile` (default `default`) with the TOML file at `path` merged
    in. A `profile` argument wins over the file's own `profile` key."""
    if path is None:
        try:
            return Policy.profile(profile or "default")
        except ValueError as exc:
            raise PolicyError(str(exc)) from None
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read policy file: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PolicyError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"{path}: invalid TOML: {exc}") from None
    return validate_policy_dict(data, source=str(path), profile=profile)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors(include_url=False, include_input=False)[0]
    loc = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-"))
    if err["type"] == "extra_forbidden":
        return f"unknown key '{loc}'"
    return f"'{loc}': {err['msg']}"


def _check_values(d: dict[str, Any], source: str) -> None:
    """Range checks pydantic's types do not express."""
    for key in ("window", "lookback", "approve_repeats", "level_decay_steps", "file_cache_bytes"):
        if key in d and d[key] < (0 if key == "approve_repeats" else 1):
            raise PolicyError(f"{source}: '{key}' must be at least 1")
    tables = [("detectors", d.get("detectors") or {})]
    overrides = d.get("category_overrides") or {}
    tables += [(f"category_overrides.{c}", t) for c, t in overrides.items()]
    tables += [(f"tools.{t}", o) for t, o in (d.get("tools") or {}).items()]
    for prefix, table in tables:
        for det, params in table.items():
            if not isinstance(params, dict):
                continue
            for key, value in params.items():
                where = f"{prefix}.{det}.{key}"
                if key in ("threshold", "ratio", "overlap"):
                    if not 0 < value <= 1:
                        raise PolicyError(f"{source}: '{where}' must be in (0, 1]")
                elif isinstance(value, int) and not isinstance(value, bool) and value < 0:
                    raise PolicyError(f"{source}: '{where}' must not be negative")
    for name, spec in (d.get("limits") or {}).items():
        value = spec.get("limit")
        if value is not None and (value < 0 or math.isnan(value)):
            raise PolicyError(f"{source}: 'limits.{name}.limit' must be >= 0 (0 = off)")


def dump_toml(policy: Policy) -> str:
    """The policy as TOML (what `supervisor policy show` prints); limits of 0 are off. Each
    detector's table is preceded by a comment saying when it fires (from the registry)."""
    return toml_text(policy.to_dict())


def toml_text(data: dict[str, Any]) -> str:
    """A policy as a plain dict, as TOML in `dump_toml`'s layout (the dashboard shows the
    policy a session recorded this way, even one this version would not load)."""
    lines: list[str] = []
    scalars = {k: v for k, v in data.items() if not isinstance(v, dict)}
    for key, value in scalars.items():
        lines.append(f"{_key(key)} = {_value(value)}")
    _tables(lines, [], {k: v for k, v in data.items() if isinstance(v, dict)})
    return "\n".join(lines) + "\n"


_COMMENTS: dict[tuple[str, ...], str] = {("detectors", d.name): d.summary for d in REGISTRY}


def _tables(lines: list[str], path: list[str], tables: dict[str, Any]) -> None:
    for key, value in tables.items():
        here = [*path, key]
        flat = {k: v for k, v in value.items() if not isinstance(v, dict)}
        nested = {k: v for k, v in value.items() if isinstance(v, dict)}
        if flat or not nested:
            lines.append("")
            comment = _COMMENTS.get(tuple(here))
            if comment:
                lines.append(f"# {comment}")
            lines.append(f"[{'.'.join(_key(p) for p in here)}]")
            for k, v in flat.items():
                lines.append(f"{_key(k)} = {_value(v)}")
        _tables(lines, here, nested)


def _key(key: str) -> str:
    if key and all(c.isalnum() or c in "-_" for c in key):
        return key
    return _value(key)


def _value(value: Any) -> str:
    if value is None:
        return "0"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    text = str(value)
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    escaped = escaped.replace("\t", "\\t")
    escaped = "".join(c if ord(c) >= 0x20 and c != "\x7f" else f"\\u{ord(c):04x}" for c in escaped)
    return f'"{escaped}"'
