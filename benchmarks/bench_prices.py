"""Pricing one model answer: `guard.prices.cost_usd`, which keeps each model's rates per token
kind, against the price table asked afresh for every answer (`genai_prices.calc_price`, which
`cost_usd` called until 2026-11-29). The resident hook server prices every answer it reads from
an agent's transcript on a call's path (issue 40).

The answers are those of a Claude Code session (a few fresh input tokens, tens of thousands read
from the cache, a thousand written, hundreds out), the models a tiered one (Claude Sonnet 4.5,
Gemini 2.5 Pro), flat ones (Claude Opus 4.5, GPT-5 Codex) and a dated one (DeepSeek's off-peak
prices); every model is warmed in both before timing. CPU time of the process (`process_time`),
the two alternated A B B A over the rounds, median of the rounds.
"""

import statistics
import time

from common import Figure

from supervisor.guard import prices

MODELS = ("claude-sonnet-4-5-20250929", "claude-opus-4-5", "gpt-5-codex", "gemini-2.5-pro",
          "deepseek-reasoner")
ANSWERS = [{"input_tokens": 3 + n % 7, "cache_read_tokens": 40_000 + 97 * n,
            "cache_write_tokens": 1_000 + 13 * n, "output_tokens": 150 + 11 * n}
           for n in range(50)]


def table_asked(model: str, counts: dict[str, int]) -> float | None:
    """The price as `cost_usd` computed it before it kept rates: the table asked afresh."""
    from genai_prices import Usage, calc_price

    provider, _, name = model.rpartition("/")
    read, written = counts.get("cache_read_tokens", 0), counts.get("cache_write_tokens", 0)
    usage = Usage(input_tokens=counts.get("input_tokens", 0) + read + written,
                  cache_read_tokens=read, cache_write_tokens=written,
                  output_tokens=counts.get("output_tokens", 0))
    kwargs = {"provider_id": provider} if provider else {}
    try:
        return float(calc_price(usage, name, **kwargs).total_price)
    except (LookupError, ValueError):
        return None


def _cpu_per_answer(price, answers: int) -> float:
    started = time.process_time()
    done = 0
    while done < answers:
        for model in MODELS:
            for counts in ANSWERS:
                price(model, counts)
        done += len(MODELS) * len(ANSWERS)
    return (time.process_time() - started) / done


def run(scale: float = 1.0) -> list[Figure]:
    rounds = max(2, round(10 * scale))
    answers = max(len(MODELS) * len(ANSWERS), round(5_000 * scale))
    for model in MODELS:  # the table loaded and every model looked up, in both
        for counts in ANSWERS:
            assert prices.cost_usd(model, counts) == table_asked(model, counts)
    kept, asked = [], []
    for index in range(rounds):
        order = ((prices.cost_usd, kept), (table_asked, asked))
        for price, into in order if index % 2 == 0 else reversed(order):
            into.append(_cpu_per_answer(price, answers) * 1e6)
    return [Figure("price of one answer (rates kept) vs the table asked afresh",
                   statistics.median(kept), "us", statistics.median(asked), max_ratio=0.1,
                   note=f"{rounds} rounds of {answers} answers, CPU time, ABBA")]
