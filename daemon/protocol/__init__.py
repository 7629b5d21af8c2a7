"""The protocol core of MEMORY_VERBS v1, shared by every transport and verb:
envelopes and errors (`wire`), parameter validation (`params`), ttl and since
parsing (`timeparse`), what each tool advertises (`tools`), the response
shapes (`shapes`), surfaces (`surfaces`), the one dispatch pipeline from a
tools/call to a verb (`dispatch`), checks on raw JSON-RPC lines
(`wire_guard`) and the `brain protocol` document (`document`).

May import: the standard library and `brain.indexer`'s small helpers;
`dispatch` alone resolves the verbs' handlers by name. Never a transport,
the client side or the CLI."""
