"""What the app tells about itself: the API schema and docs are for readers of reports only (never reviewers),
the docs page loads Swagger UI from this server's static files (pinned, no CDN), every page carries a
Content-Security-Policy, and with DEBUG on a 404 page lists no URL patterns."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from tests.conftest import REPO_ROOT as REPO
from tests.trust.fixtures import client_for

pytestmark = pytest.mark.django_db


def test_reviewers_cannot_read_the_api_schema_or_docs(world):
    reviewer = client_for(world.users["reviewer"])
    for url in ("/api/v1/schema/", "/api/v1/docs/", "/api/v1/docs/?script"):
        assert reviewer.get(url).status_code == 403, url
        assert Client().get(url).status_code in (401, 403), url
    for role in ("stakeholder", "admin"):
        client = client_for(world.users[role])
        assert client.get("/api/v1/schema/").status_code == 200
        assert client.get("/api/v1/docs/").status_code == 200


def test_the_docs_page_loads_swagger_from_pinned_static_files_only(world):
    client = client_for(world.users["stakeholder"])
    html = client.get("/api/v1/docs/").content.decode()
    sources = re.findall(r'<(?:script|link)[^>]+(?:src|href)="([^"]+)"', html)
    assert sources, html[:500]
    for source in sources:
        assert source.startswith("/"), f"{source}: not from this server"
    assert not re.search(r"<script>(?!\s*</script>)", html), "an inline script on the docs page"
    pinned = json.loads((REPO / "package.json").read_text())["dependencies"]["swagger-ui-dist"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", pinned), f"swagger-ui-dist is not pinned: {pinned}"
    lock = json.loads((REPO / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/swagger-ui-dist"]["version"] == pinned
    for name in ("swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui.css"):
        assert f"/static/vendor/swagger-ui/{name}" in sources
        assert finders.find(f"vendor/swagger-ui/{name}"), name
        assert client.get(f"/static/vendor/swagger-ui/{name}").status_code == 200
    script = client.get("/api/v1/docs/?script")
    assert script.status_code == 200 and "SwaggerUIBundle" in script.content.decode()


def test_the_api_answers_a_browser_with_json_not_the_browsable_api(world):
    # A browser's Accept header once got DRF's browsable API: a second UI, unchecked by axe (no lang, an
    # unnamed menu button, low-contrast links). The API speaks JSON only; Swagger UI documents it.
    client = client_for(world.users["stakeholder"])
    accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    for url in ("/api/v1/me/", "/api/v1/benchmarks/suites/", "/api/v1/cuad/runs/"):
        response = client.get(url, HTTP_ACCEPT=accept)
        assert response.status_code == 200, url
        assert response["Content-Type"].startswith("application/json"), (url, response["Content-Type"])
        json.loads(response.content)
    assert client.get("/api/v1/me/?format=api").status_code == 404


def test_the_docs_page_names_its_language_and_title_and_loads_its_contrast_fixes_last(world):
    client = client_for(world.users["stakeholder"])
    html = client.get("/api/v1/docs/").content.decode()
    assert '<html lang="en">' in html
    assert "<title>Legal AI evaluation API · Legal AI evaluation</title>" in html
    sheets = re.findall(r'<link rel="stylesheet" href="([^"]+)"', html)
    assert sheets == ["/static/vendor/swagger-ui/swagger-ui.css", "/static/css/swagger-a11y.css"], sheets
    assert finders.find("css/swagger-a11y.css")
    # deep links put a link inside every operation's summary button (axe nested-interactive)
    script = client.get("/api/v1/docs/?script").content.decode()
    assert '"deepLinking": false' in script, script[:300]


def test_every_page_carries_a_content_security_policy_without_inline_script(world):
    pages = {"anonymous": ["/accounts/login/", "/healthz", "/no-such-page/"],
             "reviewer": ["/", "/review/workspace/", f"/review/workspace/items/{world.marker_item_id}/"],
             "stakeholder": ["/benchmarks/", "/cuad/", "/api/v1/docs/", "/api/v1/schema/"],
             "admin": ["/review/pools/", "/admin/"]}
    for role, urls in pages.items():
        client = Client() if role == "anonymous" else client_for(world.users[role])
        for url in urls:
            policy = client.get(url).get("Content-Security-Policy", "")
            directives = dict(d.strip().split(" ", 1) for d in policy.split(";") if d.strip())
            assert directives.get("script-src") == "'self'", f"{url}: {policy!r}"
            assert "unsafe-inline" not in directives["script-src"] and "unsafe-eval" not in policy
            assert directives.get("object-src") == "'none'" and directives.get("frame-ancestors") == "'none'"


def test_no_template_has_an_inline_script_or_event_handler():
    offenders = []
    for path in (REPO / "templates").rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"<script\b([^>]*)>", text):
            attributes = match.group(1)
            if "src=" not in attributes and "application/json" not in attributes:
                offenders.append(f"{path.relative_to(REPO)}: inline <script{attributes}>")
        for match in re.finditer(r"""\son[a-z]+\s*=\s*["']""", text):
            offenders.append(f"{path.relative_to(REPO)}: event handler attribute {match.group().strip()}")
        if "javascript:" in text:
            offenders.append(f"{path.relative_to(REPO)}: javascript: URL")
    assert offenders == []


def test_a_404_with_debug_on_lists_no_url_patterns(settings, world):
    settings.DEBUG = True
    for client, url in ((Client(), "/no-such-page/"), (Client(), "/api/v1/no-such-endpoint/"),
                        (client_for(world.users["reviewer"]), "/review/workspace/items/not-mine/")):
        response = client.get(url)
        text = response.content.decode()
        assert response.status_code == 404
        for leak in ("URLconf", "admin/", "api/review/", "benchmarks/", "Django tried these URL patterns"):
            assert leak not in text, f"{url}: {leak!r} in the 404 page"
    # Staff developers keep Django's debug page.
    page = client_for(world.users["admin"]).get("/no-such-page/").content.decode()
    assert "URLconf" in page
