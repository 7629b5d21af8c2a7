"""Harness integrations: session-start hooks and their installers."""
