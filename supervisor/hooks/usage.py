"""What an agent spent, as its own record says: the platform's half of reading usage.

Each target's transcript reader (`Target.transcript`) turns the lines of the agent's record that
carry token counts into `Spent` entries (and `UsedModel` where the record names the model apart
from the counts, as Codex's rollout does). What a line means is the target's; what is recorded
is decided here, once for every agent:

- **Counted once.** A `Spent` is the usage *so far* of one answer of the model, under the key
  the agent's record names it by: Claude Code's `message.id` (it writes a message as several
  lines with the same id, each with the message's usage so far), Codex's `response_id` (one
  `token_usage_record` per response; its running totals, `token_count`, are not read), Gemini
  CLI's message `id`, Qwen Code's line `uuid`. No key spans the session. The session's hook
  memory keeps the last counts of the last `KEYS_KEPT` keys (`Tally`); only the growth over
  them is recorded, so a line repeated, split or re-read never counts twice, and a usage so
  far becomes what it added.
- **One event an answer read at once.** Claude Code writes an answer as a line per content
  block, each with the answer's usage so far (the first with a few output tokens, the last with
  all of them): read together, the earlier lines are left out (`Tally.merged`) when that
  records the same tokens, so the answer is one `usage` event, written, priced and judged once,
  and the answer a call is charged (`protocol.charge`: the last usage before it) is all of it.
  Read apart (parallel calls, a line read after the batch), its parts are several events, each
  with the key as its `answer`, and a call is charged all of them (`protocol.charge.parts`).
- **Never negative, never a crash.** A count that is not a whole number of tokens between 0 and
  `MAX_TOKENS` (negative, huge, a string, NaN) is left out and named in the entry's `unknown`;
  the runtime records what could be read, its cost as unknown (`cost_usd` null, never $0), and
  one warning per session.

Token convention of the `usage` event (docs/protocol.md): `input_tokens` are the input tokens
*not* read from the provider's cache; `cache_read_tokens` and `cache_write_tokens` are apart.
Readers of agents whose provider counts cached tokens inside the input (OpenAI, Gemini) subtract
them (`split_cached`).
"""

import math
from collections.abc import Sequence
from typing import Any, TypedDict, TypeVar

MAX_TOKENS = 10**10
"""More tokens than this in one count is not a real count (a corrupt or hostile line)."""
KEYS_KEPT = 64
"""Keys whose counts the memory keeps (a message's lines are written close together)."""
COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
T = TypeVar("T")


class Spent(TypedDict):
    """The usage so far under `key`, as one line of the agent's record says."""

    key: str
    model: str | None
    counts: dict[str, int]
    """Of `COUNTS`, those the line gave and that are real counts."""
    unknown: list[str]
    """Counts the line gave that are not real counts (left out, reported once)."""


class UsedModel(TypedDict):
    """The model the agent's next answers come from (a record that names it apart)."""

    used_model: str


def spent(key: str, model: object, raw: dict[str, object]) -> Spent:
    """A `Spent` from the raw counts a line gave (`COUNTS` names; absent ones are left out)."""
    counts: dict[str, int] = {}
    unknown: list[str] = []
    for name, value in raw.items():
        number = token_count(value)
        if number is None:
            unknown.append(name)
        else:
            counts[name] = number
    named = model.strip()[:200] if isinstance(model, str) and model.strip() else None
    return {"key": key[:200], "model": named, "counts": counts, "unknown": unknown}


def token_count(value: object) -> int | None:
    """`value` as a count of tokens, or None when it is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        return None
    number = int(value)
    return number if 0 <= number <= MAX_TOKENS else None


def split_cached(total_input: object, cached: object) -> dict[str, object]:
    """The input of a provider that counts cached tokens inside it, in the event's convention:
    uncached `input_tokens` and `cache_read_tokens` (an unreadable `cached` counts as none)."""
    whole, part = token_count(total_input), token_count(cached)
    if whole is None:
        return {"input_tokens": total_input}
    part = min(part or 0, whole)
    return {"input_tokens": whole - part, "cache_read_tokens": part}


class Tally:
    """The counts already recorded per key (the session's hook memory keeps it)."""

    def __init__(self, kept: dict[str, list[int]] | None = None) -> None:
        self.kept: dict[str, list[int]] = kept or {}

    def growth(self, entry: Spent) -> dict[str, int]:
        """What `entry` adds to what was recorded under its key (each count at least 0); the
        key then remembers the entry's counts. A count that shrank (a record started over)
        adds nothing and becomes the new base."""
        before = self.kept.pop(entry["key"], [0] * len(COUNTS))
        after = list(before)
        grown: dict[str, int] = {}
        for index, name in enumerate(COUNTS):
            if name in entry["counts"]:
                now = entry["counts"][name]
                grown[name] = max(now - before[index], 0)
                after[index] = now
        self.kept[entry["key"]] = after
        while len(self.kept) > KEYS_KEPT:
            del self.kept[next(iter(self.kept))]
        return grown

    def merged(self, entries: Sequence[T]) -> list[T]:
        """`entries` of one read of the agent's record, in order, without the `Spent` entries
        that a later one of the same key makes redundant. A key's entries are left out, all but
        its last, only when `growth` of the last alone is what `growth` of each in turn would
        have recorded: they name the same model and no `UsedModel` comes between them (the
        model they are priced as), no count that is not one, each gives every count the one
        before gave, and no count goes down (from what the key holds here, then entry to
        entry). Otherwise all are kept. The tokens are the same; the cost is the answer's
        counts priced together, as its provider charges it (a tier applies to all of an
        answer's tokens)."""
        chains: dict[tuple[str, int], list[int]] = {}
        models = 0  # `UsedModel`s so far: a key's entries on either side of one are apart
        for index, entry in enumerate(entries):
            if isinstance(entry, dict) and "used_model" in entry:
                models += 1
            elif isinstance(entry, dict) and "key" in entry and "counts" in entry:
                chains.setdefault((entry["key"], models), []).append(index)
        left_out: set[int] = set()
        levels: dict[str, dict[str, int]] = {}  # a key's counts as `growth` leaves them
        for (key, _), indexes in chains.items():
            kept = self.kept.get(key, [0] * len(COUNTS))
            level = levels.setdefault(key, dict(zip(COUNTS, kept, strict=True)))
            chain: list[Any] = [entries[i] for i in indexes]
            if len(chain) > 1 and _rises(level, chain):
                left_out.update(indexes[:-1])
            for entry in chain:
                level.update(entry["counts"])
        return [e for i, e in enumerate(entries) if i not in left_out]

    def dump(self) -> dict[str, list[int]]:
        return self.kept


def _rises(level: dict[str, int], chain: list[Any]) -> bool:
    """Whether `chain` (one key's entries, in order) only adds to `level`, the key's counts
    before it: see `Tally.merged`."""
    level, named = dict(level), set[str]()
    for entry in chain:
        counts = entry["counts"]
        if entry["unknown"] or entry["model"] != chain[0]["model"]:
            return False
        if not named <= counts.keys() or any(counts[n] < level.get(n, 0) for n in counts):
            return False
        level.update(counts)
        named = set(counts)
    return True


def load_tally(data: object) -> Tally:
    """The tally as the memory saved it; anything unreadable is left out."""
    if not isinstance(data, dict):
        return Tally()
    kept = {}
    for key, counts in data.items():
        if (isinstance(key, str) and isinstance(counts, list) and len(counts) == len(COUNTS)
                and all(token_count(c) is not None for c in counts)):
            kept[key] = [int(c) for c in counts]
    return Tally(dict(list(kept.items())[-KEYS_KEPT:]))
