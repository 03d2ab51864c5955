"""Admin pages and API: pools list, declare, assign, progress, agreement, adjudication, exports."""

from __future__ import annotations

import json

from reviewapp.review.agreement import exports
from reviewapp.review.agreement import selectors as agreement
from reviewapp.review.agreement.judgments import pool_stale_judgments
from reviewapp.review.agreement.models import Adjudication
from reviewapp.review.agreement.selectors import LABEL_RULE
from reviewapp.review.assignment.services import item_rebind
from reviewapp.review.pools.selectors import pool_model_get
from reviewapp.review.workspace.services import judgment_reopen, judgment_submit
from tests.reviewapp.review.conftest import make_items


def _grade_all(pool, reviewer_user, reviewer2_user):
    for n, item in enumerate(pool.items.order_by("doc_id")):
        judgment_submit(item=item, reviewer=reviewer_user, grades={"section": n % 4, "passage": n % 4},
                                 complete=True)
        judgment_submit(item=item, reviewer=reviewer2_user,
                                 grades={"section": n % 4, "passage": (n + n % 2) % 4}, complete=True)


def test_the_pools_page_lists_pools_with_the_declared_rule(pool, admin_client_):
    html = admin_client_.get("/review/pools/").content.decode()
    assert pool.name in html and "union of top 5 of keyword and reranked order" in html


def test_an_admin_declares_and_assigns_a_pool_from_the_page(admin_client_, reviewer_user, reviewer2_user):
    lines = "\n".join(json.dumps(item) for item in make_items(n_queries=2, per_query=2))
    response = admin_client_.post("/review/pools/new/", {
        "name": "from page", "kind": "passage", "declared_rule": "explicit list", "reviewers_per_item": "2",
        "items": lines,
    })
    assert response.status_code == 302
    pool_id = response["Location"].rstrip("/").split("/")[-1]
    response = admin_client_.post(f"/review/assignment/{pool_id}/assign/",
                                  {"reviewers": [reviewer_user.pk, reviewer2_user.pk]})
    assert response.status_code == 302
    progress = agreement.pool_progress(pool=pool_model_get(public_id=pool_id))
    assert progress.assignments == 8 and [r.assigned for r in progress.per_reviewer] == [4, 4]


def test_a_bad_items_line_is_named(admin_client_):
    response = admin_client_.post("/review/pools/new/", {
        "name": "x", "kind": "passage", "declared_rule": "explicit", "items": '{"query_id": "q"}\n{oops',
    })
    assert response.status_code == 400 and b"line 2" in response.content


def test_the_pool_page_shows_progress_agreement_rule_disagreements_and_stale(pool, admin_client_, reviewer_user,
                                                                             reviewer2_user):
    _grade_all(pool, reviewer_user, reviewer2_user)
    item_rebind(item=pool.items.order_by("doc_id").first(), passage_text="changed")
    html = admin_client_.get(f"/review/pools/{pool.public_id}/").content.decode()
    for text in ("Per reviewer", "Per query", "Krippendorff", "Cohen&#x27;s kappa, quadratic",
                 "Adjudicated, else agreed, else unresolved",
                 reviewer_user.username, reviewer2_user.username, "QIDMARK-0", 'data-testid="stale"'):
        assert text in html or text.replace("&#x27;", "'") in html, text
    assert LABEL_RULE in html.replace("&quot;", '"').replace("&#x27;", "'")
    assert len(pool_stale_judgments(pool=pool)) == 2


def test_the_adjudicator_sees_no_model_information(pool, admin_client_, admin_user_, reviewer_user, reviewer2_user):
    _grade_all(pool, reviewer_user, reviewer2_user)
    disagreement = agreement.pool_disagreements(pool=pool)[0]
    url = f"/review/agreement/{pool.public_id}/items/{disagreement.item_id}/adjudicate/"
    html = admin_client_.get(url).content.decode()
    for marker in ("SYSMARK", "MODELMARK", "JUDGEMARK", "0.98765", "PROPOSEDMARK", "RUNMARK"):
        assert marker not in html
    response = admin_client_.post(url, {disagreement.grade_type: "2", "note": "statute is clear"})
    assert response.status_code == 302
    ruling = Adjudication.objects.get()
    assert ruling.value == 2 and ruling.adjudicator == admin_user_


def test_exports_qrels_and_pseudonymised_jsonl(pool, admin_client_, reviewer_user, reviewer2_user):
    _grade_all(pool, reviewer_user, reviewer2_user)
    qrels = admin_client_.get(f"/review/agreement/{pool.public_id}/qrels.txt?grade_type=section")
    assert qrels.status_code == 200 and qrels.content.decode() == exports.pool_qrels(pool=pool, grade_type="section")
    lines = b"".join(admin_client_.get(f"/review/agreement/{pool.public_id}/judgments.jsonl?pseudonymise=1")
                     .streaming_content).decode().splitlines()
    rows = [json.loads(line) for line in lines]
    assert len(rows) == 24
    assert {row["reviewer"] for row in rows} == {
        exports.reviewer_pseudonym(pool=pool, reviewer_id=u.pk) for u in (reviewer_user, reviewer2_user)
    }
    assert all(reviewer_user.username not in line for line in lines)
    assert all(len(row["passage_hash"]) == 64 and row["status"] == "complete" for row in rows)
    named = admin_client_.get(f"/api/v1/review/pools/{pool.public_id}/judgments/").json()
    assert {row["reviewer"] for row in named} == {reviewer_user.username, reviewer2_user.username}


