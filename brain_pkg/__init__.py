"""brain: a local-first memory server for AI agents (MEMORY_VERBS v1)."""

__version__ = "0.1.0"
