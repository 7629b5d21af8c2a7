"""Idempotency keys for the writes a host sends through a relay (docs/protocol.md §3.2).

A relay that loses a call (the daemon stopped while answering it, the
remote could not be reached) answers the host "retry this call", yet the
call may have run: the fact can be in the log already. So every `remember`
the relay forwards carries a key in its `_meta`, and when the host sends a
call identical to one that got no answer, the relay gives the retry that
call's key. The daemon keeps each key with the fact it wrote, and answers
a repeated key with the first answer instead of writing again.

Only a retry of a call that got no answer reuses a key: the same sentence
sent twice on purpose stays two calls, as the protocol says for facts
without an entity.
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
from collections import OrderedDict

from ..protocol.caller import IDEMPOTENCY_META

# the writes that need a key: put_page and forget already run twice harmlessly
KEYED_TOOLS = ("remember",)
# calls without an answer remembered for their retries, oldest forgotten first
MAX_LOST = 256
# calls awaiting an answer (a cancelled one may never get one), oldest forgotten first
MAX_IN_FLIGHT = 4096


def _fingerprint(params: dict) -> str:
    return json.dumps([params.get("name"), params.get("arguments")], sort_keys=True, ensure_ascii=False)


def wants_key(msg) -> bool:
    """Whether `msg` is a tools/call of a keyed tool that carries no key of its own."""
    if not isinstance(msg, dict) or msg.get("method") != "tools/call":
        return False
    params = msg.get("params")
    if not isinstance(params, dict) or params.get("name") not in KEYED_TOOLS:
        return False
    meta = params.get("_meta")
    return not (isinstance(meta, dict) and IDEMPOTENCY_META in meta)


def fresh_key() -> str:
    """A key no other call, client or device will ever send."""
    return secrets.token_hex(16)


class CallKeys:
    """The keys of one relay's calls: given on the way out, reused for a retry."""

    def __init__(self):
        self._prefix = secrets.token_hex(8)
        self._count = itertools.count(1)
        self._lock = threading.Lock()
        self._in_flight: dict[str, tuple[str, str]] = {}  # request id -> (fingerprint, key)
        self._lost: OrderedDict[str, list[str]] = OrderedDict()  # fingerprint -> keys of unanswered calls

    @staticmethod
    def _rid(rid) -> str:
        return json.dumps(rid)

    def stamp(self, msg: dict) -> bool:
        """Give a keyed tools/call its key (a lost call's, when this is its retry); False if none is needed."""
        if not wants_key(msg) or msg.get("id") is None:
            return False
        params = msg["params"]
        fp = _fingerprint(params)
        with self._lock:
            keys = self._lost.get(fp)
            if keys:
                key = keys.pop(0)
                if not keys:
                    del self._lost[fp]
            else:
                key = f"{self._prefix}-{next(self._count)}"
            self._in_flight[self._rid(msg["id"])] = (fp, key)
            while len(self._in_flight) > MAX_IN_FLIGHT:
                del self._in_flight[next(iter(self._in_flight))]
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        params["_meta"] = {**meta, IDEMPOTENCY_META: key}
        return True

    def answered(self, rid) -> None:
        with self._lock:
            self._in_flight.pop(self._rid(rid), None)

    def unanswered(self, rid) -> None:
        """The call got no answer and may have run: keep its key for a retry."""
        with self._lock:
            got = self._in_flight.pop(self._rid(rid), None)
            if got is None:
                return
            fp, key = got
            self._lost.setdefault(fp, []).append(key)
            self._lost.move_to_end(fp)
            while len(self._lost) > MAX_LOST:
                self._lost.popitem(last=False)
