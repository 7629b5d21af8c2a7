"""The protocol this server speaks: its name and version (docs/protocol.md §1)."""

PROTOCOL = "MEMORY_VERBS"
PROTOCOL_VERSION = 1
