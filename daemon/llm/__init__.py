"""LLM providers for synthesize: the only code in brain that calls a model.

`providers.provider_from_config(cfg, environ)` is called by entry points (the
daemon, the in-process CLI) and its result is handed to the engine's
constructor (`VaultEngine(..., llm=...)`), which holds it as `engine.llm`. The
official SDKs (`anthropic`, `openai`) are optional and imported on first use,
so nothing here costs an import until a question is actually asked.

May import: the daemon's config. Never a verb, a transport, the client side
or the CLI: synthesize calls in, nothing here calls out.
"""

from .providers import Completion, LLMCallError, NotConfigured, Provider, provider_from_config

__all__ = ["Completion", "LLMCallError", "NotConfigured", "Provider", "provider_from_config"]
