"""Signing an account in from verified claims: find it by (issuer, sub), create it once, set its roles.

Every sign-in sets the account's roles from the IdP's groups claim at that moment, so a group change at the
IdP changes the role at the next sign-in, and an account the IdP no longer places in any mapped group loses
its roles and is refused. The rules of the product still hold over the IdP's: a role that sees model output
is refused to an account holding blind-review assignments (the admin unassigns them first), and an account an
admin deactivated here stays out whatever the IdP says.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone

from reviewapp.core.auth.audit import audit_record
from reviewapp.core.auth.roles import ensure_role_groups, open_review_assignments
from reviewapp.core.models import SigninMethod
from reviewapp.sso.claims import IDP_ROLES, ClaimsError, groups_in_claims, roles_from_claims
from reviewapp.sso.models import OidcIdentity

MODEL_OUTPUT_ROLES = frozenset({"stakeholder", "admin"})
_USERNAME_UNSAFE = re.compile(r"[^\w.@+-]")


class SigninRefused(Exception):
    """The IdP vouched for the person, but the product will not sign them in; the message says why."""


def _username_for(claims: Mapping[str, Any], *, issuer: str, subject: str) -> str:
    User = get_user_model()
    base = str(claims.get("preferred_username") or claims.get("email") or f"sso-{subject}")
    base = _USERNAME_UNSAFE.sub("-", base)[:150].strip("-") or "sso-user"
    if not User._default_manager.filter(username__iexact=base).exists():
        return base
    # A local account holds the name: the IdP's person gets their own account, never that one.
    suffix = hashlib.sha256(f"{issuer}\n{subject}".encode()).hexdigest()[:8]
    return f"{base[:140]}-{suffix}"


def _role_names(user: Any) -> set[str]:
    return set(user.groups.filter(name__in=IDP_ROLES).values_list("name", flat=True))


def _roles_set(*, user: Any, roles: frozenset[str], issuer: str) -> None:
    current = _role_names(user)
    if current == set(roles):
        return
    ensure_role_groups()
    add = Group.objects.filter(name__in=roles - current)
    remove = Group.objects.filter(name__in=current - roles)
    user.groups.remove(*remove)
    user.groups.add(*add)
    audit_record(action="user.roles.idp", target_type="user", target_id=user.pk, target=user.get_username(),
                 detail={"issuer": issuer, "before": sorted(current), "after": sorted(roles)})


def _refuse_model_output_to_assignee(user: Any, roles: frozenset[str]) -> None:
    gained = (roles & MODEL_OUTPUT_ROLES) - _role_names(user)
    if gained and open_review_assignments(user):
        raise SigninRefused(
            f"the identity provider now gives {user.get_username()!r} the {', '.join(sorted(gained))} role, which "
            "sees model output, but the account holds blind-review assignments; an admin unassigns them on "
            "/review/admin/reviewers/ first (or the IdP groups are changed back)")


def oidc_signin(*, claims: Mapping[str, Any], issuer: str) -> Any:
    """The account the verified ``claims`` sign in (created at the first sign-in), its roles set from them.

    Raises ``SigninRefused`` when the product will not let them in; the roles are taken away before a refusal
    for having none, so a person the IdP removed from every group keeps none here either.
    """
    subject = str(claims.get("sub") or "")
    if not subject:
        raise SigninRefused("the ID token has no subject (sub)")
    domain = getattr(settings, "OIDC_HOSTED_DOMAIN", "")
    if domain and claims.get("hd") != domain:
        raise SigninRefused(f"the account is not in the organisation's domain {domain!r} (hd claim)")
    try:
        roles = roles_from_claims(claims, groups_claim=settings.OIDC_GROUPS_CLAIM,
                                  role_groups=settings.OIDC_ROLE_GROUPS, default_roles=settings.OIDC_DEFAULT_ROLES)
        groups = sorted(groups_in_claims(claims, groups_claim=settings.OIDC_GROUPS_CLAIM))
    except ClaimsError as error:
        raise SigninRefused(str(error)) from None
    identity = OidcIdentity.objects.select_related("user").filter(issuer=issuer, subject=subject).first()
    if not roles:
        if identity is not None:
            with transaction.atomic():
                _roles_set(user=identity.user, roles=frozenset(), issuer=issuer)
                OidcIdentity.objects.filter(pk=identity.pk).update(groups=groups)
        raise SigninRefused("the identity provider places this account in no group that gives a role here")
    with transaction.atomic():
        if identity is None:
            User = get_user_model()
            user = User(username=_username_for(claims, issuer=issuer, subject=subject))
            user.set_unusable_password()  # signs in through the IdP only
            identity = OidcIdentity(user=user, issuer=issuer, subject=subject)
        user = identity.user
        if user.pk is not None and not user.is_active:
            raise SigninRefused(f"{user.get_username()!r} was deactivated here by an admin")
        if user.pk is not None:
            _refuse_model_output_to_assignee(user, roles)
        changed = False
        for field, claim in (("email", "email"), ("first_name", "given_name"), ("last_name", "family_name")):
            value = str(claims.get(claim) or "")[:254 if field == "email" else 150]
            if value and getattr(user, field) != value:
                setattr(user, field, value)
                changed = True
        if user.pk is None or changed:
            user.save()
        identity.user = user
        identity.last_signin_at = timezone.now()
        identity.groups = groups
        identity.save()
        _roles_set(user=user, roles=roles, issuer=issuer)
    # Read by reviewapp.core.auth.signin when the session starts: every revision saved in it says "oidc" and the
    # issuer, so pages and exports can count the judgments made by people the firm's IdP vouched for.
    user.signin_method_override = SigninMethod.OIDC  # type: ignore[attr-defined]  # transient, not a field
    user.signin_issuer = issuer  # type: ignore[attr-defined]  # transient, not a field
    return user
