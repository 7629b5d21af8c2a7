"""The client side, which never runs inside the daemon: asking after the
daemon (`probe`: liveness, which folder it serves, status), starting it or
connecting to it (`spawn`), stopping it (`stop`), one tool call over its
socket (`calls`), the `brain serve` stdio relay (`relay`) and a lean
Streamable HTTP client for remote brains (`remote`).

May import: the standard library (the CLI's hot path stays lean), the
protocol core's wire rules, the daemon's shared modules (config, places,
rendezvous, vault_lock). Never the server, the HTTP transport, a verb or the
CLI."""
