"""The MEMORY_VERBS v1 conformance kit: the runner that certifies any memory
server over stdio or HTTP (`runner`), the judge of one case's answer
(`expect`) and the case file (`cases.json`).

May import: the MCP SDK's client, the protocol core's definitions and
shapes. Never the server, a verb or the CLI."""
