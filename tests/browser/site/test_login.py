"""Log in as each role in headless chromium and see the right home page."""

import pytest
from django.contrib.auth.models import Group

from reviewapp.core.auth.roles import ensure_role_groups
from tests.browser.conftest import login

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(
    ("role", "visible", "hidden"),
    [
        ("reviewer", "card-review", "card-reports"),
        ("stakeholder", "card-reports", "card-review"),
        ("admin", "card-admin", "card-review"),
    ],
)
def test_each_role_logs_in_and_sees_its_home_page(page, live_server, django_user_model, role, visible, hidden):
    ensure_role_groups()
    user = django_user_model.objects.create_user(
        username=f"{role}_b", password="a-long-pass-phrase", is_staff=role == "admin"
    )
    user.groups.add(Group.objects.get(name=role))
    login(page, live_server, f"{role}_b", "a-long-pass-phrase")
    page.wait_for_selector('[data-testid="roles"]')
    assert role in page.inner_text('[data-testid="roles"]')
    assert page.locator(f'[data-testid="{visible}"]').count() == 1
    assert page.locator(f'[data-testid="{hidden}"]').count() == 0
    # htmx is served from its pinned package
    assert page.evaluate("typeof window.htmx") == "object"
