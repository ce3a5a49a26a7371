"""The price of an answer (`guard.prices`) is the price table's own figure: `cost_usd`, which
keeps each model's per-token rates, against `genai_prices.calc_price` asked afresh, over every
model the recorded sessions name and every model of the providers the agents use, at input counts
on either side of each tier start (a tier charges every token of the answer) and at times on
either side of each dated price (a price from a date, an off-peak window). Equal as floats: one
wrong rate, band or set fails."""

import re
import sys
import threading
import warnings
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import pytest
from genai_prices import Usage, calc_price, data_snapshot, types

from supervisor.guard import prices
from supervisor.hooks.usage import MAX_TOKENS

DATA = Path(__file__).parent / "data"
AGENTS_PROVIDERS = ("anthropic", "openai", "google", "deepseek", "x-ai", "mistral")
"""Claude Code's, Codex's and Gemini CLI's providers, and those an agent that names its
provider (`provider/model`) is most often pointed at."""
NOW = datetime(2026, 11, 29, 3, 0, tzinfo=UTC)


def recorded_models() -> list[str]:
    """Every model a recorded session or transcript under tests/data names."""
    named = {match.group(1) for path in DATA.rglob("*") if path.is_file()
             for match in re.finditer(r'"model"\s*:\s*"([^"]+)"',
                                      path.read_text(errors="replace"))}
    return sorted(named | {"claude-sonnet-4-5-20250929", "gpt-5-codex", "openai/gpt-5",
                           "gemini-2.5-pro", "claude-from-the-future-9"})


def table_models(providers: tuple[str, ...] | None) -> list[str]:
    """Every model of `providers` (all when None) as `provider/model id`."""
    return [f"{p.id}/{m.id}" for p in data_snapshot.get_snapshot().providers
            if providers is None or p.id in providers for m in p.models]


def table_price(model: str, counts: dict[str, int], at: datetime) -> float | None:
    """The table's price asked afresh, as `prices` asked it before it kept rates."""
    provider, _, name = model.rpartition("/")
    usage = Usage(input_tokens=counts["input_tokens"] + counts["cache_read_tokens"]
                  + counts["cache_write_tokens"], cache_read_tokens=counts["cache_read_tokens"],
                  cache_write_tokens=counts["cache_write_tokens"],
                  output_tokens=counts["output_tokens"])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(calc_price(usage, name, provider_id=provider or None,
                                    genai_request_timestamp=at).total_price)
    except (LookupError, ValueError):
        return None


def price_sets(model: str) -> list | None:
    """The table's model's price sets with their constraints; None: not in the table."""
    provider, _, name = model.rpartition("/")
    try:
        _, info = data_snapshot.get_snapshot().find_provider_model(name, None, provider or None,
                                                                   None)
    except (LookupError, ValueError):
        return None
    if isinstance(info.prices, types.ModelPrice):
        return [(None, info.prices)]
    return [(c.constraint, c.prices) for c in info.prices]


def sweep(model: str) -> Iterator[tuple[dict[str, int], datetime]]:
    """Counts at 1, MAX_TOKENS and either side of each tier start (all fresh, all cache reads,
    all cache writes, a mix; with and without output), at now and either side of each date or
    hour the model's prices change."""
    sets = price_sets(model) or [(None, None)]
    starts, times = {0}, [NOW]
    for constraint, set_ in sets:
        for value in (set_.__dict__.values() if set_ is not None else ()):
            if isinstance(value, types.TieredPrices):
                starts |= {tier.start for tier in value.tiers}
        if isinstance(constraint, types.StartDateConstraint):
            begins = datetime.combine(constraint.start_date, time(), UTC)
            times += [begins, begins - timedelta(seconds=1)]
        elif isinstance(constraint, types.TimeOfDateConstraint):
            for edge in (constraint.start_time, constraint.end_time):
                at = datetime.combine(date(2026, 1, 5), edge)
                at = at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
                times += [at, at - timedelta(seconds=1)]
    totals = sorted({n for start in starts for n in (start - 1, start, start + 1) if n > 0}
                    | {1, MAX_TOKENS})
    for at in times:
        for total in totals:
            for fresh, read, written in ((1, 0, 0), (0, 1, 0), (0, 0, 1), (2, 5, 3)):
                read_n = total * read // (fresh + read + written)
                written_n = total * written // (fresh + read + written)
                for output in (0, 123457):
                    yield ({"input_tokens": total - read_n - written_n,
                            "cache_read_tokens": read_n, "cache_write_tokens": written_n,
                            "output_tokens": output}, at)


