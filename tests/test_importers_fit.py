"""An imported event skips the trial encoding only when it would come out of it unchanged:
`_fit` hands back what `fit_line` makes of every event (cut, escaped or kept as it is)."""

from typing import Any

import pytest

from supervisor.importers.base import LINE_BUDGET, _finite, _fit, _surely_fits
from supervisor.protocol.lines import fit_line

BASE = {"v": 1, "seq": 3, "ts": 1.5, "type": "tool_call", "call_id": "c1", "tool": "bash"}
ARGS: list[Any] = [
    {"command": "ls -la"}, {"path": "é☃𝄞", "n": 3, "ok": True, "x": None, "f": 0.25},
    ["a", 1, None], {}, [],
    {"command": "x" * (LINE_BUDGET // 5)},  # fits only if not counted at 6 bytes a character
    {"command": "y" * (LINE_BUDGET + 10)},  # must be cut
    {"nested": {"deeper": ["z"]}}, {"n": 10**20}, {"f": float("nan")}, {"f": float("inf")},
    {"text": "lone \udc80 surrogate"}, {"\udc80": "key"}, {1: "int key"}, {"t": (1, 2)},
]


def expected(event: dict[str, Any]) -> dict[str, Any]:
    try:
        return fit_line(event, max_bytes=LINE_BUDGET)[1]
    except (TypeError, ValueError):
        return fit_line(_finite(event), max_bytes=LINE_BUDGET)[1]


@pytest.mark.parametrize("args", ARGS, ids=repr)
def test_a_tool_call_comes_out_as_the_trial_encoding_makes_it(args: Any) -> None:
    event = {**BASE, "args": args}
    assert _fit(dict(event)) == expected(dict(event))
    if _surely_fits(event, LINE_BUDGET):
        assert fit_line(event, max_bytes=LINE_BUDGET)[1] is event


def test_text_beside_arguments_is_escaped_as_the_trial_encoding_escapes_it() -> None:
    event = {**BASE, "tool": "b\udc80sh", "args": {"command": "ls"}}
    assert not _surely_fits(event, LINE_BUDGET)
    assert _fit(dict(event))["tool"] == expected(dict(event))["tool"] == "b\\x80sh"


def test_what_is_surely_small_skips_the_trial_encoding() -> None:
    assert _surely_fits({**BASE, "args": {"command": "ls", "timeout": 30}}, LINE_BUDGET)
    assert not _surely_fits({**BASE, "args": {"a": {"b": 1}}}, LINE_BUDGET)
    assert not _surely_fits({**BASE, "args": {"n": 10**20}}, LINE_BUDGET)


@pytest.mark.parametrize("number", [float("nan"), float("inf"), -float("inf"), 1e308, -0.5])
def test_a_number_beside_the_text_comes_out_as_the_trial_encoding_makes_it(
        number: float) -> None:
    event = {**BASE, "type": "tool_result", "ok": True, "duration_ms": number}
    assert _fit(dict(event)) == expected(dict(event))
    assert _surely_fits(event, LINE_BUDGET) == (abs(number) != float("inf") and number == number)
