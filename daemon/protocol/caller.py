"""Who is calling: trust lane, transport, surface and write scope (docs/protocol.md §4.8, §7, §11)."""

from __future__ import annotations

from dataclasses import dataclass, field


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

