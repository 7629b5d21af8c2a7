"""The protocol core of MEMORY_VERBS v1, shared by every transport and verb:
its name and version (`version`), the error codes and their envelope
(`errors`), who is calling (`caller`), token budgets (`budget`), parameter
validation (`params`), ttl, since and timestamp parsing (`timeparse`), the tool registry (`registry`; every tool declared
once in `tools`), the protocol's limits (`limits`), the response shapes
(`shapes`), surfaces (`surfaces`), the one dispatch pipeline from a
tools/call to a verb (`dispatch`), checks on raw JSON-RPC lines
(`wire_guard`) and the `brain protocol` document (`document`).

May import: the standard library and `brain.indexer`'s small helpers; the
registry alone imports the verbs' handlers, by name, on their first call. Never a transport,
the client side or the CLI."""
