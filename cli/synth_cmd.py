"""`brain synthesize "question"` and the `llm` doctor check.

synthesize is slow and costs money, so it lives on the typer path (not the
lean one): a second of start-up is nothing next to a model call.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Optional

from . import route
from .doctor import check


def render(body: dict) -> None:
    """The answer, then its sources, gaps, status and cost, for a person."""
    print(body.get("answer", "").strip())
    sources = body.get("sources") or []
    print()
    print(f"sources ({len(sources)}):" if sources else "sources: none cited")
    for s in sources:
        print(f"  [[{s}]]")
    gaps = body.get("gaps") or []
    if gaps:
        print("gaps:")
        for g in gaps:
            print(f"  - {g}")
    status = body.get("synthesis_status")
    if status and status != "ok":
        print(f"status: {status}" + (f"  ({'; '.join(body.get('warnings') or [])})" if body.get("warnings") else ""))
    print(f"gathered: {body.get('pages_gathered', 0)} pages, {body.get('facts_gathered', 0)} facts")
    print(f"cost: {cost_line(body.get('cost') or {})}")


def cost_line(cost: dict) -> str:
    tin, tout, usd = cost.get("input_tokens"), cost.get("output_tokens"), cost.get("usd_estimate")
    tokens = (f"{tin:,} in / {tout:,} out tokens" if isinstance(tin, int) and isinstance(tout, int)
              else "tokens not reported")
    money = "usd unknown (model not in the price table)" if usd is None else f"~${usd:.4f}"
    return f"{cost.get('model', '?')} · {tokens} · {money}"


def register(app) -> None:
    import typer

    @app.command("synthesize")
    def synthesize_cmd(
        question: str = typer.Argument(..., metavar="QUESTION", help="The question, in quotes."),
        since: Optional[str] = typer.Option(None, "--since", help="Only pages/facts dated at or after this ISO date."),
        until: Optional[str] = typer.Option(None, "--until", help="Only pages/facts dated at or before this ISO date."),
        json_out: bool = typer.Option(False, "--json", help="print the exact response envelope"),
        no_daemon: bool = typer.Option(False, "--no-daemon", help="run in this process instead of the daemon"),
    ):
        """[SLOW, COSTS MONEY] Answer a question from your notes with an LLM, citing the pages used.

        Needs an LLM: `brain config set llm.provider anthropic` with ANTHROPIC_API_KEY set, or an
        OpenAI-compatible server (`llm.provider openai`, `llm.base_url`, `llm.model`).
        """
        from . import render as verb_render

        args = {"question": question}
        if since:
            args["since"] = since
        if until:
            args["until"] = until
        try:
            body, is_error = route.route_call("synthesize", args, no_daemon=no_daemon)
        except Exception as e:  # no vault, daemon broken: say so plainly
            print(f"error: {e}", file=sys.stderr)
            raise typer.Exit(1)
        if json_out:
            print(json.dumps(body, indent=2, ensure_ascii=False))
        elif is_error:
            verb_render.error(body)
        else:
            render(body)
        raise typer.Exit(1 if is_error else 0)


# what to do when llm.provider is set but something it needs is missing
_LLM_FIXES = {
    "NO_ANTHROPIC_API_KEY": "export ANTHROPIC_API_KEY in the shell the daemon starts from, then `brain daemon stop` "
                            "(the next command starts it with the key)",
    "NO_OPENAI_API_KEY": "export OPENAI_API_KEY (any value for a local server) in the shell the daemon starts "
                         "from, then `brain daemon stop` (the next command starts it with the key)",
    "NO_LLM_MODEL": "`brain config set llm.model NAME` with a model that server serves",
    "LLM_SDK_MISSING": "`pip install -e '.[llm]'` in the brain folder installs the provider SDKs",
}


@check("llm")
def llm_check(ctx):
    """Which LLM provider synthesize would use, and whether it answers (a free model listing)."""
    from ..daemon.llm.providers import LLMCallError, provider_from_config

    provider = provider_from_config(ctx.cfg, os.environ, max_retries=0)
    if not provider.configured:
        fix = _LLM_FIXES.get(provider.code.split(":")[0])
        if fix is None or not (ctx.cfg.get("llm.provider") or "").strip():
            yield ("warn", "llm provider",
                   f"none ({provider.code}: {provider.detail}); synthesize answers `unavailable`, every other "
                   "verb works. Fix: `brain config set llm.provider anthropic` and set ANTHROPIC_API_KEY, or "
                   "point llm.provider openai + llm.base_url + llm.model at a local server")
        else:  # a provider was chosen but something it needs is missing: name that one fix
            yield ("warn", "llm provider", f"{provider.detail} ({provider.code}); synthesize answers "
                                           f"`unavailable`, every other verb works. Fix: {fix}")
        return
    yield ("ok", "llm provider", provider.describe())
    try:
        models = provider.list_models(timeout_s=min(5.0, provider.timeout_s))
    except LLMCallError as e:
        why = e.reason if e.kind == "model_not_usable" else e.kind
        yield ("fail", "llm live", f"{provider.base_url} did not list its models ({why}). Fix: check "
               "llm.base_url, the API key and the network; synthesize falls back to quoting pages meanwhile")
        return
    listed = any(m == provider.model or m.startswith(provider.model + "-") for m in models)
    if listed:
        yield ("ok", "llm live", f"reachable; {provider.model} is served ({len(models)} models listed)")
    else:
        yield ("warn", "llm live", f"reachable, but {provider.model} is not among its {len(models)} models. "
               "Fix: `brain config set llm.model NAME` with one the server lists")
    yield ("ok", "llm environment",
           "checked with this shell's environment; a running daemon uses the one it started with "
           "(`brain daemon stop` to pick up a new key)")
