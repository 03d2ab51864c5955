"""Each user's keyboard setting for the review pages (WCAG 2.1.4: single-key shortcuts can be turned off or
made to need a modifier), kept with the account so it follows the user from browser to browser."""

from __future__ import annotations

import pytest

from reviewapp.core.auth.accounts import AccountError, user_shortcuts_get, user_shortcuts_set
from tests.factories import client_for
from tests.reviewapp.review.conftest import make_items, make_pool

pytestmark = pytest.mark.django_db


def test_it_defaults_to_single_keys_and_remembers_a_choice(reviewer_user, reviewer2_user):
    assert user_shortcuts_get(user=reviewer_user) == "single"
    user_shortcuts_set(user=reviewer_user, shortcuts="off")
    assert user_shortcuts_get(user=reviewer_user) == "off"
    assert user_shortcuts_get(user=reviewer2_user) == "single"  # one user's setting is theirs alone


def test_it_refuses_a_setting_that_is_not_one_of_the_choices(reviewer_user):
    with pytest.raises(AccountError, match="shortcuts"):
        user_shortcuts_set(user=reviewer_user, shortcuts="sometimes")


def test_the_account_page_saves_the_setting_for_the_signed_in_user_only(reviewer_user):
    client = client_for(reviewer_user)
    page = client.get("/accounts/keyboard/")
    assert page.status_code == 200 and 'value="single" data-testid="shortcuts-single" checked' in page.content.decode()
    assert client.post("/accounts/keyboard/", {"shortcuts": "modifier"}).status_code == 302
    assert user_shortcuts_get(user=reviewer_user) == "modifier"
    assert client.post("/accounts/keyboard/", {"shortcuts": "never"}).status_code == 400
    assert user_shortcuts_get(user=reviewer_user) == "modifier"


def test_the_item_page_carries_the_reviewers_setting_to_its_script(reviewer_user, reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=1))
    item_id = pool.items.first().public_id
    client = client_for(reviewer_user)
    assert 'data-shortcuts="single"' in client.get(f"/review/workspace/items/{item_id}/").content.decode()
    user_shortcuts_set(user=reviewer_user, shortcuts="off")
    html = client.get(f"/review/workspace/items/{item_id}/").content.decode()
    assert 'data-shortcuts="off"' in html and "Single-key shortcuts are off" in html
