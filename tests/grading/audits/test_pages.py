"""CUAD label audit pages, exports, API, Celery task, and the blinded review of its candidates."""

from __future__ import annotations

import csv
import io

import pytest

from grading.audits.judging.judges import parse_choice
from grading.audits.models import Audit, AuditVerdict
from grading.audits.review import audit_review_send
from grading.audits.selectors import audit_report
from grading.audits.services import audit_create
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.workspace.services import judgment_submit
from tests.grading.audit_support import audited_run, local_audit, set_verdicts
from tests.helpers import wait_until


@pytest.fixture
def audited(db, tmp_path):
    return audited_run(tmp_path, extra=4)


@pytest.fixture
def judged(audited):
    _, run = audited
    audit = local_audit(run)
    n = audit.n_candidates
    set_verdicts(audit, {"a": [i % 2 == 0 for i in range(n)], "b": [i % 3 != 0 for i in range(n)]})
    Audit.objects.filter(pk=audit.pk).update(status="done", stage="done")
    audit.refresh_from_db()
    return audit


# ---------------------------------------------------------------------------
# Permissions


def test_reviewers_get_403_on_every_audit_page_and_api(judged, reviewer_client):
    for url in (
        "/cuad/audits/",
        f"/cuad/audits/{judged.pk}/",
        f"/cuad/audits/{judged.pk}/audit.json",
        f"/jobs/audit/{judged.pk}/progress/",
        "/api/v1/cuad/audits/",
        f"/api/v1/cuad/audits/{judged.pk}/",
    ):
        assert reviewer_client.get(url).status_code == 403, url
    for url in ("/cuad/audits/", f"/jobs/audit/{judged.pk}/resume/", f"/cuad/audits/{judged.pk}/review/"):
        assert reviewer_client.post(url).status_code == 403, url


def test_stakeholders_read_but_cannot_launch_resume_or_send_to_review(judged, stakeholder_client):
    assert stakeholder_client.get(f"/cuad/audits/{judged.pk}/").status_code == 200
    assert stakeholder_client.get(f"/api/v1/cuad/audits/{judged.pk}/").status_code == 200
    assert stakeholder_client.post("/cuad/audits/", {"run": judged.run_id}).status_code == 403
    assert stakeholder_client.post(f"/jobs/audit/{judged.pk}/resume/").status_code == 403
    assert stakeholder_client.post(f"/cuad/audits/{judged.pk}/review/").status_code == 403


def test_anonymous_visitors_are_sent_to_log_in(judged, client):
    response = client.get(f"/cuad/audits/{judged.pk}/")
    assert response.status_code == 302 and "login" in response["Location"]
    assert client.get("/api/v1/cuad/audits/").status_code in (401, 403)


def test_an_admin_launches_an_audit_from_the_page_and_the_same_launch_finds_it(audited, admin_client_, monkeypatch):
    _, run = audited
    queued = []
    monkeypatch.setattr("grading.audits.services._queue", lambda audit, countdown=None: queued.append(audit.pk))
    form = {"run": run.pk, "judge_a": "local-description", "judge_b": "local-exemplars", "grounding": "0.8"}
    response = admin_client_.post("/cuad/audits/", form)
    audit = Audit.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/cuad/audits/{audit.pk}/"
    assert queued == [audit.pk] and audit.n_candidates > 0
    again = admin_client_.post("/cuad/audits/", form)
    assert again["Location"] == f"/cuad/audits/{audit.pk}/" and Audit.objects.count() == 1
    bad = admin_client_.post("/cuad/audits/", {**form, "judge_b": "local-description"})
    assert bad.status_code == 400 and b"must differ" in bad.content
    bad = admin_client_.post("/cuad/audits/", {**form, "judge_a": "nonsense"})
    assert bad.status_code == 400 and b"judge A" in bad.content


# ---------------------------------------------------------------------------
# Page, exports, API


