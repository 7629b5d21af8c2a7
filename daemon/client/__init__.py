"""The client side, which never runs inside the daemon: finding, starting and
stopping the daemon (`spawn`), one tool call over its socket (`calls`), the
`brain serve` stdio relay (`relay`) and a lean Streamable HTTP client for
remote brains (`remote`).

May import: the standard library (the CLI's hot path stays lean), the
protocol core's wire rules, the daemon's config and places. Never the server,
the HTTP transport, a verb or the CLI."""
