"""CUAD console wiring: every page and API refuses reviewers and anonymous visitors, and exports JSON and CSV."""

from __future__ import annotations

import csv
import io
import json

import pytest

from grading.runs.models import ConsoleJob, ExtractionRun

PAGES = ["/cuad/", "/cuad/dataset/", "/cuad/runs/", "/cuad/scorecard/", "/cuad/explorer/", "/cuad/playground/"]
APIS = [
    "/api/v1/cuad/dataset/",
    "/api/v1/cuad/runs/",
    "/api/v1/cuad/scorecard/",
    "/api/v1/cuad/explorer/",
    "/api/v1/cuad/playground/?a=x&b=x",
]


# ---------------------------------------------------------------------------
# Permissions


def test_reviewers_get_403_on_every_console_page_and_api(loaded, reviewer_client):
    job = ConsoleJob.objects.create(kind="grade", dataset=loaded.dataset, total=1)
    urls = [*PAGES, *APIS, f"/cuad/runs/{loaded.gold.pk}/", f"/cuad/jobs/{job.pk}/", f"/cuad/jobs/{job.pk}/progress/",
            f"/api/v1/cuad/runs/{loaded.gold.pk}/", f"/api/v1/cuad/jobs/{job.pk}/"]
    for url in urls:
        assert reviewer_client.get(url).status_code == 403, url
    for url in ["/cuad/runs/", "/cuad/runs/launch/", f"/cuad/jobs/{job.pk}/resume/", "/api/v1/cuad/runs/",
                "/api/v1/cuad/jobs/"]:
        assert reviewer_client.post(url, {}).status_code == 403, url


def test_anonymous_visitors_are_sent_to_the_login_page(loaded, client):
    response = client.get("/cuad/scorecard/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert client.get("/api/v1/cuad/scorecard/").status_code in (401, 403)


def test_stakeholders_read_every_page_but_cannot_paste_or_launch(loaded, stakeholder_client):
    for url in PAGES:
        assert stakeholder_client.get(url).status_code == 200, url
    before = ExtractionRun.objects.count()
    assert stakeholder_client.post("/cuad/runs/", {"run_text": "{}"}).status_code == 403
    assert stakeholder_client.post("/cuad/runs/launch/", {"provider": "local"}).status_code == 403
    assert stakeholder_client.post("/api/v1/cuad/jobs/", {"provider": "local"}).status_code == 403
    assert ExtractionRun.objects.count() == before
    page = stakeholder_client.get("/cuad/runs/").content.decode()
    assert "Paste or upload a run" not in page


# ---------------------------------------------------------------------------
# Exports


@pytest.mark.parametrize("url", PAGES)
def test_every_page_exports_json_and_csv(loaded, stakeholder_client, url):
    data = stakeholder_client.get(url + "?format=json")
    assert data.status_code == 200 and data["Content-Type"].startswith("application/json")
    json.loads(data.content)
    table = stakeholder_client.get(url + "?format=csv")
    assert table.status_code == 200 and table["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(table.content.decode())))
    assert len(rows) >= 2
