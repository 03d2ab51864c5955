"""One client per provider kind. Each prepares a request, sends it ONCE, and validates the answer.

Clients never touch the database and never retry; the ledger (services.py) records
every attempt. Use ``client_for_ledger`` to get the right client for a ledger.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewapp.providers.clients.anthropic import AnthropicClient
from reviewapp.providers.clients.base import Client
from reviewapp.providers.clients.local import LocalClient
from reviewapp.providers.clients.openai_compatible import OpenAICompatibleClient
from reviewapp.providers.types import ProviderError

if TYPE_CHECKING:
    import httpx

    from reviewapp.providers.models import Ledger


def client_for(
    *, provider: str, model_id: str, base_url: str = "", concurrency: int = 4,
    transport: httpx.BaseTransport | None = None, timeout: float | None = None,
) -> Client:
    if provider == "local":
        return LocalClient(model_id=model_id)
    if provider == "openai_compatible":
        return OpenAICompatibleClient(
            model_id=model_id, base_url=base_url, concurrency=concurrency, transport=transport, timeout=timeout
        )
    if provider == "anthropic":
        return AnthropicClient(
            model_id=model_id, base_url=base_url, concurrency=concurrency, transport=transport, timeout=timeout
        )
    raise ProviderError(f"unknown provider {provider!r}; use local, openai_compatible or anthropic")


def client_for_ledger(ledger: Ledger, *, transport: httpx.BaseTransport | None = None) -> Client:
    return client_for(
        provider=ledger.provider, model_id=ledger.model_id, base_url=ledger.base_url,
        concurrency=ledger.concurrency, transport=transport,
    )
