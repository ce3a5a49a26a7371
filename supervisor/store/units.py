"""Numbers for people: a limit's value and bound in the unit a person reads them in.

`16 s / 8 h`, `1.3k / 50M tokens`, `$0.002 / $100`, `12 / 200`: durations in s/min/h/d, token
counts with k/M/G, money with a dollar sign and the digits that matter, plain counts as
integers. The unit comes from the limit's name (`duration_s`, `tokens`, `cost_usd`, ...), so the
dashboard's gauges and `supervisor stats` say the same thing. `?` is shown only for a value that
is truly unknown (None).
"""

import math
from typing import Literal

Unit = Literal["seconds", "tokens", "usd", "count"]


def unit_of(name: str) -> Unit:
    """The unit of a limit or counter, from its name."""
    if name.endswith("_s") or name in ("duration", "wall_time"):
        return "seconds"
    if name == "tokens" or name.endswith("_tokens"):
        return "tokens"
    if name.endswith("_usd") or name == "cost":
        return "usd"
    return "count"


def human(value: float | None, unit: Unit) -> str:
    """One value in its unit: `16 s`, `1.3k`, `$0.002`, `12`; `?` when unknown."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "?"
    if math.isinf(value):
        return "∞"
    match unit:
        case "seconds":
            return duration(value)
        case "tokens":
            return compact(value)
        case "usd":
            return dollars(value)
    return count(value)


def gauge(name: str, value: float | None, limit: float | None) -> str:
    """`value / limit` with the unit: `16 s / 8 h`, `1.3k / 50M tokens`, `$0.002 / $100`."""
    unit = unit_of(name)
    shown = f"{human(value, unit)} / {human(limit, unit) if limit else 'off'}"
    return shown + (" tokens" if unit == "tokens" else "")


def count(value: float) -> str:
    """An integer count, with thousands separators (`1,234`)."""
    return f"{round(value):,}"


def files(n: object) -> str:
    """`1 file`, `12 files` (`n` as recorded: anything but 1 takes the plural)."""
    return "1 file" if n == 1 else f"{n} files"


def duration(seconds: float) -> str:
    """`16 s`, `4.5 min`, `8 h`, `2 d`: the largest unit the value fills, two digits at most."""
    seconds = max(0.0, float(seconds))
    if seconds >= 10:
        seconds = float(round(seconds))  # 59.6 s is "1 min", not "60 s"
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{_short(seconds / size)} {unit}"
    return f"{_short(seconds)} s"


def compact(value: float) -> str:
    """`950`, `1.3k`, `12k`, `50M`, `2.1G`."""
    value = float(value)
    sign = "-" if value < 0 else ""
    value = abs(value)
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{sign}{_short(value / size)}{suffix}"
    return f"{sign}{round(value)}"


def dollars(value: float) -> str:
    """`$0.002`, `$0.35`, `$1.30`, `$100`: whole dollars as such, cents otherwise, one
    significant digit below a cent."""
    value = float(value)
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value == 0:
        return "$0"
    if value < 0.01:
        digits = -math.floor(math.log10(value))  # one significant digit
        text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    elif value >= 1000 or float(value).is_integer():
        text = f"{value:,.0f}"
    else:
        text = f"{value:.2f}"
    return f"{sign}${text}"


def _short(value: float) -> str:
    """At most one decimal, and none from 10 up or when it is .0 (`1.5`, `12`, `8`)."""
    if value >= 10 or float(value).is_integer():
        return f"{round(value):,}"
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text
