"""What the abuse run (bench_abuse.py) asks and how it judges what comes back.

A private page and private facts carry `MARKER`; a remote answer that holds
one of `PRIVATE_STRINGS` the request did not carry is a leak. `Tally` counts
every answer by error code and notes answers that are not one envelope.
"""

from __future__ import annotations

import collections
import json
import threading

MARKER = "PRIVMARK7Q"
# what only private data holds: the private facts' and page's text, the private page's slug
# (a string counts only when the request did not carry it: echoes are not leaks)
PRIVATE_STRINGS = (f"{MARKER} private fact", f"code word is {MARKER}", "secret/plan")


# the mixed load: every tool, private reads included (a remote caller must not see them)
MIXED = [("recall", {"limit": 20}), ("recall", {"query": "project", "limit": 5}), ("entity", {"name": "people/me"}),
         ("context_pack", {"entities": "people/me"}), ("delta", {"since": "2020-01-01"}),
         ("search", {"query": "notes"}), ("list_pages", {}), ("status", {}), ("whoami", {}),
         ("remember", {"fact": "mixed load fact", "provenance": "abuse"}), ("get_page", {"slug": "secret/plan"}),
         ("recall", {"grep": MARKER}), ("search", {"query": MARKER}), ("get_backlinks", {"slug": "people/me"})]


class Tally:
    """Everything the run counts, shared by every thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.codes: collections.Counter = collections.Counter()
        self.non_envelope: list = []
        self.markers = 0
        self.leaks: list = []
        self.relay_exits = 0
        self.calls = 0

    def answer(self, msg: dict | None, remote: bool, well_formed: bool = True, request=None) -> None:
        """Classify one answer to a tools/call."""
        with self.lock:
            self.calls += 1
            if remote and msg is not None:
                said = json.dumps(msg, ensure_ascii=False)
                asked = json.dumps(request, ensure_ascii=False)
                if any(p in said and p not in asked for p in PRIVATE_STRINGS):
                    self.markers += 1
                    self.leaks.append(said[:300])
            body = envelope_body(msg)
            if body is None:
                if well_formed:
                    self.non_envelope.append(json.dumps(msg)[:300] if msg is not None else "no answer")
                code = f"jsonrpc {msg['error']['code']}" if msg and "error" in msg else "no_answer"
                self.codes[code] += 1
            elif "error" in body:
                self.codes[body["error"]] += 1


def envelope_body(msg: dict | None) -> dict | None:
    """The JSON object in a tools/call result's single text block, else None."""
    try:
        content = msg["result"]["content"]
        if len(content) != 1 or content[0]["type"] != "text":
            return None
        body = json.loads(content[0]["text"])
        return body if isinstance(body, dict) else None
    except (KeyError, TypeError, ValueError, IndexError):
        return None
