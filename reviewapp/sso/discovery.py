"""The IdP's endpoints: from settings when given one by one, else from its discovery document (cached).

The document is fetched at the first sign-in, not at start-up, so the product starts while the IdP is down;
it is kept for an hour per process. Its ``issuer`` must equal ``OIDC_ISSUER`` (OIDC Discovery 4.3): a
document naming another issuer is refused rather than trusted.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import requests
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from reviewapp.sso.config import ENDPOINTS

CACHE_SECONDS = 3600
_cache: dict[str, tuple[float, dict[str, Any]]] = {}
_lock = threading.Lock()


class DiscoveryError(RuntimeError):
    """The IdP's discovery document could not be read or does not describe ``OIDC_ISSUER``."""


def provider_metadata(issuer: str) -> dict[str, Any]:
    with _lock:
        cached = _cache.get(issuer)
        if cached and cached[0] > time.monotonic():
            return cached[1]
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    try:
        response = requests.get(url, timeout=settings.OIDC_TIMEOUT)
        response.raise_for_status()
        document = response.json()
    except (requests.RequestException, ValueError) as error:
        raise DiscoveryError(f"discovery document {url}: {error}") from None
    if not isinstance(document, dict) or document.get("issuer") != issuer:
        found = document.get("issuer") if isinstance(document, dict) else None
        raise DiscoveryError(f"discovery document {url} names issuer {found!r}, not OIDC_ISSUER={issuer!r}")
    with _lock:
        _cache[issuer] = (time.monotonic() + CACHE_SECONDS, document)
    return document


def forget_metadata() -> None:
    """Drop the cached documents (tests start a new provider on a new port)."""
    with _lock:
        _cache.clear()


def endpoint(setting: str, *, required: bool = True) -> str:
    """One endpoint: the ``OIDC_*_ENDPOINT`` setting if set, else the discovery document's entry."""
    explicit = getattr(settings, setting, "")
    if explicit:
        return explicit
    if not getattr(settings, "OIDC_ENABLED", False):
        raise ImproperlyConfigured("single sign-on is off (OIDC_ISSUER is empty)")
    value = provider_metadata(settings.OIDC_ISSUER).get(ENDPOINTS[setting], "")
    if required and not value:
        raise DiscoveryError(f"the IdP's discovery document has no {ENDPOINTS[setting]} (set {setting})")
    return str(value or "")
