"""What the core hands other apps about an account: typed values (its tokens, its audit trail), never rows."""

from __future__ import annotations

import dataclasses

from reviewapp.core.auth.accounts import AuditEntry, TokenSummary, reviewer_audit, reviewer_tokens
from reviewapp.core.auth.audit import audit_actor
from reviewapp.core.auth.credentials import api_token_create, api_tokens_revoke_all
from reviewapp.core.models import AccountAudit, ApiToken


def test_a_reviewers_tokens_are_listed_newest_first_without_their_digest(reviewer_user, admin_user_):
    first = api_token_create(user=reviewer_user, name="laptop").token
    second = api_token_create(user=reviewer_user, name="phone").token
    api_token_create(user=admin_user_, name="someone else's")
    listed = reviewer_tokens(user=reviewer_user)
    assert [(t.pk, t.name, t.prefix) for t in listed] == [(second.pk, "phone", second.prefix),
                                                          (first.pk, "laptop", first.prefix)]
    assert all(isinstance(t, TokenSummary) for t in listed)
    assert {field.name for field in dataclasses.fields(TokenSummary)} == {
        "pk", "prefix", "name", "created_at", "expires_at"}


def test_revoking_every_token_records_each_deletion_under_the_actor(reviewer_user, admin_user_):
    for name in ("a", "b"):
        api_token_create(user=reviewer_user, name=name)
    before = AccountAudit.objects.count()
    with audit_actor(admin_user_):
        assert api_tokens_revoke_all(user=reviewer_user) == 2
    assert not ApiToken.objects.filter(user=reviewer_user).exists()
    deleted = AccountAudit.objects.filter(action="token.delete").order_by("id")
    assert AccountAudit.objects.count() - before >= 2 and deleted.count() == 2
    assert {row.actor for row in deleted} == {admin_user_.get_username()}


def test_the_audit_trail_holds_the_accounts_changes_and_its_tokens_newest_first(reviewer_user, admin_user_):
    api_token_create(user=reviewer_user, name="laptop")
    api_token_create(user=admin_user_, name="other")
    with audit_actor(admin_user_):
        api_tokens_revoke_all(user=reviewer_user)
        api_tokens_revoke_all(user=admin_user_)
    trail = reviewer_audit(user=reviewer_user)
    assert trail and all(isinstance(entry, AuditEntry) for entry in trail)
    assert trail[0].action == "token.delete" and trail[0].actor == admin_user_.get_username()
    # Two tokens were deleted, one of each account: each trail holds its own only.
    assert AccountAudit.objects.filter(action="token.delete").count() == 2
    assert sum(entry.action == "token.delete" for entry in trail) == 1
    assert sum(entry.action == "token.delete" for entry in reviewer_audit(user=admin_user_)) == 1
    assert len(reviewer_audit(user=reviewer_user, limit=1)) == 1
