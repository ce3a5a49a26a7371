"""What tokens cost: the price of one model answer, from a well-kept price table.

The table is pydantic's `genai-prices` (updated with each provider's prices, cache reads and
writes included), not one of ours. The model is named as the agent recorded it
(`claude-sonnet-4-5-20250929`, `gpt-5-codex`, `gemini-2.5-pro`; an `openai/gpt-5` names its
provider). A model the table does not know has no price: `cost_usd` gives None, which the
`usage` event records as a cost unknown (never $0), while its tokens still count.

`genai_prices` loads pydantic, an HTTP client and a large table: importing it and loading the
table took 2-3 s on a loaded 2-core machine (`python -X importtime`), ten times a Python
start-up. So it is imported at the first price asked, never when this module is imported: the
hook client and a hook call that records no usage never pay for it, and the resident hook
server loads it in a thread as it starts (`warm`), before any call needs it. A hook handled
in-process (no server, `SUPERVISOR_HOOK_DAEMON=0`) that records usage pays it in that call.

Every answer the hook server reads is priced on a call's path, so the table is not asked each
time: its `calc_price` takes 75 us of CPU an answer in a loop of its own and about 0.2 ms in a
hook step on a loaded machine (it builds and checks a `Usage`, walks its unit registry, checks
the model's price set, splits the counts), some 40 to 100 times the few multiplications it comes
to (`benchmarks/bench_prices.py`, benchmarks/README.md). The first answer of a model looks the
model up as `calc_price` does and keeps, for each of its price sets, the price of a token of
each of the four kinds we count (`Rates`); later answers multiply. The figures are the table's
own, to the last digit:

- **Tiers.** A tiered price (Claude Sonnet 4.5, Gemini 2.5 Pro past 200k input tokens) charges
  its tier for every token of an answer whose input, cached included, is above the tier's
  start. The rates are kept per band between the set's tier starts, taken by the table's own
  rule (`calc_unit_price`) at a count inside the band; an answer is priced with its band's.
- **Dated prices.** A model whose prices changed on a date, or change with the time of day
  (DeepSeek's off-peak hours), is priced with the set the table's `get_prices` gives for the
  answer's time, as in `calc_price`; each set has its own rates.
- **Kinds without a price.** A cache read or write the set has no price for is priced as
  input (the table counts it inside the input); a set that prices a request adds it once an
  answer (the table counts each answer as one request); the other kinds a set prices (audio,
  images, web searches) are none of our counts and add nothing, as in the table. A set the
  table finds incoherent prices nothing, as `calc_price` refuses it.
- **No rounding.** `Decimal`, as the table: products of its prices (a few digits) and counts
  (at most `usage.MAX_TOKENS`) and their sums stay well inside 28 digits, so the price is the
  same number as the table's, and so is its `float`. `tests/test_prices.py` compares the two
  over the models of the recorded sessions and every model of the agents' providers, at counts
  on either side of each tier start and times on either side of each date.
"""

import threading
from bisect import bisect_left
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

MODELS_KEPT = 256
"""Models whose lookup is kept (their names are the agents' text: a hostile transcript could
name a new one at every line)."""
_KINDS = ("input_mtok", "cache_read_mtok", "cache_write_mtok", "output_mtok")
"""The table's price keys of the counts we have: fresh input, cache read, cache write, output
(per million tokens)."""
_MTOK = 1_000_000


def warm() -> None:
    """Load the table now (the resident hook server does, in a thread, when it starts), so
    no call waits for it; never raises."""
    try:
        from genai_prices import data_snapshot

        data_snapshot.get_snapshot()
    except Exception:  # a table that cannot load prices nothing: its costs are unknown
        return


def cost_usd(model: str | None, counts: dict[str, int], at: datetime | None = None) -> float | None:
    """The price in US dollars of `counts` (`input_tokens` not read from the cache,
    `output_tokens`, `cache_read_tokens`, `cache_write_tokens`, each a count of
    `usage.token_count`) of one answer of `model` given at `at` (now when None: a model's
    prices may change with the date or the time of day); None when the model is unknown (to
    us or to the table)."""
    if not model:
        return None
    fresh = counts.get("input_tokens", 0)
    read = counts.get("cache_read_tokens", 0)
    written = counts.get("cache_write_tokens", 0)
    output = counts.get("output_tokens", 0)
    if not fresh + read + written + output:
        return 0.0
    found = _models.get(model, _NOT_LOOKED_UP)
    if found is _NOT_LOOKED_UP:
        found = _look_up(model)
        with _keeping:  # the server's workers price in threads of their own
            _models[model] = found
            while len(_models) > MODELS_KEPT:
                del _models[next(iter(_models))]
    if found is None:
        return None
    rates = found.rates(at)
    return None if rates is None else float(rates.price(fresh, read, written, output))


