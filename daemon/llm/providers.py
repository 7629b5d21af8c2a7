"""Chat providers: Anthropic Messages and any OpenAI-compatible endpoint.

Each provider wraps the vendor's official Python SDK, imported on the first
call (the SDKs cost ~0.5-1 s to import and are an optional extra). A provider
does one thing — send a system + user prompt, return the text and the usage
the server reported — and turns every SDK failure into an `LLMCallError` with
a small closed set of kinds, so nothing above it ever sees raw provider text.

Only entry points build providers (`provider_from_config`), because only they
may read the environment for API keys.
"""

from __future__ import annotations

import importlib
import importlib.util
import ipaddress
import logging
import threading
from dataclasses import dataclass
from urllib.parse import urlparse

log = logging.getLogger("brain.llm")

ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com"
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4.1-mini"}
DEFAULT_TIMEOUT_S = 60.0
# one retry rides out a blip; more would multiply a slow verb's worst case
DEFAULT_MAX_RETRIES = 1
# local servers ignore the key, but the OpenAI SDK refuses to start without one
LOCAL_PLACEHOLDER_KEY = "not-needed"

CALL_FAILURE_KINDS = ("timeout", "rate_limited", "network", "provider_error")

SETUP_SUGGESTION = (
    "Configure an LLM for synthesize: run `brain config set llm.provider anthropic` and set "
    "ANTHROPIC_API_KEY in the environment the daemon starts from; or, for OpenAI, "
    "`brain config set llm.provider openai` with OPENAI_API_KEY; or, for a local model "
    "(Ollama, LM Studio, vLLM), `brain config set llm.provider openai`, "
    "`brain config set llm.base_url http://localhost:11434/v1` and "
    "`brain config set llm.model llama3.1`. Then restart the daemon (`brain daemon stop`; "
    "the next command starts it) and retry. Install the SDKs with `pip install anthropic openai` (from a checkout: `pip install -e '.[llm]'`)."
)


@dataclass(frozen=True)
class Completion:
    """What one model call produced: its text and the usage the server reported."""

    text: str
    model: str
    input_tokens: int | None
    output_tokens: int | None
    refused: bool = False


class LLMCallError(Exception):
    """A model call that produced no usable completion.

    kind is one of CALL_FAILURE_KINDS or "model_not_usable" (then `reason`
    says why: auth_rejected, model_not_found, request_rejected). The message is
    for logs only; it may hold provider text and never goes on the wire.
    """

    def __init__(self, kind: str, reason: str = "", log_text: str = "", status: int | None = None):
        super().__init__(log_text or kind)
        self.kind = kind
        self.reason = reason
        self.status = status


@dataclass(frozen=True)
class NotConfigured:
    """No usable provider: the code names what is missing, the detail says it for people."""

    code: str
    detail: str
    configured = False

    def describe(self) -> str:
        return f"not configured ({self.code}): {self.detail}"


def is_local_url(base_url: str | None) -> bool:
    """True for a server on this machine or the private network (no per-token bill)."""
    if not base_url:
        return False
    host = (urlparse(base_url).hostname or "").lower()
    if host in ("localhost", "host.docker.internal") or host.endswith(".local") or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local


def _int_or_none(v) -> int | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return int(v)


class Provider:
    """A configured chat endpoint. Subclasses implement `_create` and `_list_models`."""

    configured = True
    name = "?"
    sdk_module = "?"

    def __init__(self, *, model: str, api_key: str, base_url: str, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_retries: int = DEFAULT_MAX_RETRIES):
        self.model = model
        self.base_url = base_url
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.local = is_local_url(base_url)
        self._api_key = api_key
        self._client = None
        self._client_lock = threading.Lock()

    def __repr__(self) -> str:  # never show the key
        return f"<{type(self).__name__} model={self.model!r} base_url={self.base_url!r}>"

    def describe(self) -> str:
        where = "local server" if self.local else "remote API"
        return f"{self.name} · {self.model} · {self.base_url} ({where})"

    def _sdk(self):
        try:
            return importlib.import_module(self.sdk_module)
        except ImportError as e:
            raise LLMCallError("provider_error", log_text=f"the {self.sdk_module} SDK is not installed: {e}") from e

    def client(self):
        """The SDK client, built once; the SDK clients are safe to share across threads."""
        with self._client_lock:
            if self._client is None:
                self._client = self._make_client(self._sdk())
            return self._client

    def complete(self, system: str, user: str, max_tokens: int) -> Completion:
        """One call; raises LLMCallError for every way it can fail to produce text."""
        sdk = self._sdk()
        try:
            return self._create(self.client(), system, user, max_tokens)
        except LLMCallError:
            raise
        except Exception as e:
            raise classify_sdk_error(sdk, e) from e

    def list_models(self, timeout_s: float = 5.0) -> list[str]:
        """Model ids the endpoint serves (free: no tokens); raises LLMCallError."""
        sdk = self._sdk()
        try:
            return self._list_models(self.client(), timeout_s)
        except Exception as e:
            raise classify_sdk_error(sdk, e) from e

    # -- for subclasses -----------------------------------------------------

    def _make_client(self, sdk):
        raise NotImplementedError

    def _create(self, client, system: str, user: str, max_tokens: int) -> Completion:
        raise NotImplementedError

    def _list_models(self, client, timeout_s: float) -> list[str]:
        raise NotImplementedError


