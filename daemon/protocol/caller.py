"""Who is calling: trust lane, transport, surface and write scope (docs/protocol.md §4.8, §7, §11)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...indexer.vault.visibility import Viewer

# the MCP `_meta` key of a tools/call that carries its idempotency key (docs/protocol.md §3.2)
IDEMPOTENCY_META = "brain/idempotency_key"


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
    # a client naming no id: the delta cursor namespace of its own connection (verbs/cursors.py)
    connection: str | None = None
    # the HTTP session a call arrived on (one daemon connection each); not identity
    session: str | None = field(default=None, compare=False)
    # the call's idempotency key, as the client sent it in `_meta`: a retry
    # of a write with the same key runs once (docs/protocol.md §3.2); not identity
    idempotency_key: object = field(default=None, compare=False)

    @property
    def viewer(self) -> Viewer:
        """What this caller may read: private pages and facts only when trusted (not remote)."""
        return Viewer(sees_private=not self.remote)

    def for_call(self, meta) -> "Caller":
        """This caller, making one call whose MCP `_meta` is `meta`."""
        key = meta.get(IDEMPOTENCY_META) if isinstance(meta, dict) else None
        return self if key is None else replace(self, idempotency_key=key)

    @classmethod
    def local(cls, transport: str = "inproc") -> "Caller":
        return cls(remote=False, client_id="local", transport=transport)