def check_same_as_table(models: list[str]) -> int:
    """Every figure of `cost_usd` over `models` equals the table's; the count compared."""
    compared, wrong = 0, []
    for model in models:
        for counts, at in sweep(model):
            compared += 1
            ours, table = prices.cost_usd(model, counts, at), table_price(model, counts, at)
            if ours != table:
                wrong.append((model, counts, at.isoformat(), ours, table))
    assert not wrong, f"{len(wrong)} of {compared} differ, e.g. {wrong[:5]}"
    return compared


def test_the_recorded_sessions_models_cost_what_the_table_says() -> None:
    models = recorded_models()
    assert {"claude-sonnet-4-5-20250929", "gemini-2.5-pro", "deepseek-reasoner",
            "fake-model"} <= set(models)  # tiered, dated (off-peak), unknown
    check_same_as_table(models)


def test_every_model_of_the_agents_providers_costs_what_the_table_says() -> None:
    models = table_models(AGENTS_PROVIDERS)
    tiered = [m for m in models if any(isinstance(v, types.TieredPrices)
                                       for _, s in price_sets(m) or [] for v in vars(s).values())]
    dated = [m for m in models if any(c is not None for c, _ in price_sets(m) or [])]
    assert len(models) > 250 and len(tiered) > 20 and len(dated) > 10
    check_same_as_table(models)


@pytest.mark.slow
def test_every_model_of_the_table_costs_what_the_table_says() -> None:
    """Every provider of the table (about 2,700 models: OpenRouter's, Bedrock's, ...)."""
    assert check_same_as_table(table_models(None)) > 40_000


def test_a_tier_charges_every_token_of_the_answer() -> None:
    """Claude Sonnet 4.5 past 200k input tokens (cached included): $6 a million for all of
    them, not only for those past the start."""
    sonnet = "claude-sonnet-4-5-20250929"
    assert prices.cost_usd(sonnet, {"input_tokens": 200_000}) == pytest.approx(0.6)
    assert prices.cost_usd(sonnet, {"input_tokens": 200_001}) == pytest.approx(1.200006)
    assert prices.cost_usd(sonnet, {"input_tokens": 1, "cache_read_tokens": 200_000}) == \
        pytest.approx(200_000 * 0.6 / 1e6 + 6 / 1e6)


def test_an_unknown_model_has_no_price_and_an_empty_answer_costs_nothing() -> None:
    for _ in range(2):  # the second from what was kept of the first
        assert prices.cost_usd("fake-model", {"input_tokens": 10}) is None
        assert prices.cost_usd("nowhere/claude-sonnet-4-5", {"input_tokens": 10}) is None
        assert prices.cost_usd(None, {"input_tokens": 10}) is None
    assert prices.cost_usd("fake-model", {"input_tokens": 0, "output_tokens": 0}) == 0.0


def test_the_models_kept_are_bounded() -> None:
    """A transcript naming a new model at every line keeps at most `MODELS_KEPT` lookups."""
    for n in range(prices.MODELS_KEPT + 10):
        prices.cost_usd(f"made-up-{n}", {"output_tokens": 1})
    assert len(prices._models) == prices.MODELS_KEPT
    assert prices.cost_usd("gpt-5-codex", {"output_tokens": 1_000_000}) == 10.0


def test_models_are_kept_safely_from_several_threads() -> None:
    """The resident server's workers price answers in threads of their own: dropping the
    oldest model while another thread added one raised 'dictionary changed size during
    iteration' out of the step."""
    errors: list[BaseException] = []

    def price(thread: int) -> None:
        try:
            for n in range(3000):
                prices.cost_usd(f"made-up-{thread}-{n}", {"output_tokens": 1})
        except BaseException as error:
            errors.append(error)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        threads = [threading.Thread(target=price, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == [] and len(prices._models) == prices.MODELS_KEPT


def test_a_stream_of_new_model_names_keeps_memory_bounded() -> None:
    """The names are the agents' text, and the table keeps every name it is asked for (a miss,
    a provider matched by the name's start, a model found by it) without a bound: a transcript
    naming a new model at every line grew the resident server without limit."""
    import tracemalloc

    def ask(start: int, end: int) -> None:
        for n in range(start, end):  # no provider, a provider named, a provider's prefix
            for name in (f"made-up-{n}", f"nowhere-{n}/model", f"openai/gpt-{n}",
                         f"claude-sonnet-4-5-{n}"):
                prices.cost_usd(name, {"output_tokens": 1})

    prices.warm()  # the table loaded (traced, it took some 30 s of CPU)
    tracemalloc.start()  # from the first name: what is dropped later was counted when made
    try:
        ask(0, 300)  # every cache past its bound (`MODELS_KEPT`)
        before = tracemalloc.get_traced_memory()[0]
        ask(300, 1300)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 400_000, grown  # 4,000 names: about 1 MB kept without the bound
    assert prices.cost_usd("gpt-5-codex", {"output_tokens": 1_000_000}) == 10.0
