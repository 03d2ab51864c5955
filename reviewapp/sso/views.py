"""Sign-in through the IdP (start, callback), and sign-out that also ends the IdP's session when it can."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import LogoutView
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, resolve_url
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from reviewapp.sso.backend import REFUSAL_ATTRIBUTE
from reviewapp.sso.discovery import DiscoveryError, endpoint

_ERROR_CODE = re.compile(r"[a-z_]{1,40}")


def _require_enabled() -> None:
    if not getattr(settings, "OIDC_ENABLED", False):
        raise Http404("single sign-on is not configured")


class OidcAuthenticateView(OIDCAuthenticationRequestView):
    """Sends the browser to the IdP with a fresh state and nonce (kept on the session)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The library reads its settings here, at URL import; this server reads them per request instead.
        super(OIDCAuthenticationRequestView, self).__init__(*args, **kwargs)

    def get(self, request: HttpRequest) -> HttpResponse:
        _require_enabled()
        try:
            self.OIDC_OP_AUTH_ENDPOINT = endpoint("OIDC_AUTHORIZATION_ENDPOINT")
        except DiscoveryError as error:
            messages.error(request, f"Single sign-on is unavailable: {error}")
            return redirect(settings.LOGIN_URL)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        return super().get(request)


class OidcCallbackView(OIDCAuthenticationCallbackView):
    """Where the IdP sends the browser back; a refusal says why on the sign-in page."""

    def get(self, request: HttpRequest) -> HttpResponse:
        _require_enabled()
        return super().get(request)

    def login_failure(self) -> HttpResponse:
        # The IdP's error code only (OAuth 2.0 codes are short words): its free-text description arrives in a URL
        # anyone can craft, and would let them write a message of their choosing onto the sign-in page.
        error = self.request.GET.get("error", "")
        code = f"the identity provider answered {error!r}" if _ERROR_CODE.fullmatch(error) else ""
        reason = getattr(self.request, REFUSAL_ATTRIBUTE, "") or code or "the sign-in did not complete"
        messages.error(self.request, f"Single sign-on refused: {reason}")
        return HttpResponseRedirect(resolve_url(settings.LOGIN_URL))


class SignOutView(LogoutView):
    """Django's sign-out; after an IdP sign-in, the browser then goes to the IdP's end-session endpoint, so the
    next "Sign in with ..." asks the IdP again rather than riding its still-open session."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        id_token = request.session.get("oidc_id_token", "")
        response = super().post(request, *args, **kwargs)
        if not id_token or not getattr(settings, "OIDC_ENABLED", False):
            return response
        try:
            end_session = endpoint("OIDC_END_SESSION_ENDPOINT", required=False)
        except DiscoveryError:
            return response
        if not end_session:
            return response
        query = urlencode({"id_token_hint": id_token, "client_id": settings.OIDC_RP_CLIENT_ID,
                           "post_logout_redirect_uri": request.build_absolute_uri(resolve_url(settings.LOGIN_URL))})
        return HttpResponseRedirect(f"{end_session}?{query}")


def sso_context(request: HttpRequest) -> dict[str, Any]:
    """Template context: whether the sign-in page offers the IdP, and under which name."""
    if not getattr(settings, "OIDC_ENABLED", False):
        return {"sso": None}
    return {"sso": {"name": settings.OIDC_PROVIDER_NAME}}
