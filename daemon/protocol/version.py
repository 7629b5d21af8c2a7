"""The versions in play: the MEMORY_VERBS protocol this server speaks (docs/protocol.md §1),
and the MCP revision brain's own clients ask for when they open a session.

They are different things: `PROTOCOL_VERSION` is the integer every verb body
and error envelope carries (`protocol_version: 1`); `MCP_PROTOCOL_VERSION` is
the dated MCP revision sent as `protocolVersion` in `initialize` by the CLI's
socket client, the remote (HTTP) client and the HTTP front end's link to the
daemon.
"""

PROTOCOL = "MEMORY_VERBS"
PROTOCOL_VERSION = 1
MCP_PROTOCOL_VERSION = "2025-06-18"
