"""The API's contract at its edges: JSON errors on every /api/ path, ranges declared, null refused."""

from __future__ import annotations

import pytest

from tests.reviewapp.review.conftest import make_pool

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/api/v1/benchmarks/provisions/abc/", "/api/v1/benchmarks/suites/-3/",
                                  "/api/v1/no-such-endpoint/", "/api/v1/cuad/contract-sets/1/gold-sets/x/"])
def test_a_path_no_api_route_matches_is_a_json_404(admin_client_, client, path):
    for who in (admin_client_, client):
        answer = who.get(path)
        assert answer.status_code == 404
        assert answer["Content-Type"] == "application/json"
        assert answer.json() == {"detail": "Not found."}


def test_a_page_outside_the_api_keeps_the_sites_html_404(admin_client_):
    answer = admin_client_.get("/benchmarks/no-such-page/")
    assert answer.status_code == 404 and answer["Content-Type"].startswith("text/html")


def _parameters(schema: dict, path: str) -> dict[str, dict]:
    return {p["name"]: p["schema"] for p in schema["paths"][path]["get"]["parameters"]}


def test_the_schema_declares_the_ranges_the_parsers_accept(admin_client_):
    schema = admin_client_.get("/api/v1/schema/?format=json").json()
    report = _parameters(schema, "/api/v1/benchmarks/reports/rerank/{id}/")
    assert report["replicates"] | {} == {"type": "integer", "minimum": 1000, "maximum": 100000}
    assert report["seed"]["minimum"] == 0 and report["seed"]["maximum"] == 2**32 - 1
    assert report["id"]["minimum"] == 1
    provisions = _parameters(schema, "/api/v1/benchmarks/provisions/")
    assert (provisions["limit"]["minimum"], provisions["limit"]["maximum"]) == (1, 1000)
    assert provisions["offset"]["minimum"] == 0
    assert provisions["snapshot"]["minimum"] == 1
    assert _parameters(schema, "/api/v1/benchmarks/comparisons/")["suite"]["minimum"] == 1
    leaderboard = _parameters(schema, "/api/v1/benchmarks/reports/leaderboard/{id}/")
    assert leaderboard["rerank"] == {"type": "array", "items": {"type": "integer", "minimum": 1,
                                                                 "maximum": 2**63 - 1}}
    scorecard = _parameters(schema, "/api/v1/cuad/scorecard/")
    assert (scorecard["correct"]["minimum"], scorecard["correct"]["maximum"]) == (0, 1)


def test_a_boundary_value_the_schema_allows_is_accepted(admin_client_):
    # replicates 1,000 is the schema's minimum: accepted (a 404 for the missing run, not a 400 for the value).
    assert admin_client_.get("/api/v1/benchmarks/reports/rerank/1/?replicates=1000").status_code == 404
    assert admin_client_.get("/api/v1/benchmarks/provisions/?limit=1000").status_code == 200


@pytest.mark.parametrize("value", ["null", "yes", "2"])
def test_a_yes_no_parameter_refuses_null_instead_of_reading_false(admin_client_, reviewer_user, reviewer2_user,
                                                                 value):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user])
    answer = admin_client_.get(f"/api/v1/review/pools/{pool.public_id}/judgments/", {"pseudonymise": value})
    assert answer.status_code == 400
    assert "pseudonymise" in answer.json()
    for good in ("true", "false", "1", "0"):
        assert admin_client_.get(f"/api/v1/review/pools/{pool.public_id}/judgments/",
                                 {"pseudonymise": good, "drafts": good}).status_code == 200
