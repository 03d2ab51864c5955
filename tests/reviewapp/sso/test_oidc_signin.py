"""Sign-in through a real OpenID Connect provider on loopback (tests/reviewapp/sso/conftest.py): the code
flow, sign-out, removal and group changes at the IdP, and forged or expired ID tokens refused."""

from __future__ import annotations

import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from django.test import Client

from reviewapp.core.auth.signin import ISSUER_SESSION_KEY, SESSION_KEY
from reviewapp.core.models import SigninMethod
from reviewapp.review.agreement import exports
from reviewapp.review.judgments.models import JudgmentRevision
from reviewapp.sso.backend import OidcBackend
from reviewapp.sso.models import OidcIdentity
from tests.helpers import shown_hashes
from tests.reviewapp.review.conftest import make_pool
from tests.reviewapp.sso.idp import CLIENT_ID, sign_in

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _roles(user) -> list[str]:
    return sorted(user.groups.values_list("name", flat=True))


def _messages(response) -> str:
    return " ".join(str(m) for m in response.wsgi_request._messages)


def test_a_lawyer_signs_in_through_the_idp_grades_and_the_label_says_so(sso_on, reviewer2_user):
    sso_on.set_user("lena", groups=["Lawyers"])
    client = Client()
    login_page = client.get("/accounts/login/").content.decode()
    assert 'data-testid="sso-signin"' in login_page and "Sign in with Loopback IdP" in login_page

    walk = sign_in(client, sso_on, "lena")
    assert walk.response.status_code == 302 and walk.response["Location"] == "/"
    identity = OidcIdentity.objects.select_related("user").get(issuer=sso_on.issuer,
                                                                subject=sso_on.subjects["lena"])
    user = identity.user
    assert (user.username, user.email, _roles(user)) == ("lena@firm.test", "lena@firm.test", ["reviewer"])
    assert not user.has_usable_password() and not user.is_staff
    assert (client.session[SESSION_KEY], client.session[ISSUER_SESSION_KEY]) == (SigninMethod.OIDC, sso_on.issuer)
    assert client.get("/review/workspace/").status_code == 200

    pool = make_pool(reviewers=[user, reviewer2_user], per_item=2)
    item = pool.items.order_by("id").first()
    saved = client.post(f"/api/v1/review/items/{item.public_id}/judgment/", json.dumps(
        {"grades": {"section": 2, "passage": 1}, "complete": True, **shown_hashes(item.public_id)}),
        content_type="application/json")
    assert saved.status_code == 201, saved.content
    revision = JudgmentRevision.objects.get(judgment__reviewer=user)
    assert (revision.signin_method, revision.signin_issuer) == (SigninMethod.OIDC, sso_on.issuer)
    # Counted where labels leave: the export lines and the pool's admin page.
    lines = [json.loads(line) for line in exports.pool_jsonl(pool=pool)]
    assert [(line["signin_method"], line["signin_issuer"]) for line in lines] == [("oidc", sso_on.issuer)]
    assert exports.pool_idp_complete(pool=pool) == {sso_on.issuer: 1}


def test_sign_out_ends_the_session_here_and_at_the_idp(sso_on):
    sso_on.set_user("otto", groups=["Lawyers"])
    client = Client()
    walk = sign_in(client, sso_on, "otto")
    assert walk.response.status_code == 302
    out = client.post("/accounts/logout/")
    assert out.status_code == 302 and out["Location"].startswith(sso_on.issuer + "/end-session")
    assert client.get("/review/workspace/").status_code == 302  # signed out here
    # The browser follows to the IdP, which ends its own session and sends it back to the sign-in page.
    ended = walk.idp_session.get(out["Location"], allow_redirects=False, timeout=10)
    assert ended.status_code == 302 and ended.headers["Location"] == "http://testserver/accounts/login/"
    # The next sign-in asks the IdP for the password again (its session is gone too).
    again = sign_in(client, sso_on, "otto", password="wrong", idp_session=walk.idp_session)
    assert again.stopped_at_idp


