"""Fact ids: which integers a log line may claim, and the id a conflicting line is read under.

docs/architecture.md, "Fact ids": an id is a positive integer no larger than
2^53−1, the largest integer every JSON reader carries exactly. An id once
claimed by any line (whole, bad, or torn and set aside) is never minted
again. When two different insert lines claim one id, the earlier line keeps
it and the later one is read under an id derived from its own bytes, so the
answer is the same on every replay.
"""

from __future__ import annotations

import hashlib
import re

MAX_ID = (1 << 53) - 1
# derived ids are multiples of this, above every id a device mints (see docs/architecture.md)
DERIVED_STEP = 1 << 20
_DERIVED_SPAN = MAX_ID // DERIVED_STEP  # derived ids: DERIVED_STEP * [1, _DERIVED_SPAN]

# an id a line meant to claim, read even from a line that does not parse
_ID_IN_TEXT = re.compile(rb'"id"\s*:\s*(\d{1,20})')


def id_problem(value) -> str | None:
    """Why `value` cannot be a fact id, or None when it can."""
    if type(value) is not int:
        return "not a fact record (needs op insert/expire and an integer id)"
    if value < 1 or value > MAX_ID:
        return (f"id {value} is outside 1..{MAX_ID} (2^53−1, the largest integer JSON carries exactly); "
                "fix: give the line an unused id in that range, or delete the line")
    return None


def claimed_in(raw: bytes) -> list[int]:
    """Ids a line or a torn fragment claims, whether or not it parses."""
    return [n for n in (int(m) for m in _ID_IN_TEXT.findall(raw)) if 1 <= n <= MAX_ID]


def line_digest(raw: bytes) -> str:
    """Names a log line by its bytes (surrounding whitespace ignored)."""
    return hashlib.sha256(raw.strip()).hexdigest()


def derived_id(digest: str, attempt: int = 0) -> int:
    """The id a later line that reuses a taken id is read under; `attempt` steps past a taken one."""
    h = int.from_bytes(hashlib.sha256(f"{digest}:{attempt}".encode()).digest()[:8], "big")
    return DERIVED_STEP * (1 + h % _DERIVED_SPAN)
