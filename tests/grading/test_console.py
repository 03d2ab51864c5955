"""CUAD console wiring: every page and API refuses reviewers and anonymous visitors, and exports JSON and CSV."""

from __future__ import annotations

import csv
import io
import json

import pytest

from grading.runs.models import ConsoleJob, ExtractionRun

PAGES = ["/cuad/", "/cuad/dataset/", "/cuad/runs/", "/cuad/scorecard/", "/cuad/scorecard/explorer/",
         "/cuad/scorecard/playground/"]
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
    urls = [*PAGES, *APIS, f"/cuad/runs/{loaded.gold.pk}/", f"/cuad/runs/jobs/{job.pk}/",
            f"/jobs/extraction/{job.pk}/progress/",
            f"/api/v1/cuad/runs/{loaded.gold.pk}/", f"/api/v1/cuad/jobs/{job.pk}/"]
    for url in urls:
        assert reviewer_client.get(url).status_code == 403, url
    for url in ["/cuad/runs/", "/cuad/runs/launch/", f"/jobs/extraction/{job.pk}/resume/", "/api/v1/cuad/runs/",
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
def test_every_page_links_its_json_and_csv_exports_at_their_paths(loaded, stakeholder_client, url):
    page = stakeholder_client.get(url).content.decode()
    stem = url.strip("/").rpartition("/")[2].replace("cuad", "overview")
    json_url, csv_url = f"{url}{stem}.json", f"{url}{stem}.csv"
    assert f'data-testid="export-json" href="{json_url}"' in page
    assert f'data-testid="export-csv" href="{csv_url}"' in page
    data = stakeholder_client.get(json_url)
    assert data.status_code == 200 and data["Content-Type"].startswith("application/json")
    json.loads(data.content)
    table = stakeholder_client.get(csv_url)
    assert table.status_code == 200 and table["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(table.content.decode())))
    assert len(rows) >= 2


def test_an_old_format_query_redirects_permanently_to_the_export_path_keeping_the_query(loaded, stakeholder_client):
    response = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}&format=csv")
    assert response.status_code == 301
    assert response["Location"] == f"/cuad/scorecard/scorecard.csv?run={loaded.noisy.pk}"
    response = stakeholder_client.get(f"/cuad/runs/{loaded.noisy.pk}/?format=json")
    assert response.status_code == 301 and response["Location"] == f"/cuad/runs/{loaded.noisy.pk}/run.json"
    assert stakeholder_client.get("/cuad/runs/?format=xml").status_code == 404
    assert stakeholder_client.get("/cuad/runs/runs.xml").status_code == 404


def test_an_export_is_read_never_posted_to(loaded, admin_client_):
    before = ExtractionRun.objects.count()
    assert admin_client_.post("/cuad/runs/runs.json", {"run": "{}"}).status_code == 405
    assert ExtractionRun.objects.count() == before


def test_a_page_without_exports_links_none(loaded, stakeholder_client):
    from grading.contracts.models import ContractSet

    contract_set = ContractSet.objects.create(name="no exports here")
    page = stakeholder_client.get(f"/cuad/contracts/{contract_set.pk}/taxonomy/")
    assert page.status_code == 200
    assert 'data-testid="export-json"' not in page.content.decode()
