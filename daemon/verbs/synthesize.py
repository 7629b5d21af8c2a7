"""synthesize: an LLM-composed answer over gathered pages and facts (docs/protocol.md §3.4).

The handler validates the arguments and the provider, then hands over to
`daemon/verbs/synthesis.py` (gathering is in `daemon/verbs/gather.py`). No provider ⇒
`unavailable` with the fix, always — even when pages would have been found:
a digest would hide the misconfiguration.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import cast

from ..protocol.caller import Caller
from ..protocol.errors import InvalidParams, Unavailable
from ..protocol.timeparse import ACCEPTED_FORMS, parse_since_strict
from ..llm.providers import Provider
from ..stores.engine import ChatModel, Engine
from . import synthesis
from .gather import Window

MAX_QUESTION_CHARS = 4000
_DATE_ONLY = re.compile(r"^\s*\d{4}-\d{2}-\d{2}\s*$")


def _window(args: dict) -> Window:
    since = parse_since_strict(args.get("since"), "since")
    until = parse_since_strict(args.get("until"), "until")
    # "until 2026-03-31" means through the end of that day
    if until is not None and _DATE_ONLY.match(args["until"]):
        until = until + _dt.timedelta(days=1) - _dt.timedelta(milliseconds=1)
    if since is not None and until is not None and since > until:
        raise InvalidParams(
            "since is after until, so the window is empty.",
            f"Pass since earlier than until, each as {ACCEPTED_FORMS}.",
        )
    return Window(since, until)


def _no_provider(llm: ChatModel | None) -> Unavailable:
    code = getattr(llm, "code", None) or "NO_LLM_PROVIDER"
    why = getattr(llm, "detail", None) or "no LLM provider is configured"
    from ..llm.providers import SETUP_SUGGESTION

    return Unavailable(
        f"synthesize needs an LLM and none is usable: {why}.",
        SETUP_SUGGESTION,
        detail=f"chat gateway unconfigured ({code})",
    )


def synthesize(engine: Engine, args: dict, caller: Caller) -> dict:
    """Answer `question` from the vault, citing gathered pages; see daemon/verbs/synthesis.py."""
    question = args["question"].strip()
    if not question:
        raise InvalidParams(
            "question is empty.",
            'Pass the question as a sentence, e.g. "What did we decide about the Acme renewal?".',
        )
    if len(question) > MAX_QUESTION_CHARS:
        raise InvalidParams(
            f"question is {len(question)} characters; at most {MAX_QUESTION_CHARS} are accepted.",
            "Ask a shorter question; put background in your notes, where synthesize gathers it from.",
        )
    window = _window(args)
    llm = engine.llm
    if llm is None or not getattr(llm, "configured", False):
        raise _no_provider(llm)
    # only a Provider is configured (a NotConfigured says why not): daemon/llm/providers.py
    return synthesis.run(engine, cast(Provider, llm), question, caller, window)
