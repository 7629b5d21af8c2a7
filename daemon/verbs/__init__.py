"""The verbs: plain functions over an Engine that return plain dicts."""
