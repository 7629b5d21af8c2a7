"""What a call probably cost, from the usage the provider reported.

A small table of list prices (USD per million tokens, input / output) for
models people commonly point synthesize at. Prices change: the number is an
estimate, labelled as such on the wire (`usd_estimate`).

The rule, in order:
1. a model in the table is priced, wherever it is served from (a proxy on
   localhost forwarding to a paid API still costs money);
2. otherwise a model served from this machine or the private network
   (Ollama, LM Studio, vLLM on localhost) is 0.0 — there is no per-token bill,
   and hardware and electricity are not counted;
3. otherwise (an unknown model on a remote API) the estimate is null: we do
   not know, and a guessed number would be worse than none.
A priced model whose server reported no usage is null too.
"""

from __future__ import annotations

import re

# list prices, USD per 1M tokens (input, output), as published in 2025
PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-haiku": (0.25, 1.25),
    "gpt-5": (1.25, 10.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.4),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1-nano": (0.1, 0.4),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "o3": (2.0, 8.0),
    "o3-mini": (1.1, 4.4),
    "o4-mini": (1.1, 4.4),
}

# what may follow a table name and still be the same model: a snapshot date or -latest
_SNAPSHOT = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)?")


def price_of(model: str | None) -> tuple[float, float] | None:
    """(input, output) USD per million tokens, or None for a model not in the table."""
    if not model:
        return None
    name = model.strip().lower()
    # router prefixes such as "anthropic/claude-…" or "openai/gpt-…"
    name = name.rsplit("/", 1)[-1]
    best = None
    for known, price in PRICES.items():
        if name.startswith(known) and _SNAPSHOT.fullmatch(name[len(known):]):
            if best is None or len(known) > len(best[0]):
                best = (known, price)
    return best[1] if best else None


def estimate_usd(model: str | None, input_tokens: int | None, output_tokens: int | None,
                 local: bool) -> float | None:
    """The usd_estimate for a cost block (see the module docstring for the rule)."""
    price = price_of(model)
    if price is None:
        return 0.0 if local else None
    if input_tokens is None or output_tokens is None:
        return None
    usd = (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000
    return round(usd, 6)