def test_the_page_shows_kappa_band_table_and_the_scorecard_before_and_after(judged, stakeholder_client):
    report = audit_report(audit=judged)
    page = stakeholder_client.get(f"/cuad/audits/{judged.pk}/").content.decode()
    assert f"{report.agreement.kappa:.3f}" in page and report.agreement.band in page
    assert 'data-testid="agreement-table"' in page and "raw agreement" in page
    assert f"{report.agreement.ac1:.3f}<small>Gwet's AC1" in page.replace("&#x27;", "'")
    shares = ", ".join(f"{verdict} {share * 100:.1f}%" for verdict, share in report.agreement.prevalence)
    assert f'data-testid="prevalence">Prevalence: {shares}' in page
    for key in ("before", "both", "a", "b"):
        assert f'data-testid="impact-{key}"' in page
    both = report.impact.row("both").figures.recall
    assert f"{both.estimate * 100:.1f}%" in page and f"[{both.low * 100:.1f}, {both.high * 100:.1f}]" in page
    assert page.count('data-testid="candidate"') == judged.n_candidates
    assert "heuristic" in page


def test_exports_and_the_api_carry_the_same_figures(judged, stakeholder_client):
    data = stakeholder_client.get(f"/cuad/audits/{judged.pk}/audit.json").json()
    api = stakeholder_client.get(f"/api/v1/cuad/audits/{judged.pk}/").json()
    assert api["agreement"] == data["agreement"] and api["impact"]["rows"] == data["impact"]["rows"]
    assert len(api["candidates"]) == judged.n_candidates
    assert data["agreement"]["table"]["counts"] == audit_report(audit=judged).agreement.table
    assert data["agreement"]["ac1"] == pytest.approx(audit_report(audit=judged).agreement.ac1)
    assert set(data["agreement"]["prevalence"]) == {"no", "yes"} and "paradox_note" in data["agreement"]
    exported = stakeholder_client.get(f"/cuad/audits/{judged.pk}/audit.csv").content.decode()
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert len(rows) == judged.n_candidates
    assert {r["judge_a"] for r in rows} <= {"yes", "no"} and all(r["text"] for r in rows)
    listing = stakeholder_client.get("/api/v1/cuad/audits/").json()
    assert [a["id"] for a in listing] == [judged.pk]


def test_the_page_api_and_export_say_why_two_contracts_carry_no_kappa_interval(judged, stakeholder_client):
    # The fixture's audit draws its candidates from two contracts: too few to resample (scoring.stats.units).
    interval = audit_report(audit=judged).agreement.kappa_interval
    assert interval.units == 2 and interval.defined and not interval.has_interval
    reason = "2 contracts: too few for an interval or a p-value (at least 3 needed)"
    assert interval.caveat == reason
    page = stakeholder_client.get(f"/cuad/audits/{judged.pk}/").content.decode()
    assert 'data-testid="kappa-ci"' not in page and 'data-testid="raw-agreement-ci"' not in page
    assert reason in page
    api = stakeholder_client.get(f"/api/v1/cuad/audits/{judged.pk}/").json()["agreement"]["kappa_interval"]
    exported = stakeholder_client.get(f"/cuad/audits/{judged.pk}/audit.json").json()["agreement"]["kappa_interval"]
    assert api == exported
    assert (api["unit"], api["units"], api["observations"], api["replicates"], api["seed"]) == (
        "contract", 2, judged.n_candidates, 1000, 0)
    assert api["low"] is None and api["high"] is None and api["caveat"] == reason


def test_the_progress_fragment_stops_polling_once_the_audit_is_finished(judged, stakeholder_client):
    assert stakeholder_client.get(f"/jobs/audit/{judged.pk}/progress/").status_code == 286
    Audit.objects.filter(pk=judged.pk).update(status="running")
    response = stakeholder_client.get(f"/jobs/audit/{judged.pk}/progress/")
    assert response.status_code == 200 and b'hx-trigger="every 2s"' in response.content  # one interval, every kind


# ---------------------------------------------------------------------------
# Celery


