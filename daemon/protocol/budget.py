"""Token budgets (docs/protocol.md §4.3): the estimator, when a budget applies, greedy packing."""

from __future__ import annotations


def estimate_tokens(text: str | None) -> int:
    """The protocol's budget estimator: ceil(chars / 4)."""
    if not text:
        return 0
    return (len(text) + 3) // 4


def pack_greedy(items: list, costs: list[int], budget: int) -> tuple[list, int]:
    """Keep the longest prefix whose cost fits; stop at the first misfit."""
    used = 0
    kept = []
    for item, cost in zip(items, costs):
        if used + cost > budget:
            break
        used += cost
        kept.append(item)
    return kept, used


def budget_of(value) -> int | None:
    """A budget applies only when it is a finite number > 0 (floored)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    b = int(value // 1)
    return b if b > 0 else None