class AnthropicProvider(Provider):
    """The Anthropic Messages API (`POST /v1/messages`)."""

    name = "anthropic"
    sdk_module = "anthropic"

    def _make_client(self, sdk):
        return sdk.Anthropic(api_key=self._api_key, base_url=self.base_url, timeout=self.timeout_s,
                             max_retries=self.max_retries)

    def _create(self, client, system, user, max_tokens):
        resp = client.messages.create(
            model=self.model, max_tokens=max_tokens, system=system,
            messages=[{"role": "user", "content": user}],
        )
        text = "".join(getattr(b, "text", "") or "" for b in (resp.content or []) if getattr(b, "type", None) == "text")
        usage = getattr(resp, "usage", None)
        tokens_in = tokens_out = None
        if usage is not None:
            tokens_in = _int_or_none(getattr(usage, "input_tokens", None))
            # cached prompt tokens are reported apart from input_tokens; they were still read
            for extra in ("cache_creation_input_tokens", "cache_read_input_tokens"):
                n = _int_or_none(getattr(usage, extra, None))
                if n and tokens_in is not None:
                    tokens_in += n
            tokens_out = _int_or_none(getattr(usage, "output_tokens", None))
        return Completion(text=text, model=getattr(resp, "model", None) or self.model,
                          input_tokens=tokens_in, output_tokens=tokens_out,
                          refused=getattr(resp, "stop_reason", None) == "refusal")

    def _list_models(self, client, timeout_s):
        page = client.with_options(max_retries=0, timeout=timeout_s).models.list(limit=100)
        return [m.id for m in page.data]


