"""Agreement, the disagreement rule, rulings with spans, and freezing a gold set from a clause pool."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from grading.contracts.gold.adjudication import (
    RulingError,
    clause_adjudication,
    clause_ruling_record,
    ruling_spans,
)
from grading.contracts.gold.agreement import clause_agreement
from grading.contracts.gold.freeze import GoldSetError, gold_set_freeze
from grading.contracts.gold.models import GoldSet
from grading.contracts.gold.resolution import (
    ADJUDICATED,
    AGREED,
    INCOMPLETE,
    OPEN,
    ClauseResolution,
    LawyerAnswer,
    clause_pool_resolutions,
)
from reviewapp.review.errors import ReviewError
from reviewapp.review.spans.offsets import SpanError, spans_clean
from tests.grading.contracts.gold_support import admin, cuad_answer, cuad_fixture_set, label, label_all_as_cuad, lawyer
from tests.grading.cuad_fixture import CATEGORIES

pytestmark = pytest.mark.django_db


def _item(pool, title, category):
    return pool.items.get(source_heading=title, query_id=category)


def test_cuad_labelled_twice_by_its_own_answers_agrees_exactly():
    _, pool = cuad_fixture_set()
    label_all_as_cuad(pool, lawyer("ann"), lawyer("ben"))
    resolved = clause_pool_resolutions(pool=pool)
    assert {r.state for r in resolved.rows} == {AGREED}
    rows = {r.category: r for r in clause_agreement(resolutions=resolved.rows, texts=resolved.texts,
                                                    categories=CATEGORIES)}
    for name in (*CATEGORIES, "ALL"):
        assert rows[name].span_agreement == 1.0 and rows[name].ac1 == 1.0
    # "All categories" counts the 4 contracts, not 4 contracts x 3 categories (the items it pools)
    assert rows["ALL"].contracts == 4 and rows["ALL"].items == 12 and rows["ALL"].too_few
    assert rows["Document Name"].contracts == 4 and rows["Document Name"].too_few
    # Anti-Assignment is present in two contracts and absent in two: kappa is defined there, and perfect
    assert rows["Anti-Assignment"].kappa == 1.0 and rows["ALL"].kappa == 1.0
    assert rows["Document Name"].kappa is None  # both lawyers said present everywhere: kappa is undefined
    assert rows["Anti-Assignment"].span_f1_present == 1.0 and rows["Anti-Assignment"].both_present == 2


def _presence_row(contract: int, category: str, first: int, second: int) -> ClauseResolution:
    answers = [LawyerAnswer(reviewer_id=n, username=name, presence=value, spans=[[0, 8]] if value else [])
               for n, name, value in ((1, "ann", first), (2, "ben", second))]
    return ClauseResolution(
        pool_id="p", item_id=f"{contract}-{category}", category=category, title=f"C{contract}", set_contract=contract,
        text_sha256=f"t{contract}", source_hash=f"s{contract}", taxonomy_sha256="", state=AGREED, reason="",
        presence=first, spans=[], answers=answers, ruling=None, required=2)


def test_all_categories_counts_contracts_not_items_and_carries_the_kappa_paradox_line():
    """3 contracts x 2 categories: every row is 3 contracts, too few to say; never kappa from "6 items"."""
    rows = [_presence_row(c, cat, 0, int(c == 3 and cat == "B")) for c in (1, 2, 3) for cat in ("A", "B")]
    texts = {f"s{c}": "Contract text." for c in (1, 2, 3)}
    table = {r.category: r for r in clause_agreement(resolutions=rows, texts=texts)}
    assert table["ALL"].contracts == 3 and table["ALL"].items == 6 and table["ALL"].too_few
    assert table["ALL"].as_dict()["too_few"] and table["ALL"].as_dict()["items"] == 6
    from django.template.loader import render_to_string
    html = render_to_string("cuad/contracts/_gold_agreement.html", {"rows": list(table.values()), "caption": "x"})
    assert html.count("too few to say (n=3 contracts)") == 3 and "0.803" not in html
    # 5 of 6 contracts agree in one category (5 units of its own): kappa 0 beside the paradox line
    many = [_presence_row(c, "A", 0, int(c == 6)) for c in range(1, 7)]
    texts = {f"s{c}": "Contract text." for c in range(1, 7)}
    row = clause_agreement(resolutions=many, texts=texts)[0]
    assert not row.too_few and row.kappa == 0.0 and row.ac1 == pytest.approx(0.8, abs=0.01)
    assert row.paradox_note.startswith("5 of 6 agree and kappa 0.000: one grade (absent, 92% of grades)")
    html = render_to_string("cuad/contracts/_gold_agreement.html", {"rows": [row], "caption": "x"})
    assert 'data-testid="gold-paradox-a">5 of 6 agree and kappa 0.000' in html


def test_different_spans_are_a_disagreement_and_the_agreement_figure_is_the_matched_token_f1():
    _, pool = cuad_fixture_set()
    ann, ben = lawyer("ann"), lawyer("ben")
    item = _item(pool, "ALPHA-DISTRIBUTOR AGREEMENT", "Governing Law")
    text = item.source_text
    whole = "This Agreement shall be governed by the laws of the State of Nevada."
    start = text.index(whole)
    label(item, ann, 1, [[start, start + len(whole)]])
    part = "the State of Nevada"
    label(item, ben, 1, [[text.index(part), text.index(part) + len(part)]])
    resolved = clause_pool_resolutions(pool=pool)
    row = next(r for r in resolved.rows if r.item_id == item.public_id)
    assert row.state == OPEN and row.reason == "the lawyers highlight different spans"
    figure = {r.category: r for r in clause_agreement(resolutions=resolved.rows, texts=resolved.texts)}
    # tokens: 13 in the sentence, 4 in the part, 4 shared -> F1 = 2*4/17
    assert figure["Governing Law"].span_agreement == pytest.approx(8 / 17)
    other = _item(pool, "BETA-LICENSE AGREEMENT", "Governing Law")
    label(other, ann, 1, [[0, 7]])
    assert next(r for r in clause_pool_resolutions(pool=pool).rows if r.item_id == other.public_id).state == INCOMPLETE
    label(other, ben, 0)
    assert next(r for r in clause_pool_resolutions(pool=pool).rows
                if r.item_id == other.public_id).reason == "the lawyers disagree on presence"


def test_a_ruling_picks_a_set_and_is_recorded_append_only_with_its_spans():
    _, pool = cuad_fixture_set()
    ann, ben, judge = lawyer("ann"), lawyer("ben"), admin()
    item = _item(pool, "ALPHA-DISTRIBUTOR AGREEMENT", "Governing Law")
    label(item, ann, 1, [[5, 20]])
    label(item, ben, 1, [[15, 30], [40, 45]])
    view = clause_adjudication(pool=pool, item_id=item.public_id)
    assert [c.letter for c in view.columns] == ["A", "B"] and [c.username for c in view.columns] == ["ann", "ben"]
    assert "".join(s.text for s in view.segments) == item.source_text
    assert any(s.marks == "AB" for s in view.segments)
    presence, spans = ruling_spans(view=view, choice="union")
    clause_ruling_record(pool=pool, item_id=item.public_id, presence=presence, spans=spans, adjudicator=judge)
    row = next(r for r in clause_pool_resolutions(pool=pool).rows if r.item_id == item.public_id)
    assert row.state == ADJUDICATED and row.spans == spans_clean(text=item.source_text, spans=[[5, 30], [40, 45]])
    assert ruling_spans(view=view, choice="overlap") == (1, [[15, 20]])
    assert ruling_spans(view=view, choice="offsets", offsets="3-9\n\n12 - 14") == (1, [[3, 9], [12, 14]])
    with pytest.raises(RulingError, match="at least one span"):
        clause_ruling_record(pool=pool, item_id=item.public_id, presence=1, spans=[], adjudicator=judge)
    with pytest.raises(RulingError, match="not a non-empty range"):
        clause_ruling_record(pool=pool, item_id=item.public_id, presence=1, spans=[[0, 10**6]], adjudicator=judge)
    with pytest.raises(RulingError, match="may not adjudicate"):
        clause_ruling_record(pool=pool, item_id=item.public_id, presence=0, spans=[], adjudicator=ann)


def test_spans_are_stored_trimmed_sorted_and_merged():
    text = "  Governing law:  Nevada.  "
    assert spans_clean(text=text, spans=[[17, 27], [0, 16], [10, 18]]) == [[2, 25]]
    assert spans_clean(text=text, spans=[[0, 2]]) == []
    for bad in ([[3, 3]], [[-1, 2]], [[0, 99]], [["0", 2]], [[True, 2]], "0-2"):
        with pytest.raises(SpanError):
            spans_clean(text=text, spans=bad)


def test_freezing_keeps_resolved_contracts_says_why_others_are_left_out_and_is_idempotent():
    contract_set, pool = cuad_fixture_set()
    ann, ben, judge = lawyer("ann"), lawyer("ben"), admin()
    label_all_as_cuad(pool, ann, ben)
    # GAMMA: the lawyers disagree on Anti-Assignment; DELTA: one lawyer has not finished Governing Law
    gamma = _item(pool, "GAMMA-SUPPLY AGREEMENT", "Anti-Assignment")
    label(gamma, ben, 1, [[0, 16]])
    delta = _item(pool, "DELTA-SERVICES AGREEMENT", "Governing Law")
    label(delta, ben, 1, [[0, 8]], complete=False)  # ben reopened it: a draft counts for nothing
    first = gold_set_freeze(contract_set=contract_set, user=judge)
    gold = first.gold_set
    assert first.created and gold.version == 1 and len(gold.sha256) == 64
    assert [c["title"] for c in gold.content["contracts"]] == ["ALPHA-DISTRIBUTOR AGREEMENT", "BETA-LICENSE AGREEMENT"]
    assert {row["title"]: row["reasons"] for row in gold.left_out} == {
        "DELTA-SERVICES AGREEMENT": ["Governing Law: 1 of 2 lawyers have completed it"],
        "GAMMA-SUPPLY AGREEMENT": ["Anti-Assignment: the lawyers disagree on presence"],
    }
    alpha = gold.content["contracts"][0]
    assert alpha["answers"]["Governing Law"]["spans"][0]["text"] == (
        "This Agreement shall be governed by the laws of the State of Nevada.")
    assert gold.provenance["ALPHA-DISTRIBUTOR AGREEMENT"]["labelled_by"] == [
        {"id": ann.pk, "username": "ann"}, {"id": ben.pk, "username": "ben"}]
    assert gold.counts["adjudicated"] == 0 and gold.counts["contracts"] == 2 and gold.counts["left_out"] == 2
    again = gold_set_freeze(pool=pool, user=judge)
    assert not again.created and again.gold_set.pk == gold.pk
    # a ruling brings GAMMA in: new content, version 2, one category adjudicated
    presence, spans = cuad_answer(gamma)
    clause_ruling_record(pool=pool, item_id=gamma.public_id, presence=presence, spans=spans, adjudicator=judge)
    second = gold_set_freeze(contract_set=contract_set, user=judge).gold_set
    assert second.version == 2 and second.sha256 != gold.sha256
    assert second.counts["adjudicated"] == 1 and second.counts["contracts"] == 3
    assert second.provenance["GAMMA-SUPPLY AGREEMENT"]["categories"]["Anti-Assignment"] == {
        "state": "adjudicated", "procedure": "adjudicated", "pool": pool.public_id, "item": gamma.public_id,
        "lawyers": ["ann", "ben"], "admin_held": [], "adjudicator": "adjudicator"}
    assert second.counts["by_procedure"] == {"lawyer_blind": 8, "adjudicated": 1, "admin_own": 0}


def test_nothing_resolved_freezes_nothing_and_a_gold_set_is_append_only_in_the_database():
    contract_set, pool = cuad_fixture_set()
    with pytest.raises(GoldSetError, match="no contract has every category"):
        gold_set_freeze(contract_set=contract_set)
    label_all_as_cuad(pool, lawyer("ann"), lawyer("ben"))
    gold = gold_set_freeze(contract_set=contract_set).gold_set
    with pytest.raises(Exception, match="append-only"):
        gold.save()
    for sql in ("UPDATE grading_goldset SET version = 9", "DELETE FROM grading_goldset"):
        with pytest.raises(Exception, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql)
    assert GoldSet.objects.get(pk=gold.pk).version == 1
    with pytest.raises(IntegrityError), transaction.atomic():
        GoldSet.objects.create(contract_set=contract_set, version=2, sha256=gold.sha256, taxonomy_version=1,
                               taxonomy_sha256="", content={}, provenance={}, left_out=[], counts={}, agreement=[],
                               pools=[], created_by="")


def test_freezing_loads_the_gold_set_as_its_own_dataset_from_its_export_and_never_as_the_default():
    import hashlib

    from grading.contracts.gold.exports import gold_cuad_json
    from grading.dataset.models import Span
    from grading.dataset.selectors import dataset_current, dataset_of_gold_set

    contract_set, pool = cuad_fixture_set()
    default_before = dataset_current()
    label_all_as_cuad(pool, lawyer("ann"), lawyer("ben"))
    judge = admin()
    result = gold_set_freeze(contract_set=contract_set, user=judge)
    gold, dataset = result.gold_set, result.dataset
    assert dataset.is_gold and (dataset.contract_set_id, dataset.gold_set_version) == (contract_set.pk, gold.version)
    assert dataset_of_gold_set(contract_set_id=contract_set.pk, version=gold.version) == dataset
    assert dataset_current() == default_before  # grading a firm set is chosen, never the default
    assert dataset.sha256 == hashlib.sha256(gold_cuad_json(gold)).hexdigest()  # loaded from exactly the export
    stored = sorted((s.contract.title, s.category.name, s.text) for s in Span.objects.filter(contract__dataset=dataset))
    frozen = sorted((c["title"], name, span["text"]) for c in gold.content["contracts"]
                    for name, answer in c["answers"].items() for span in answer["spans"])
    assert stored == frozen and stored
    assert gold_set_freeze(contract_set=contract_set, user=judge).dataset == dataset  # same content, same dataset


def test_a_ruling_is_refused_where_no_two_lawyers_answered_and_disagreed():
    _, pool = cuad_fixture_set()
    ann, ben, judge = lawyer("ann"), lawyer("ben"), admin()
    item = _item(pool, "ALPHA-DISTRIBUTOR AGREEMENT", "Governing Law")
    presence, spans = cuad_answer(item)
    with pytest.raises(RulingError, match="a ruling resolves a dispute, and there is none: 0 lawyers completed it"):
        clause_ruling_record(pool=pool, item_id=item.public_id, presence=presence, spans=spans, adjudicator=judge)
    label(item, ann, presence, spans)
    with pytest.raises(RulingError, match="there is none: 1 lawyer completed it"):
        clause_ruling_record(pool=pool, item_id=item.public_id, presence=presence, spans=spans, adjudicator=judge)
    label(item, ben, presence, spans)
    with pytest.raises(RulingError, match="there is none: they agree"):
        clause_ruling_record(pool=pool, item_id=item.public_id, presence=0, spans=[], adjudicator=judge)
    assert {r.state for r in clause_pool_resolutions(pool=pool).rows if r.item_id == item.public_id} == {AGREED}


def test_a_ruling_on_an_undisputed_item_counts_as_the_admins_own_label_in_the_gold_set_and_its_sidecar():
    # A ruling on an item one lawyer answered is refused now, by the review engine's generic record as by the
    # clause page; one recorded before that rule stays, and the gold set takes it as the admin's label, never as
    # adjudicated.
    from grading.contracts.gold.provenance import gold_provenance_document, gold_set_origin
    from grading.contracts.gold.resolution import ADMIN_OWN
    from reviewapp.core.records.provenance import provenance_sentences
    from reviewapp.review.agreement.disagreements import adjudication_record
    from reviewapp.review.agreement.models import Adjudication

    contract_set, pool = cuad_fixture_set()
    ann, ben, judge = lawyer("ann"), lawyer("ben"), admin()
    label_all_as_cuad(pool, ann, ben)
    solo = _item(pool, "DELTA-SERVICES AGREEMENT", "Governing Law")
    label(solo, ben, 1, [[0, 8]], complete=False)  # ben reopened it: only ann's answer counts
    presence, spans = cuad_answer(solo)
    with pytest.raises(ReviewError, match=f"item {solo.public_id} \\(presence\\): .* none: 1 reviewer completed it"):
        adjudication_record(item=solo, grade_type="presence", value=presence, adjudicator=judge, spans=spans)
    assert not Adjudication.objects.filter(item=solo).exists()
    Adjudication.objects.create(item=solo, grade_type="presence", value=presence, spans=spans, adjudicator=judge,
                                query_hash=solo.query_hash, source_hash=solo.source_hash,
                                passage_hash=solo.passage_hash)  # as recorded before the rule
    row = next(r for r in clause_pool_resolutions(pool=pool).rows if r.item_id == solo.public_id)
    assert row.state == ADMIN_OWN and row.presence == presence

    gold = gold_set_freeze(contract_set=contract_set, user=judge).gold_set
    assert gold.counts["adjudicated"] == 0 and gold.counts["admin_own"] == 1
    assert gold.counts["by_procedure"] == {"lawyer_blind": 11, "adjudicated": 0, "admin_own": 1}
    sidecar = gold_provenance_document(gold)
    entry = next(e for e in sidecar["entries"] if e["id"] == "DELTA-SERVICES AGREEMENT__Governing Law")
    assert entry["procedure"] == "admin_own" and entry["adjudicator"] == "adjudicator" and entry["lawyers"] == ["ann"]
    assert len(sidecar["entries"]) == 12 and sidecar["gold_set"]["sha256"] == gold.sha256
    (sentence,) = provenance_sentences([gold_set_origin(gold)])
    assert sentence == (
        f"Labels from the firm's gold set v1 of Fixture set (sha256 {gold.sha256[:12]}…): 12 answers counted "
        "(11 agreed by 2 lawyers (ann, ben) answering blind; 1 set by adjudicator as their own label, with no "
        "lawyer dispute to resolve); 0 of the 23 lawyer answers saved with credentials an admin once held.")
    assert sidecar["provenance"][0]["sentence"] == sentence
