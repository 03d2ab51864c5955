"""mozilla-django-oidc's authorization-code backend, with the checks an ID token needs here.

On top of the library: the endpoints come from discovery (``reviewapp.sso.discovery``); the ID token must be
signed by one of the IdP's published keys with the configured public-key algorithm and carry this client as
audience, ``OIDC_ISSUER`` as issuer, and an expiry not past (PyJWT, with ``OIDC_CLOCK_SKEW_SECONDS`` leeway);
accounts are found by (issuer, sub) and get their roles from the groups claim (``reviewapp.sso.services``).
Only the callback of a sign-in this server started (it carries the nonce) reaches this backend: a password
form never does, whatever its query string.
"""

from __future__ import annotations

import logging
from typing import Any

import jwt
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import SuspiciousOperation
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from reviewapp.sso.discovery import DiscoveryError, endpoint
from reviewapp.sso.services import SigninRefused, oidc_signin

logger = logging.getLogger(__name__)
REFUSAL_ATTRIBUTE = "oidc_refusal"


def _refuse(request: Any, reason: str) -> None:
    logger.warning("single sign-on refused: %s", reason)
    setattr(request, REFUSAL_ATTRIBUTE, reason)


class OidcBackend(OIDCAuthenticationBackend):
    # Django builds its backends for every sign-in, password ones too: nothing is read from settings or the
    # network until an OIDC callback arrives (the library reads everything in __init__).
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.UserModel = get_user_model()

    @property
    def OIDC_OP_TOKEN_ENDPOINT(self) -> str:
        return endpoint("OIDC_TOKEN_ENDPOINT")

    @property
    def OIDC_OP_USER_ENDPOINT(self) -> str:
        return endpoint("OIDC_USERINFO_ENDPOINT")

    @property
    def OIDC_OP_JWKS_ENDPOINT(self) -> str:
        return endpoint("OIDC_JWKS_ENDPOINT")

    @property
    def OIDC_RP_CLIENT_ID(self) -> str:
        return settings.OIDC_RP_CLIENT_ID

    @property
    def OIDC_RP_CLIENT_SECRET(self) -> str:
        return settings.OIDC_RP_CLIENT_SECRET

    @property
    def OIDC_RP_SIGN_ALGO(self) -> str:
        return settings.OIDC_RP_SIGN_ALGO

    OIDC_RP_IDP_SIGN_KEY = None  # always the IdP's published keys (JWKS), never a key pasted into settings

    def authenticate(self, request: Any, **kwargs: Any) -> Any:
        if request is None or "nonce" not in kwargs or not getattr(settings, "OIDC_ENABLED", False):
            return None
        try:
            return super().authenticate(request, **kwargs)
        except SigninRefused as error:
            _refuse(request, str(error))
        except SuspiciousOperation as error:
            _refuse(request, str(error))
        except (requests.RequestException, DiscoveryError) as error:
            _refuse(request, f"the identity provider could not be reached ({error})")
        return None

    def verify_token(self, token: str, **kwargs: Any) -> Any:
        try:
            return super().verify_token(token, **kwargs)
        except jwt.PyJWTError as error:  # a token that is not even a JWT, or a JWKS key PyJWT cannot read
            raise SuspiciousOperation(f"ID token refused: {error}") from None

    def _verify_jws(self, payload: Any, key: Any) -> Any:
        algorithm = self.OIDC_RP_SIGN_ALGO
        header = jwt.get_unverified_header(payload)
        if header.get("alg") != algorithm:
            raise SuspiciousOperation(f"ID token refused: signed with {header.get('alg')!r}, not {algorithm}")
        try:
            return jwt.decode(
                payload, key, algorithms=[algorithm], audience=self.OIDC_RP_CLIENT_ID, issuer=settings.OIDC_ISSUER,
                leeway=getattr(settings, "OIDC_CLOCK_SKEW_SECONDS", 60),
                options={"require": ["exp", "iat", "iss", "aud", "sub"]})
        except jwt.ExpiredSignatureError:
            raise SuspiciousOperation("ID token refused: it has expired") from None
        except jwt.InvalidSignatureError:
            raise SuspiciousOperation("ID token refused: its signature does not verify with the IdP's keys") from None
        except jwt.PyJWTError as error:
            raise SuspiciousOperation(f"ID token refused: {error}") from None

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        userinfo = self.get_userinfo(access_token, id_token, payload)
        if str(userinfo.get("sub")) != str(payload.get("sub")):
            # OIDC Core 5.3.2: a userinfo answer about someone else is not about this sign-in.
            raise SuspiciousOperation("the IdP's userinfo names another subject than the ID token")
        # The signed ID token wins over userinfo where both speak (Entra ID sends groups in the token only).
        return oidc_signin(claims={**userinfo, **payload}, issuer=settings.OIDC_ISSUER)

    # Permissions are the role backend's (reviewapp.core.auth.roles.RolePermissionBackend), read once per request;
    # this backend answering too would double the permission queries of every page an IdP account opens.
    def get_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        return set()

    def get_user_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        return set()

    def get_group_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        return set()

    def has_perm(self, user_obj: Any, perm: str, obj: Any = None) -> bool:
        return False

    def has_module_perms(self, user_obj: Any, app_label: str) -> bool:
        return False

    def get_user(self, user_id: Any) -> Any:
        # Django's check (inactive accounts are signed out at their next request), which the library skips.
        return ModelBackend.get_user(self, user_id)
