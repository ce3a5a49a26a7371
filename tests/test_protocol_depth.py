"""`depth_of`, walked a level at a time, counts as the plain depth-first walk does: the depth of
a value, counting no further than `limit + 1` (the importers refuse a parsed document by it)."""

from typing import Any

import pytest

from supervisor.protocol.bounded import depth_of


def depth_first(value: Any, limit: int) -> int:
    """The definition, written the plain way."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        if level > limit:
            return deepest
        stack.extend((c, level + 1) for c in children if isinstance(c, dict | list | tuple))
    return deepest


def nested(levels: int) -> Any:
    value: Any = "leaf"
    for level in range(levels):
        value = [value, 1] if level % 2 else {"k": value, "n": None}
    return value


VALUES = [None, 1, "text", [], {}, (), [1, "a", None], {"a": {"b": [1, (2, {"c": []})]}},
          [{"x": [[[]]]}, {"y": 1}, []], nested(1), nested(63), nested(64), nested(65),
          nested(200), {"wide": [nested(3)] * 50 + [nested(9)]}]


@pytest.mark.parametrize("limit", [-1, 0, 1, 2, 5, 63, 64, 400])
@pytest.mark.parametrize("index", range(len(VALUES)))
def test_depth_of_counts_as_the_depth_first_walk(index: int, limit: int) -> None:
    assert depth_of(VALUES[index], limit) == depth_first(VALUES[index], limit)


def test_depth_stops_counting_past_the_limit() -> None:
    assert depth_of(nested(64)) == 64 and depth_of(nested(65)) == 65 == depth_of(nested(10**4))
    cycle: list[Any] = []
    cycle.append(cycle)  # not JSON, but the walk must end
    assert depth_of(cycle, 10) == 11


@pytest.mark.parametrize("data", [
    b'{"a": [1, 2.5, "x"]}', '{"a": 1}', b"\xef\xbb\xbf{}", "\ufeff{}", '{"a": 1}'.encode("utf-16"),
    b'{"a": NaN}', b'{"a": -Infinity, "b": 1e400}', b'{"a": 1', b'"\\ud800"', b"\xff", b"[]",
])
def test_loads_answers_as_json_loads_with_its_decoders_made_once(data: bytes | str) -> None:
    """`loads` keeps one decoder per option (`json.loads` given an option makes one at every
    call): the same values and the same refusals as `json.loads` given those options."""
    import functools
    import json

    from supervisor.protocol.bounded import _finite_float, _refuse_constant, loads

    def outcome(parse: Any) -> Any:
        try:
            return parse()
        except ValueError as exc:
            return type(exc)

    options = [({}, {"parse_constant": _refuse_constant}), ({"constants": True}, {}),
               ({"finite": True}, {"parse_constant": str, "parse_float": _finite_float})]
    for ours, theirs in options:
        assert outcome(functools.partial(loads, data, **ours)) == outcome(
            functools.partial(json.loads, data, **theirs)), (data, ours)
