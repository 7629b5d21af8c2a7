"""Harness integrations: session-start hooks and their installers."""


class InstallError(RuntimeError):
    """A config file an installer must not edit blindly; the message names the fix."""
