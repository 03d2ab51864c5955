"""Declaring a review pool from a rerank run: the top-k union, texts and hashes, idempotence, labels, access."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from benchmarks.labels.pools import ReviewPoolError, provisional_labels_import, review_pool_declare
from benchmarks.labels.selectors import run_pools
from benchmarks.rerank.models import RerankGrade
from benchmarks.retrieval.models import RetrievalCandidate
from benchmarks.suites.models import QueryKind
from reviewapp.review.exchange.models import LabelSource
from reviewapp.review.exchange.selectors import label_source_labels
from reviewapp.review.judgments.hashes import passage_hash_of, query_hash_of, source_hash_of
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.pools.refs import pool_model
from tests.benchmarks.labels.fixtures import judge, rerank_world


@pytest.fixture
def run(db):
    return rerank_world(seed=5, queries=6)


def _independent_orders(run) -> dict[str, tuple[list[str], list[str]]]:
    """Keyword order from the stored ranks; reranked by latest graded P(useful) desc, ties by rank, ungraded last."""
    p = {}
    for g in RerankGrade.objects.filter(run=run).order_by("attempt", "id"):
        p[g.candidate_id] = g.p_useful if g.status == "graded" else None
    out: dict[str, list] = {}
    for c in (RetrievalCandidate.objects.filter(result__run=run.retrieval_run, result__query__kind=QueryKind.RANKING)
              .select_related("result__query", "provision")):
        out.setdefault(c.result.query.qid, []).append((c.rank, c.provision.docid, p.get(c.pk)))
    orders = {}
    for qid, rows in out.items():
        keyword = [d for _, d, _ in sorted(rows)]
        graded = sorted((r for r in rows if r[2] is not None), key=lambda r: (-r[2], r[0]))
        ungraded = sorted(r for r in rows if r[2] is None)
        orders[qid] = (keyword, [d for _, d, _ in graded + ungraded])
    return orders


def test_the_pool_is_the_union_of_the_top_five_of_both_orders_per_query_and_records_its_rule(run):
    pool = review_pool_declare(rerank_run=run).pool
    expected = {(qid, d) for qid, (kw, rr) in _independent_orders(run).items() for d in kw[:5] + rr[:5]}
    assert {(i.query_id, i.doc_id) for i in pool_model(pool).items.all()} == expected
    assert pool.kind == "passage" and pool.reviewers_per_item == 2
    assert "union of the top 5 of the keyword order" in pool.declared_rule
    assert "cannot establish population calibration" in pool.declared_rule
    assert pool.declared_params["rule"] == "union-top-k" and pool.declared_params["k"] == 5
    assert pool.declared_params["items"] == len(expected)


def test_items_carry_the_texts_the_model_saw_with_hashes_and_only_ids_in_external_ref(run):
    pool = review_pool_declare(rerank_run=run).pool
    for item in pool_model(pool).items.all():
        c = RetrievalCandidate.objects.select_related("passage", "provision", "result__query").get(
            pk=item.external_ref["candidate"])
        assert (c.result.query.qid, c.provision.docid) == (item.query_id, item.doc_id)
        assert item.query_text == c.result.query.text and item.query_hash == query_hash_of(item.query_text)
        assert item.source_text == c.provision.body and c.provision.heading in item.source_heading
        assert item.source_hash == source_hash_of(item.source_heading, item.source_text)
        assert (item.passage_caption, item.passage_text) == (c.passage.caption, c.passage.text)
        assert item.passage_hash == passage_hash_of(c.passage.caption, c.passage.text)
        assert item.external_ref["passage_sha256"] == c.passage.sha256
        assert not {"rank", "keyword_rank", "score", "p_useful", "system"} & set(item.external_ref)


def test_declaring_twice_returns_the_same_pool_and_another_k_is_another_declaration(run):
    first = review_pool_declare(rerank_run=run)
    again = review_pool_declare(rerank_run=run)
    assert first.created and not again.created and first.pool.pk == again.pool.pk
    assert ReviewItem.objects.filter(pool_id=first.pool.pk).count() == first.pool.declared_params["items"]
    wider = review_pool_declare(rerank_run=run, k=7)
    assert wider.created and wider.pool.pk != first.pool.pk
    assert wider.pool.declared_params["declaration_sha256"] != first.pool.declared_params["declaration_sha256"]
    assert [p.pk for p in run_pools(rerank_run=run)] == [wider.pool.pk, first.pool.pk]


def test_an_explicit_list_is_declared_as_such_and_bad_pairs_are_refused_by_index(run):
    orders = _independent_orders(run)
    pairs = [("q00", orders["q00"][0][12]), ("q01", orders["q01"][0][0])]
    pool = review_pool_declare(rerank_run=run, explicit=pairs).pool
    assert {(i.query_id, i.doc_id) for i in pool_model(pool).items.all()} == set(pairs)
    assert pool.declared_params["rule"] == "explicit" and pool.declared_rule.startswith("Explicit list of 2")
    with pytest.raises(ReviewPoolError, match=r"explicit\[1\]: 'NRS_nowhere' is not among"):
        review_pool_declare(rerank_run=run, explicit=[pairs[0], ("q01", "NRS_nowhere")])
    with pytest.raises(ReviewPoolError, match=r"explicit\[0\]: 'oc1' is not a ranking query"):
        review_pool_declare(rerank_run=run, explicit=[("oc1", orders["q00"][0][0])])


def test_a_run_that_is_not_finished_cannot_be_declared(db):
    running = rerank_world(seed=6, queries=2, status="running")
    with pytest.raises(ReviewPoolError, match="is running"):
        review_pool_declare(rerank_run=running)


def test_provisional_section_labels_are_their_own_source_and_never_passage_labels(run, reviewer_user,
                                                                                   reviewer2_user):
    from benchmarks.labels.metrics import human_inputs_load

    pool = review_pool_declare(rerank_run=run, reviewers=[reviewer_user, reviewer2_user]).pool
    source, created = provisional_labels_import(suite=run.suite)
    again, created_again = provisional_labels_import(suite=run.suite)
    assert created and not created_again and source.pk == again.pk
    assert source.provisional and "provisional, source-derived, section-level" in source.name
    labels = label_source_labels(name=source.name)
    assert len(labels) == 6 and {x.grade_type for x in labels} == {"section"}
    assert LabelSource.objects.count() == 1
    inputs = human_inputs_load(rerank_run=run, pool=pool)
    assert inputs.labels == {} and inputs.pool.labelled == 0


def test_the_command_declares_once_assigns_and_says_so(run, reviewer_user, reviewer2_user, capsys):
    call_command("declare_review_pool", "--rerank-run", str(run.pk), "--assign",
                 f"{reviewer_user.username},{reviewer2_user.username}")
    out = capsys.readouterr().out
    assert "declared:" in out and "assignments added" in out
    call_command("declare_review_pool", "--rerank-run", str(run.pk))
    assert "already declared" in capsys.readouterr().out
    pool = run_pools(rerank_run=run)[0]
    assert pool_model(pool).assignments.count() == 2 * pool_model(pool).items.count()


def test_only_admins_reach_the_declaration_page_and_a_post_declares_and_assigns(
        run, admin_client_, stakeholder_client, reviewer_client, reviewer_user, reviewer2_user):
    url = f"/benchmarks/labels/rerank/{run.pk}/review-pool/"
    assert reviewer_client.get(url).status_code == 403
    assert stakeholder_client.get(url).status_code == 403
    page = admin_client_.get(url)
    assert page.status_code == 200 and "union of the top 5" in page.content.decode()
    response = admin_client_.post(url, {"k": 5, "reviewers_per_item": 2,
                                         "reviewers": [reviewer_user.pk, reviewer2_user.pk],
                                         "import_provisional": "on"})
    pool = run_pools(rerank_run=run)[0]
    assert response.status_code == 302 and response["Location"].endswith(f"/review/pools/{pool.public_id}/")
    assert pool_model(pool).assignments.count() == 2 * pool_model(pool).items.count()
    assert LabelSource.objects.filter(provisional=True).count() == 1
    bad = admin_client_.post(url, {"k": 5, "reviewers_per_item": 2, "explicit": "q00 NRS_nowhere"})
    assert bad.status_code == 400 and "explicit[0]" in bad.content.decode()


def test_reviewers_see_none_of_the_model_in_their_item(run, reviewer_user, reviewer2_user, reviewer_client):
    pool = review_pool_declare(rerank_run=run, reviewers=[reviewer_user, reviewer2_user]).pool
    item = pool_model(pool).assignments.filter(reviewer=reviewer_user).first().item
    judge(pool, [reviewer_user, reviewer2_user], {}, complete=True)
    html = reviewer_client.get(f"/review/workspace/items/{item.public_id}/").content.decode()
    assert item.passage_text.split()[0] in html
    # Nothing names the model, its scores, the keyword order or the candidate the item came from. (The
    # candidate's database id is not searched for: as a small number it also appears as a grade value or a
    # hash's last digits, which made that check fail by chance.)
    for secret in ("rerank", "P(useful)", "minilm", "keyword order", "candidate", "external_ref"):
        assert secret.lower() not in html.lower()


def test_the_admin_pool_page_names_documents_by_their_citation_not_their_internal_id(
        run, reviewer_user, reviewer2_user, admin_client_):
    pool = review_pool_declare(rerank_run=run, reviewers=[reviewer_user, reviewer2_user]).pool
    item = pool_model(pool).items.order_by("query_id", "doc_id").first()
    judge(pool, [reviewer_user, reviewer2_user], {(item.query_id, item.doc_id): (1, 2)})
    provision = RetrievalCandidate.objects.select_related("provision").get(pk=item.external_ref["candidate"]).provision
    assert provision.docid == item.doc_id != str(provision)  # "NRS_1.010" in the pool, "NRS 1.010" to a lawyer
    html = admin_client_.get(f"/review/pools/{pool.public_id}/").content.decode()
    row = html.split('data-testid="disagreements"')[1].split("</table>")[0]
    assert f'<td data-testid="document">{provision}</td>' in row
    assert item.doc_id not in row