@dataclass(frozen=True, slots=True)
class Rates:
    """What one price set of a model charges for a token of each kind we count, in USD per
    million tokens, per band of input between its tier starts."""

    starts: tuple[int, ...]
    """The set's tier starts, ascending, without repeats (none: the set has no tiers). An
    answer whose input (cached included) is above `i` of them is in band `i`."""
    bands: tuple[tuple[Decimal, Decimal, Decimal, Decimal], ...]
    """Per band: fresh input, cache read, cache write, output."""
    per_answer: tuple[Decimal, ...]
    """Per band: the set's price of a request (0 for most), in USD."""

    def price(self, fresh: int, read: int, written: int, output: int) -> Decimal:
        """The price in USD of one answer's counts."""
        band = bisect_left(self.starts, fresh + read + written) if self.starts else 0
        per_fresh, per_read, per_written, per_output = self.bands[band]
        tokens = per_fresh * fresh + per_read * read + per_written * written + per_output * output
        return tokens / _MTOK + self.per_answer[band]


class _Model:
    """A model of the table and the rates of its price sets, made as they are asked for."""

    __slots__ = ("info", "kept")

    def __init__(self, info: Any) -> None:
        self.info = info
        self.kept: dict[int, Rates | None] = {}
        """Rates by the `id` of their set (the sets live as long as `info`, which holds them)."""

    def rates(self, at: datetime | None) -> Rates | None:
        """The rates of the set in force at `at` (now when None), None: a set the table
        refuses."""
        prices = self.info.prices
        if isinstance(prices, list):  # dated sets: the one in force, by the table's rule
            prices = self.info.get_prices(at or datetime.now(tz=UTC))
        try:
            return self.kept[id(prices)]
        except KeyError:
            made = self.kept[id(prices)] = _rates(prices)
            return made


_NOT_LOOKED_UP = object()
_keeping = threading.Lock()
_models: dict[str, Any] = {}
"""`_Model` by the name the agent gave (None: not in the table), the last `MODELS_KEPT`."""


def _look_up(model: str) -> _Model | None:
    """The table's model for `model` (a name, or `provider/name`), found as `calc_price`
    finds it; None when the table knows no such model or provider."""
    from genai_prices import data_snapshot  # heavy: see the module's docstring

    snapshot = data_snapshot.get_snapshot()
    provider, _, name = model.rpartition("/")
    try:
        _, info = snapshot.find_provider_model(name, None, provider or None, None)
    except (LookupError, ValueError):
        return None
    finally:
        _forget(snapshot)
    return _Model(info)


_TABLE_CACHES = ("_lookup_cache", "_provider_cache", "_provider_misses")
"""Where the table keeps the names it was asked for: every one, without a bound (a name
missed, a name whose start matched a provider, a model found), some 250 B a name."""


def _forget(snapshot: Any) -> None:
    """Empty the table's caches of names once one holds more than `MODELS_KEPT`: the names are
    the agents' text, and a transcript naming a new model at every line grew the resident
    server without limit. What the table kept saves nothing here (`_models` keeps its answer
    for the names asked lately), so emptying them costs only a name asked again after it
    left `_models`, looked up afresh (65 us). Read by name: a table that keeps them elsewhere
    loses nothing (`tests/test_prices.py` measures the memory)."""
    for name in _TABLE_CACHES:
        kept = getattr(snapshot, name, None)
        if isinstance(kept, dict | set) and len(kept) > MODELS_KEPT:
            kept.clear()


def _rates(prices: Any) -> Rates | None:
    """The `Rates` of one price set of the table; None when the table refuses the set (its
    prices incoherent: `calc_price` raises for every answer)."""
    from genai_prices import Usage
    from genai_prices.types import TieredPrices, calc_unit_price

    try:
        prices.calc_price(Usage(input_tokens=0))  # the table's own checks of the set
    except ValueError:
        return None
    fresh, read, written, output = (getattr(prices, key) for key in _KINDS)
    request = prices.requests_kcount
    starts = sorted({tier.start for price in (fresh, read, written, output, request)
                     if isinstance(price, TieredPrices) for tier in price.tiers})
    bands, per_answer = [], []
    for inside in (0, *(start + 1 for start in starts)):  # an input in each band
        per_fresh = calc_unit_price(fresh, 1, inside, 1)
        bands.append((per_fresh,
                      per_fresh if read is None else calc_unit_price(read, 1, inside, 1),
                      per_fresh if written is None else calc_unit_price(written, 1, inside, 1),
                      calc_unit_price(output, 1, inside, 1)))
        per_answer.append(calc_unit_price(request, 1, inside, 1000))
    return Rates(tuple(starts), tuple(bands), tuple(per_answer))
