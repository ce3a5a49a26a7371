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
"""

from decimal import Decimal
from typing import Any


def warm() -> None:
    """Load the table now (the resident hook server does, in a thread, when it starts), so
    no call waits for it; never raises."""
    try:
        from genai_prices import data_snapshot

        data_snapshot.get_snapshot()
    except Exception:  # a table that cannot load prices nothing: its costs are unknown
        return


def cost_usd(model: str | None, counts: dict[str, int]) -> float | None:
    """The price in US dollars of `counts` (`input_tokens` not read from the cache,
    `output_tokens`, `cache_read_tokens`, `cache_write_tokens`) of one answer of `model`;
    None when the model is unknown (to us or to the table)."""
    if not model:
        return None
    fresh = counts.get("input_tokens", 0)
    read = counts.get("cache_read_tokens", 0)
    written = counts.get("cache_write_tokens", 0)
    output = counts.get("output_tokens", 0)
    if not fresh + read + written + output:
        return 0.0
    price = _price(model, fresh + read + written, read, written, output)
    return None if price is None else float(price)


def _price(model: str, total_input: int, read: int, written: int, output: int) -> Decimal | None:
    """The table's price (its `input_tokens` include the cached ones); None: not in it."""
    from genai_prices import Usage, calc_price  # heavy: see the module's docstring

    provider, _, name = model.rpartition("/")
    usage = Usage(input_tokens=total_input, cache_read_tokens=read, cache_write_tokens=written,
                  output_tokens=output)
    kwargs: dict[str, Any] = {"provider_id": provider} if provider else {}
    try:
        return calc_price(usage, name, **kwargs).total_price
    except (LookupError, ValueError):  # a model or provider it does not know
        return None
