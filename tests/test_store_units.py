"""Numbers for people: what the gauges and `supervisor stats` print."""

import pytest

from supervisor.store.units import compact, count, dollars, duration, gauge, human, unit_of


@pytest.mark.parametrize(("name", "value", "limit", "shown"), [
    ("duration_s", 16, 8 * 3600, "16 s / 8 h"),
    ("tokens", 1300, 50_000_000, "1.3k / 50M tokens"),
    ("cost_usd", 0.002, 100, "$0.002 / $100"),
    ("iterations_per_session", 12, 200, "12 / 200"),
    ("errors_per_session", 3.0, 30.0, "3 / 30"),  # counts are integers, never 3.0
    ("consecutive_tool_calls", None, 150, "? / 150"),  # `?` only when truly unknown
    ("duration_s", 0, 0, "0 s / off"),
])
def test_gauges(name: str, value: float | None, limit: float, shown: str) -> None:
    assert gauge(name, value, limit) == shown


def test_units_from_names() -> None:
    assert [unit_of(n) for n in ("duration_s", "wall_time_s", "tokens", "output_tokens",
                                 "cost_usd", "resets_per_conversation")] == [
        "seconds", "seconds", "tokens", "tokens", "usd", "count"]


def test_each_unit_reads_naturally() -> None:
    assert [duration(s) for s in (0, 9.5, 59.6, 90, 3600, 5400, 86400 * 2)] == [
        "0 s", "9.5 s", "1 min", "1.5 min", "1 h", "1.5 h", "2 d"]
    assert [compact(n) for n in (0, 950, 1000, 1340, 12_345, 2_500_000, 3e9)] == [
        "0", "950", "1k", "1.3k", "12k", "2.5M", "3G"]
    assert [dollars(v) for v in (0, 0.0021, 0.35, 1.3, 2.0, 100, 1234.5)] == [
        "$0", "$0.002", "$0.35", "$1.30", "$2", "$100", "$1,234"]
    assert count(1234567.0) == "1,234,567"
    assert human(float("nan"), "count") == "?" and human(None, "usd") == "?"
