"""No path of the server's machine in an answer to a remote caller.

A remote caller may be anyone the owner gave a token to; the vault's
absolute path, the socket's or a state file's tells them the user's name and
how the machine is laid out. Errors are written for the owner, with paths in
them and in their fixes; this takes the paths out of an error envelope on
its way to a remote caller (the local CLI keeps them). docs/protocol.md §4.8.
"""

from __future__ import annotations

import re

SHOWN = "<path on the server>"

# an absolute path of two or more parts ("/srv/notes/vault", not an endpoint like "/mcp" nor "and/or"),
# not the path of a URL ("https://host/a/b": its slashes follow ':' or '/')
_ABSOLUTE = re.compile(r"(?<![\w:/.~\-])/(?:[^\s/'\"`]+/)+[^\s'\"`]*")
_FIELDS = ("message", "suggestion", "detail")


def without_paths(text: str) -> str:
    def shown(m: re.Match) -> str:
        path = m.group(0)
        kept = path.rstrip(".,;:)]}!?")   # the sentence's own punctuation stays
        return SHOWN + path[len(kept):]

    return _ABSOLUTE.sub(shown, text)


def for_remote(body: dict) -> dict:
    """An error envelope with every server path in its text replaced (other answers as they are)."""
    if not isinstance(body, dict) or "error" not in body:
        return body
    out = dict(body)
    for key in _FIELDS:
        if isinstance(out.get(key), str):
            out[key] = without_paths(out[key])
    return out
