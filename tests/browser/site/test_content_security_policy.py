"""The main pages and the API docs in headless chromium, offline: no Content-Security-Policy violation and no
script error on any of them, the moved inline handlers still work, and Swagger UI renders from static files.

Every request that is not to the live server is aborted, so a page that needed a CDN would fail here.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from grading.dataset.models import Contract
from reviewapp.core.auth.roles import ensure_role_groups
from tests.browser.conftest import login
from tests.grading.console_support import load
from tests.reviewapp.review.conftest import make_items, make_pool

pytestmark = pytest.mark.browser
PASSWORD = "a-long-pass-phrase"

# Collects violations the page itself reports (the console message alone is not guaranteed to be emitted).
_LISTEN = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline') + ' ' + (e.sourceFile || ''));
});
"""


class Watch:
    """Everything a page complained about: CSP violations, console errors, uncaught errors, off-site requests."""

    def __init__(self, page, origin: str) -> None:
        self.page, self.origin = page, origin
        self.problems: list[str] = []
        self.offsite: list[str] = []
        page.add_init_script(_LISTEN)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.route("**/*", self._route)

    def _console(self, message) -> None:
        if message.type == "error" or "Content Security Policy" in message.text:
            self.problems.append(f"console {message.type}: {message.text}")

    def _route(self, route) -> None:
        if route.request.url.startswith(self.origin):
            route.continue_()
        else:  # offline: nothing may come from elsewhere
            self.offsite.append(route.request.url)
            route.abort()

    def visit(self, path: str) -> None:
        response = self.page.goto(f"{self.origin}{path}")
        assert response is not None and response.status < 400, f"{path}: {response and response.status}"
        assert "script-src 'self'" in (response.headers.get("content-security-policy") or ""), path
        self.page.wait_for_load_state("networkidle")
        self.check(path)

    def check(self, where: str) -> None:
        reported = self.page.evaluate("window.__csp || []")
        assert reported == [], f"{where}: CSP violations {reported}"
        assert self.problems == [], f"{where}: {self.problems}"
        assert self.offsite == [], f"{where}: requests off this server {self.offsite}"


def _user(django_user_model, role: str):
    ensure_role_groups()
    user = django_user_model.objects.create_user(username=f"csp_{role}", password=PASSWORD,
                                                 is_staff=role == "admin")
    user.groups.add(Group.objects.get(name=role))
    return user


@pytest.fixture
def loaded(transactional_db, tmp_path):
    return load(tmp_path)


def test_reviewer_pages_have_no_csp_violation_and_grading_still_works(page, live_server, reviewer_user,
                                                                        reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=2))
    item = pool.items.filter(assignments__reviewer=reviewer_user).first()
    watch = Watch(page, live_server.url)
    watch.visit("/accounts/login/")
    login(page, live_server, reviewer_user.username, "pw-" + reviewer_user.username)
    page.wait_for_selector('[data-testid="roles"]')
    watch.check("home")
    for path in ("/review/workspace/", f"/review/workspace/items/{item.public_id}/"):
        watch.visit(path)
    # htmx (no eval, CSRF header) and the page's own script: save a draft with the keyboard.
    page.wait_for_function("() => { const f = document.getElementById('judgment');"
                           " return !!(window.htmx && f && f['htmx-internal-data']); }")
    page.keyboard.press("2")
    page.keyboard.press("1")
    page.keyboard.press("d")
    page.wait_for_selector('[data-testid="saved"]')
    assert "Draft saved (revision 1)" in page.inner_text('[data-testid="saved"]')
    watch.check("after an htmx save")


def test_report_pages_and_api_docs_have_no_csp_violation_and_swagger_renders_offline(page, live_server,
                                                                                     django_user_model, loaded):
    _user(django_user_model, "stakeholder")
    alpha = Contract.objects.get(dataset=loaded.dataset, title="ALPHA-DISTRIBUTOR AGREEMENT")
    watch = Watch(page, live_server.url)
    login(page, live_server, "csp_stakeholder", PASSWORD)
    page.wait_for_selector('[data-testid="roles"]')
    for path in ("/", "/benchmarks/", "/cuad/", "/cuad/dataset/", f"/cuad/scorecard/?run={loaded.noisy.pk}",
                 "/cuad/scorecard/playground/", f"/cuad/scorecard/explorer/?run={loaded.noisy.pk}&contract={alpha.pk}"):
        watch.visit(path)
    # The explorer's selects submit on change (formerly an inline onchange, which the policy forbids).
    page.select_option('[data-testid="type-select"]', "Governing Law")
    page.wait_for_url("**type=Governing+Law**")
    watch.check("explorer after changing the clause type")

    watch.visit("/api/v1/docs/")
    page.wait_for_selector(".swagger-ui .info .title")
    assert "Legal AI evaluation API" in page.inner_text(".swagger-ui .info .title")
    page.wait_for_selector(".swagger-ui .opblock")
    assert page.locator(".swagger-ui .opblock").count() > 10
    watch.check("/api/v1/docs/ rendered")


def test_admin_pages_have_no_csp_violation(page, live_server, django_user_model):
    _user(django_user_model, "admin")
    watch = Watch(page, live_server.url)
    login(page, live_server, "csp_admin", PASSWORD)
    page.wait_for_selector('[data-testid="roles"]')
    for path in ("/review/pools/", "/review/pools/new/", "/cuad/runs/", "/admin/", "/admin/reviewapp/reviewpool/"):
        watch.visit(path)
