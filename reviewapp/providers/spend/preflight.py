"""Is a provider configured on this server? Checked before a job is created and before its first request.

Only what can be known without sending anything: the provider is one we have, a model id is pinned
(for the local provider, the one model this server runs), the base URL is a well-formed http(s) URL
without credentials, and the key the provider needs is in the server's environment. Each refusal is a
``ProviderError`` whose message names what to fix, the environment variable included. Whether the key
is accepted and the model exists only the provider can say: a ledger sends its first request alone and
stops at an answer that rules out every other (see ``services.ledger_execute``).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from reviewapp.providers.clients.anthropic import key_may_go_to as anthropic_key_may_go_to
from reviewapp.providers.clients.base import check_base_url
from reviewapp.providers.clients.openai_compatible import is_openrouter, key_may_go_to
from reviewapp.providers.local.embeddings import MODEL_ID as LOCAL_MODEL_ID
from reviewapp.providers.models import Ledger
from reviewapp.providers.types import ProviderError

# Where each key and default base URL come from (reviewapp/settings.py reads them at start-up).
KEY_VARIABLES = {"openrouter": "OPENROUTER_API_KEY", "openai_compatible": "OPENAI_COMPATIBLE_API_KEY",
                 "anthropic": "ANTHROPIC_API_KEY"}
BASE_URL_VARIABLES = {"openai_compatible": "OPENAI_COMPATIBLE_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


@dataclass(frozen=True)
class ProviderSetup:
    provider: str
    model_id: str
    base_url: str  # '' for the local provider
    key_variable: str  # the environment variable the key comes from; '' when none is sent


def _missing_key(variable: str, where: str) -> ProviderError:
    return ProviderError(
        f"{variable} is not set: this server has no key for {where}. Set {variable} in the environment of the web "
        "server and of the workers, restart them, and launch again (or choose another provider). Nothing was sent."
    )


def provider_preflight(*, provider: str, model_id: str, base_url: str = "") -> ProviderSetup:
    """The provider as a ledger would use it, or ProviderError saying what is missing (nothing is sent)."""
    if provider not in Ledger.Provider.values:
        raise ProviderError(f"provider: unknown provider {provider!r}; use one of {', '.join(Ledger.Provider.values)}")
    if not model_id.strip():
        raise ProviderError(f"model id: a pinned model id is required for provider {provider}")
    if provider == "local":
        if base_url.strip():
            raise ProviderError("base URL: the local provider runs on this machine and takes no base URL; leave it "
                                "blank, or choose openai_compatible for a model server")
        if model_id != LOCAL_MODEL_ID:
            raise ProviderError(f"model id: the local provider runs {LOCAL_MODEL_ID!r} only, not {model_id!r}")
        return ProviderSetup(provider=provider, model_id=model_id, base_url="", key_variable="")
    variable = BASE_URL_VARIABLES[provider]
    configured = base_url or getattr(settings, variable)
    try:
        url = check_base_url(configured)
    except ProviderError as error:
        source = "the base URL given" if base_url else f"{variable} (the server's default base URL)"
        raise ProviderError(f"base URL: {error} (from {source})") from None
    keys = settings.PROVIDER_KEYS
    if provider == "anthropic":
        if not keys.get("anthropic"):
            raise _missing_key(KEY_VARIABLES["anthropic"], f"the Anthropic API ({url})")
        if not anthropic_key_may_go_to(url):
            raise ProviderError(f"base URL: {url} is not where ANTHROPIC_API_KEY may go (the origin of "
                                "ANTHROPIC_BASE_URL, ANTHROPIC_KEY_ORIGINS or this machine); nothing was sent")
        return ProviderSetup(provider=provider, model_id=model_id, base_url=url, key_variable="ANTHROPIC_API_KEY")
    if is_openrouter(url):
        if not keys.get("openrouter"):
            raise _missing_key(KEY_VARIABLES["openrouter"], f"OpenRouter ({url})")
        return ProviderSetup(provider=provider, model_id=model_id, base_url=url, key_variable="OPENROUTER_API_KEY")
    # Self-hosted OpenAI-compatible servers (vLLM, llama.cpp, Ollama, LM Studio) often take no key; the key
    # goes only to the origins it is meant for (OPENAI_COMPATIBLE_BASE_URL, OPENAI_COMPATIBLE_KEY_ORIGINS).
    sends_key = keys.get("openai_compatible") and key_may_go_to(url)
    variable = KEY_VARIABLES["openai_compatible"] if sends_key else ""
    return ProviderSetup(provider=provider, model_id=model_id, base_url=url, key_variable=variable)
