"""From an identity provider's claims to the product's roles: pure, no Django, no network.

A role is given only by the IdP's groups claim (``OIDC_ROLE_GROUPS``: which IdP groups make a reviewer, a
stakeholder, an admin) or to every account of the IdP (``OIDC_DEFAULT_ROLES``, for IdPs that send no groups,
e.g. Google Workspace). The demo's ``synthetic`` role is never given by an IdP: it is not a person.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# The roles an IdP may give (reviewapp.core.auth.roles.ROLE_PERMISSIONS, less the synthetic demo account).
IDP_ROLES = ("reviewer", "stakeholder", "admin")


class ClaimsError(ValueError):
    """Claims the product cannot sign anyone in with; the message names the claim."""


def groups_in_claims(claims: Mapping[str, Any], *, groups_claim: str) -> frozenset[str]:
    """The IdP groups the claims name: a list of names (Okta, Entra ID, Keycloak) or one name; none if absent.

    ``groups_claim`` may be a dotted path for IdPs that nest it (Keycloak's ``realm_access.roles``).
    """
    value: Any = claims
    for part in groups_claim.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return frozenset()
        value = value[part]
    if value is None:
        return frozenset()
    if isinstance(value, str):
        return frozenset([value])
    if isinstance(value, list) and all(isinstance(group, str) for group in value):
        return frozenset(value)
    raise ClaimsError(f"claim {groups_claim!r}: expected a list of group names, got {type(value).__name__}")


def roles_from_claims(claims: Mapping[str, Any], *, groups_claim: str,
                      role_groups: Mapping[str, Iterable[str]], default_roles: Iterable[str] = ()) -> frozenset[str]:
    """The roles an account signed in with ``claims`` holds: those whose IdP groups it is in, plus the defaults.

    Group names compare exactly (Entra ID sends object ids, Okta and Keycloak names; both are case-sensitive).
    """
    groups = groups_in_claims(claims, groups_claim=groups_claim)
    roles = {role for role, names in role_groups.items() if groups & set(names)}
    roles |= set(default_roles)
    unknown = roles - set(IDP_ROLES)
    if unknown:
        raise ClaimsError(f"roles {sorted(unknown)}: an identity provider gives only {', '.join(IDP_ROLES)}")
    return frozenset(roles)


def parse_role_groups(raw: str, *, name: str = "OIDC_ROLE_GROUPS") -> dict[str, tuple[str, ...]]:
    """``reviewer=Lawyers,Paralegals;admin=Review admins`` -> {role: (group, ...)}; errors name the part.

    Roles are separated by ``;`` and groups by ``,`` (group names may hold spaces; Entra ID's are object ids).
    """
    mapping: dict[str, tuple[str, ...]] = {}
    for index, part in enumerate(p for p in raw.split(";") if p.strip()):
        role, sep, groups = part.partition("=")
        role = role.strip()
        if not sep:
            raise ClaimsError(f"{name}: part {index + 1} ({part.strip()!r}) is not role=group,group")
        if role not in IDP_ROLES:
            raise ClaimsError(f"{name}: role {role!r} is not one of {', '.join(IDP_ROLES)}")
        if role in mapping:
            raise ClaimsError(f"{name}: role {role!r} is given twice")
        names = tuple(g.strip() for g in groups.split(",") if g.strip())
        if not names:
            raise ClaimsError(f"{name}: role {role!r} names no group")
        mapping[role] = names
    return mapping


def parse_default_roles(raw: str, *, name: str = "OIDC_DEFAULT_ROLES") -> tuple[str, ...]:
    roles = tuple(r.strip() for r in raw.split(",") if r.strip())
    for role in roles:
        if role not in IDP_ROLES:
            raise ClaimsError(f"{name}: role {role!r} is not one of {', '.join(IDP_ROLES)}")
    return roles
