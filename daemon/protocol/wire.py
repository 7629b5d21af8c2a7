"""The MEMORY_VERBS v1 wire rules shared by every verb.

One exception type per protocol error code, raised anywhere below the edge and
encoded exactly once into the error envelope. Timestamps are always rendered
the way the reference renders them (millisecond precision, `Z`).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

# one formatter for the wire and the tables; re-exported for the verbs
from ...indexer.timestamps import iso, now_iso, utcnow  # noqa: F401

PROTOCOL = "MEMORY_VERBS"
PROTOCOL_VERSION = 1

GENERIC_PARAM_SUGGESTION = (
    "Check the tool schema — required params and types are declared there."
)
INTERNAL_SUGGESTION = (
    "This is a server-side failure, not a caller mistake. Retry once; if it "
    "persists, run `brain doctor` and check the daemon log (`brain daemon logs`)."
)

ERROR_CODES = (
    "invalid_params",
    "provenance_required",
    "not_found",
    "scope_denied",
    "unavailable",
    "budget_unsatisfiable",
    "internal",
)


class VerbError(Exception):
    """A protocol error. Subclasses fix the code; callers give message + fix."""

    code = "internal"

    def __init__(self, message: str, suggestion: str | None = None, detail: str | None = None):
        super().__init__(message)
        self.message = message
        self.suggestion = suggestion
        self.detail = detail

    def envelope(self) -> dict:
        body = {"error": self.code, "message": self.message}
        # optional keys are omitted, never null: the validator type-checks
        # every key that is present
        if self.suggestion:
            body["suggestion"] = self.suggestion
        if self.detail:
            body["detail"] = self.detail
        body["protocol_version"] = PROTOCOL_VERSION
        return body


class InvalidParams(VerbError):
    code = "invalid_params"


class ProvenanceRequired(VerbError):
    code = "provenance_required"


class NotFound(VerbError):
    code = "not_found"


class ScopeDenied(VerbError):
    code = "scope_denied"


class Unavailable(VerbError):
    code = "unavailable"


class BudgetUnsatisfiable(VerbError):
    code = "budget_unsatisfiable"


class Internal(VerbError):
    code = "internal"


def internal_envelope(exc: BaseException) -> dict:
    """The envelope for an exception no handler anticipated."""
    return Internal(str(exc) or type(exc).__name__, INTERNAL_SUGGESTION).envelope()


@dataclass(frozen=True)
class Caller:
    """Who is calling. Trust is granted only by an explicit remote=False."""

    remote: bool = True
    # namespaces delta cursors: "local" for the CLI lane, the token name for
    # HTTP callers, "remote" for everyone else
    client_id: str = "remote"
    transport: str = "inproc"
    surface: str = "full"
    # HTTP tokens may be read-only; everyone else may write
    can_write: bool = True
    # the HTTP session a call arrived on (one daemon connection each); not identity
    session: str | None = field(default=None, compare=False)

    @classmethod
    def local(cls, transport: str = "inproc") -> "Caller":
        return cls(remote=False, client_id="local", transport=transport)


LOCAL = Caller.local()
REMOTE = Caller()


def parse_iso(text: str) -> _dt.datetime:
    """Parse a timestamp this server wrote (or any ISO 8601 form) as UTC."""
    t = text.strip()
    if t.endswith("Z") or t.endswith("z"):
        t = t[:-1] + "+00:00"
    ts = _dt.datetime.fromisoformat(t)
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=_dt.timezone.utc)
    return ts.astimezone(_dt.timezone.utc)


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