def test_an_account_removed_at_the_idp_gets_no_session_at_its_next_sign_in(sso_on):
    sso_on.set_user("rhea", groups=["Lawyers"])
    first = Client()
    assert sign_in(first, sso_on, "rhea").response.status_code == 302
    sso_on.set_user("rhea", groups=["Lawyers"], active=False)  # the firm disables her account
    later = Client()
    walk = sign_in(later, sso_on, "rhea")
    assert walk.stopped_at_idp and later.get("/review/workspace/").status_code == 302

    # Removed from every mapped group instead: the IdP still vouches for her, the product refuses and strips
    # the role, so a password or an old token could not carry it on either.
    sso_on.set_user("rhea", groups=["Alumni"])
    walk = sign_in(Client(), sso_on, "rhea")
    assert walk.response.status_code == 302 and walk.response["Location"] == "/accounts/login/"
    assert "no group that gives a role here" in _messages(walk.response)
    user = OidcIdentity.objects.get(subject=sso_on.subjects["rhea"]).user
    assert _roles(user) == []
    assert walk.response.wsgi_request.user.is_anonymous


def test_a_group_change_at_the_idp_changes_the_role_at_the_next_sign_in(sso_on):
    sso_on.set_user("paul", groups=["Lawyers"])
    assert sign_in(Client(), sso_on, "paul").response.status_code == 302
    user = get_user_model().objects.get(oidc_identities__subject=sso_on.subjects["paul"])
    assert _roles(user) == ["reviewer"]
    sso_on.set_user("paul", groups=["Partners"])
    client = Client()
    assert sign_in(client, sso_on, "paul").response.status_code == 302
    assert _roles(user) == ["stakeholder"]
    assert client.get("/review/workspace/").status_code == 403  # a stakeholder never reaches the grading queue


def test_a_role_that_sees_model_output_is_refused_to_an_assignee(sso_on, reviewer2_user):
    sso_on.set_user("ava", groups=["Lawyers"])
    assert sign_in(Client(), sso_on, "ava").response.status_code == 302
    user = get_user_model().objects.get(oidc_identities__subject=sso_on.subjects["ava"])
    make_pool(reviewers=[user, reviewer2_user], per_item=2)
    sso_on.set_user("ava", groups=["Lawyers", "Review admins"])
    walk = sign_in(Client(), sso_on, "ava")
    assert "holds blind-review assignments" in _messages(walk.response)
    assert _roles(user) == ["reviewer"] and walk.response.wsgi_request.user.is_anonymous


def _token(idp, *, key, kid: str, **overrides) -> str:
    now = int(time.time())
    claims = {"iss": idp.issuer, "sub": "1", "aud": CLIENT_ID, "iat": now, "exp": now + 300, "nonce": "n-1"}
    claims.update(overrides)
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})


def test_forged_and_expired_id_tokens_are_refused_against_the_idps_published_keys(sso_on):
    backend = OidcBackend()
    # Signed with the IdP's own key: accepted, so the refusals below are about what they change.
    assert backend.verify_token(_token(sso_on, key=sso_on.private_key, kid=sso_on.kid), nonce="n-1")["sub"] == "1"
    forger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    cases = {
        "forged signature": (_token(sso_on, key=forger, kid=sso_on.kid), "signature does not verify"),
        "expired": (_token(sso_on, key=sso_on.private_key, kid=sso_on.kid, iat=int(time.time()) - 3600,
                           exp=int(time.time()) - 600), "expired"),
        "other audience": (_token(sso_on, key=sso_on.private_key, kid=sso_on.kid, aud="someone-else"), "(?i)audience"),
        "other issuer": (_token(sso_on, key=sso_on.private_key, kid=sso_on.kid, iss="https://evil.test"), "(?i)issuer"),
        "unknown key": (_token(sso_on, key=forger, kid="not-published"), "Could not find a valid JWKS"),
        "not a token": ("garbage", "ID token refused"),
    }
    for name, (token, reason) in cases.items():
        with pytest.raises(SuspiciousOperation, match=reason):
            backend.verify_token(token, nonce="n-1")
            pytest.fail(name)
    with pytest.raises(SuspiciousOperation, match="Nonce"):
        backend.verify_token(_token(sso_on, key=sso_on.private_key, kid=sso_on.kid), nonce="another")
