"""Harness integrations: session-start hooks and their installers.

May import: `brain.cli.route` (how the hook's context_pack reaches the
verbs), the protocol core, the daemon's shared modules, `brain.indexer`'s
atomic writes. Never the server, HTTP, a verb, facts or conformance: a hook
is a client."""


class InstallError(RuntimeError):
    """A config file an installer must not edit blindly; the message names the fix."""