def test_the_audit_runs_on_celery_and_reaches_done(celery_worker, tmp_path):
    _, run = audited_run(tmp_path)
    audit, _ = audit_create(
        run=run, judge_a=parse_choice("local-description"), judge_b=parse_choice("local-exemplars")
    )
    done = wait_until(lambda: Audit.objects.get(pk=audit.pk).status in ("done", "failed"), timeout=120)
    assert done
    audit.refresh_from_db()
    assert audit.status == "done", audit.error
    assert AuditVerdict.objects.filter(judge__audit=audit).count() == 2 * audit.n_candidates


# ---------------------------------------------------------------------------
# Humans settle it, blind


def _reviewer_pages(client) -> str:
    out = [client.get("/review/workspace/").content.decode(), client.get("/api/v1/review/queue/").content.decode()]
    for item in ReviewItem.objects.all():
        out.append(client.get(f"/review/workspace/items/{item.public_id}/").content.decode())
        out.append(client.get(f"/api/v1/review/items/{item.public_id}/").content.decode())
    return "\n".join(out)


def test_review_items_are_blind_to_the_model_the_judges_and_every_score(
    judged, admin_client_, reviewer_client, reviewer_user, reviewer2_user
):
    response = admin_client_.post(f"/cuad/audits/{judged.pk}/review/")
    assert response.status_code == 302 and "/review/pools/" in response["Location"]
    items = list(ReviewItem.objects.all())
    assert len(items) == judged.n_candidates
    report = audit_report(audit=judged)
    forbidden = {judged.run.model, "judge", "heuristic", "cosine", "verdict", "local-description", "local-exemplars"}
    forbidden |= {v.reason for r in report.rows for v in r.verdicts.values() if v}
    forbidden |= {f"{r.candidate.grounding:.2f}" for r in report.rows} - {"1.00"}
    for item in items:
        shown = " ".join(
            [item.query_text, item.source_heading, item.source_text, item.passage_caption, item.passage_text,
             item.pool.reviewer_title, item.pool.instructions]
        )
        assert not [f for f in forbidden if f in shown], item.query_text
    by_candidate = {int(i.external_ref["candidate"]): i for i in items}
    for row in report.rows:
        item = by_candidate[row.candidate.pk]
        assert item.passage_text == row.candidate.text and row.candidate.text in item.source_text
        assert row.category in item.query_text and item.pool.kind == "clause"
    pages = _reviewer_pages(reviewer_client)
    assert all(item.passage_text in pages for item in items)  # the reviewer does see what to judge
    leaked = [f for f in forbidden | {"grounding", "candidate-", "audit"} if f in pages]
    assert not leaked


def test_the_human_verdict_is_shown_next_to_the_judges(
    judged, admin_client_, stakeholder_client, reviewer_user, reviewer2_user
):
    pool, created = audit_review_send(audit=judged, reviewers=[reviewer_user, reviewer2_user])
    assert created
    again, created_again = audit_review_send(audit=judged, reviewers=[reviewer_user, reviewer2_user])
    assert again.pk == pool.pk and not created_again
    first = ReviewItem.objects.get(pool_id=pool.pk,
                                   external_ref__candidate=judged.candidates.order_by("position")[0].pk)
    for user in (reviewer_user, reviewer2_user):
        judgment_submit(item=first, reviewer=user, grades={"clause": "y"}, complete=True)
    data = stakeholder_client.get(f"/cuad/audits/{judged.pk}/audit.json").json()
    human = data["candidates"][0]["human"]
    assert human == {"state": "agreed", "value": "yes", "reason": "", "completed": 2}
    assert data["review_pool"] == pool.public_id
    assert any(r["key"] == "humans" and r["credited"] == 1 for r in data["impact"]["rows"])
    page = stakeholder_client.get(f"/cuad/audits/{judged.pk}/?show=human").content.decode()
    assert page.count('data-testid="candidate"') == 1 and "agreed" in page