class OpenAICompatibleProvider(Provider):
    """OpenAI chat completions (`POST /chat/completions`): OpenAI, Ollama, LM Studio, vLLM, ..."""

    name = "openai"
    sdk_module = "openai"

    def _make_client(self, sdk):
        return sdk.OpenAI(api_key=self._api_key, base_url=self.base_url, timeout=self.timeout_s,
                          max_retries=self.max_retries)

    def _create(self, client, system, user, max_tokens):
        kwargs = {"model": self.model,
                  "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
        # OpenAI's newer models reject max_tokens; local servers often know only max_tokens
        if self.base_url.rstrip("/") == OPENAI_DEFAULT_BASE_URL:
            kwargs["max_completion_tokens"] = max_tokens
        else:
            kwargs["max_tokens"] = max_tokens
        resp = client.chat.completions.create(**kwargs)
        choice = resp.choices[0] if getattr(resp, "choices", None) else None
        message = getattr(choice, "message", None)
        text = (getattr(message, "content", None) or "") if message is not None else ""
        refused = bool(getattr(message, "refusal", None)) or getattr(choice, "finish_reason", None) == "content_filter"
        usage = getattr(resp, "usage", None)
        tokens_in = _int_or_none(getattr(usage, "prompt_tokens", None)) if usage is not None else None
        tokens_out = _int_or_none(getattr(usage, "completion_tokens", None)) if usage is not None else None
        return Completion(text=text if isinstance(text, str) else "", model=getattr(resp, "model", None) or self.model,
                          input_tokens=tokens_in, output_tokens=tokens_out, refused=refused)

    def _list_models(self, client, timeout_s):
        page = client.with_options(max_retries=0, timeout=timeout_s).models.list()
        return [m.id for m in page.data]


def classify_sdk_error(sdk, exc: BaseException) -> LLMCallError:
    """Map an SDK exception (same class names in both SDKs) to a closed failure kind."""
    text = f"{type(exc).__name__}: {exc}"
    timeout_cls = getattr(sdk, "APITimeoutError", ())
    conn_cls = getattr(sdk, "APIConnectionError", ())
    status_cls = getattr(sdk, "APIStatusError", ())
    # the timeout class derives from the connection class: test it first
    if timeout_cls and isinstance(exc, timeout_cls):
        return LLMCallError("timeout", log_text=text)
    if conn_cls and isinstance(exc, conn_cls):
        return LLMCallError("network", log_text=text)
    if status_cls and isinstance(exc, status_cls):
        status = int(getattr(exc, "status_code", 0) or 0)
        if status == 429:
            return LLMCallError("rate_limited", log_text=text, status=status)
        if status == 408:
            return LLMCallError("timeout", log_text=text, status=status)
        if status in (401, 403):
            return LLMCallError("model_not_usable", "auth_rejected", text, status)
        if status == 404:
            return LLMCallError("model_not_usable", "model_not_found", text, status)
        if status in (400, 413, 422):
            return LLMCallError("model_not_usable", "request_rejected", text, status)
        return LLMCallError("provider_error", log_text=text, status=status)
    return LLMCallError("provider_error", log_text=text)


def provider_from_config(cfg: dict, environ, *, max_retries: int = DEFAULT_MAX_RETRIES):
    """Build the configured provider, or a NotConfigured saying what is missing.

    Settings: llm.provider (anthropic | openai), llm.model, llm.base_url,
    llm.timeout_s. Keys come from ANTHROPIC_API_KEY / OPENAI_API_KEY in
    `environ`; a base URL may also come from ANTHROPIC_BASE_URL /
    OPENAI_BASE_URL when llm.base_url is unset. An OpenAI-compatible server on
    this machine or the private network needs no key.
    """
    from .. import config as config_mod

    def setting(key):
        return config_mod.get(cfg or {}, key)

    provider = (setting("llm.provider") or "").strip().lower()
    if not provider:
        return NotConfigured("NO_LLM_PROVIDER", "llm.provider is not set")
    if provider not in ("anthropic", "openai"):
        return NotConfigured("NO_LLM_PROVIDER", f"llm.provider is {provider!r}; it must be anthropic or openai")
    sdk = "anthropic" if provider == "anthropic" else "openai"
    if importlib.util.find_spec(sdk) is None:
        return NotConfigured(f"LLM_SDK_MISSING:{sdk}",
                             f"the {sdk} Python package is not installed (pip install anthropic openai, or pip install -e '.[llm]' from a checkout)")
    timeout = setting("llm.timeout_s")
    try:
        timeout = float(timeout)
    except (TypeError, ValueError):
        timeout = DEFAULT_TIMEOUT_S
    if not timeout > 0:
        timeout = DEFAULT_TIMEOUT_S
    base_url = (setting("llm.base_url") or "").strip()
    model = (setting("llm.model") or "").strip()
    if provider == "anthropic":
        base_url = base_url or (environ.get("ANTHROPIC_BASE_URL") or "").strip() or ANTHROPIC_DEFAULT_BASE_URL
        key = (environ.get("ANTHROPIC_API_KEY") or "").strip()
        if not key:
            return NotConfigured("NO_ANTHROPIC_API_KEY", "llm.provider is anthropic but ANTHROPIC_API_KEY is not set")
        return AnthropicProvider(model=model or DEFAULT_MODELS["anthropic"], api_key=key, base_url=base_url,
                                 timeout_s=timeout, max_retries=max_retries)
    base_url = base_url or (environ.get("OPENAI_BASE_URL") or "").strip() or OPENAI_DEFAULT_BASE_URL
    key = (environ.get("OPENAI_API_KEY") or "").strip()
    official = base_url.rstrip("/") == OPENAI_DEFAULT_BASE_URL
    if not key:
        if official:
            return NotConfigured("NO_OPENAI_API_KEY", "llm.provider is openai but OPENAI_API_KEY is not set "
                                 "(and llm.base_url does not point at a local server)")
        key = LOCAL_PLACEHOLDER_KEY
    if not model:
        if not official:
            return NotConfigured("NO_LLM_MODEL", f"llm.base_url is {base_url} but llm.model is not set; "
                                 "name the model that server serves")
        model = DEFAULT_MODELS["openai"]
    return OpenAICompatibleProvider(model=model, api_key=key, base_url=base_url, timeout_s=timeout,
                                    max_retries=max_retries)
