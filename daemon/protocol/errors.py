"""The protocol's errors (docs/protocol.md §1.3, §1.5).

One exception type per protocol error code, raised anywhere below the edge and
encoded exactly once into the error envelope.
"""

from __future__ import annotations

from .version import PROTOCOL_VERSION

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
        body: dict[str, object] = {"error": self.code, "message": self.message}
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