def test_the_admin_api_creates_assigns_and_reports(admin_client_, reviewer_user, reviewer2_user):
    payload = {"name": "api pool", "kind": "passage", "declared_rule": "explicit list",
               "items": make_items(n_queries=1, per_query=3)}
    response = admin_client_.post("/api/v1/review/pools/", payload, content_type="application/json")
    assert response.status_code == 201, response.content
    pool_id = response.json()["id"]
    response = admin_client_.post(f"/api/v1/review/pools/{pool_id}/assign/",
                                  {"reviewers": [reviewer_user.username, reviewer2_user.username]},
                                  content_type="application/json")
    assert response.json() == {"added": 6}
    progress = admin_client_.get(f"/api/v1/review/pools/{pool_id}/progress/").json()
    assert progress["assignments"] == 6 and progress["per_query"][0]["items"] == 3
    agreement = admin_client_.get(f"/api/v1/review/pools/{pool_id}/agreement/").json()
    assert "adjudicated" in agreement["label_rule"]
    assert [g["grade_type"] for g in agreement["grade_types"]] == ["section", "passage"]
    assert admin_client_.get(f"/api/v1/review/pools/{pool_id}/qrels/").content == b""


def test_the_adjudication_page_refuses_a_ruling_on_an_item_its_reviewers_agree_on(pool, admin_client_,
                                                                                 reviewer_user, reviewer2_user):
    _grade_all(pool, reviewer_user, reviewer2_user)  # odd items: the passage grade differs; even ones: all agree
    agreed, disputed = list(pool.items.order_by("doc_id"))[:2]
    page = f"/review/agreement/{pool.public_id}/items/{{}}/adjudicate/"
    refused = admin_client_.post(page.format(agreed.public_id), {"passage": "2"})
    assert refused.status_code == 400 and not Adjudication.objects.exists()
    assert (f"item {agreed.public_id} (passage): a ruling resolves a disagreement, and there is none: the 2 "
            "reviewers who completed it agree; nothing was recorded") in refused.content.decode()
    # One page posts every chosen grade type, all or none: an agreed one among them refuses the lot.
    assert admin_client_.post(page.format(disputed.public_id), {"passage": "2", "section": "2"}).status_code == 400
    assert not Adjudication.objects.exists()
    assert admin_client_.post(page.format(disputed.public_id), {"passage": "2"}).status_code == 302
    assert list(Adjudication.objects.values_list("item__public_id", "grade_type", "value")) == [
        (disputed.public_id, "passage", 2)]


def test_a_ruling_made_on_a_stale_view_of_the_disagreement_is_refused(pool, admin_client_, admin_user_,
                                                                      reviewer_user, reviewer2_user):
    import re

    _grade_all(pool, reviewer_user, reviewer2_user)
    disagreement = agreement.pool_disagreements(pool=pool)[0]
    url = f"/review/agreement/{pool.public_id}/items/{disagreement.item_id}/adjudicate/"
    (seen,) = re.findall(r'name="seen" value="([0-9a-f]{64})"', admin_client_.get(url).content.decode())
    # Meanwhile a reviewer changes their grade: the disagreement the adjudicator looks at is not the current one.
    item = pool.items.get(public_id=disagreement.item_id)
    before = {name: grades for name, _status, grades, _note, _stale in
              agreement.pool_adjudication_item(pool=pool, item_id=item.public_id).reviewer_grades}
    other = before[reviewer2_user.username]
    # Another grade, still not the other reviewer's: a disagreement still, only not the one shown.
    regraded = {key: next(g for g in range(4) if g not in (value, other[key]))
                for key, value in before[reviewer_user.username].items()}
    judgment_reopen(item=item, reviewer=reviewer_user)
    judgment_submit(item=item, reviewer=reviewer_user, grades=regraded, complete=True)
    after = agreement.pool_adjudication_item(pool=pool, item_id=item.public_id)
    assert {n: g for n, _s, g, _no, _st in after.reviewer_grades}[reviewer_user.username] == regraded
    refused = admin_client_.post(url, {disagreement.grade_type: "2", "seen": seen})
    assert refused.status_code == 409
    assert "changed after you opened it" in refused.content.decode() and not Adjudication.objects.exists()
    (fresh,) = re.findall(r'name="seen" value="([0-9a-f]{64})"', refused.content.decode())
    assert fresh != seen  # the page shows the disagreement as it is now
    assert admin_client_.post(url, {disagreement.grade_type: "2", "seen": fresh}).status_code == 302
    # A second adjudicator who opened the page before that ruling is refused too, not last-writer-wins.
    assert admin_client_.post(url, {disagreement.grade_type: "0", "seen": fresh}).status_code == 409
    assert list(Adjudication.objects.values_list("value", flat=True)) == [2]
