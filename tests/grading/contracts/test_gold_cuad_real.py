"""Real CUAD contracts labelled twice with CUAD's own answers: the lawyers' agreement is exactly 1."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from grading.contracts.gold.agreement import clause_agreement
from grading.contracts.gold.resolution import AGREED, clause_pool_resolutions
from grading.contracts.labelling import clause_pool_declare
from grading.contracts.services import contract_import, contract_set_get_or_create
from grading.dataset.cuad_file import read_cuad
from reviewapp.review.pools.refs import pool_model
from scoring.cuad.quotes import locate
from tests.grading.contracts.gold_support import label, lawyer

pytestmark = pytest.mark.django_db

CONTRACTS = 3


def test_three_cuad_contracts_labelled_twice_with_cuads_answers_agree_exactly_on_all_41_categories():
    cuad = read_cuad(Path(settings.DATA_DIR) / "cuad" / "CUAD_v1.json")
    chosen = cuad.contracts[:CONTRACTS]
    contract_set, _ = contract_set_get_or_create(name="CUAD twice")  # CUAD's 41 categories as taxonomy v1
    for contract in chosen:
        assert contract_import(contract_set=contract_set, filename=f"{contract.title}.txt",
                               data=contract.text.encode("utf-8")).status == "imported"
    pool = clause_pool_declare(contract_set=contract_set, name="CUAD twice")
    by_title = {c.title: c for c in chosen}
    ann, ben = lawyer("cuad-a"), lawyer("cuad-b")
    found = 0
    for item in pool_model(pool).items.all():
        answers = [s.text for s in by_title[item.source_heading].spans if s.category == item.query_id]
        located = [locate(item.source_text, text) for text in answers]
        spans = [[p.start, p.end] for p in located if p is not None]
        found += len(spans)
        for user in (ann, ben):
            label(item, user, 1 if answers else 0, spans)
    assert found >= 0.95 * sum(len(c.spans) for c in chosen)  # the stored text is CUAD's, lines normalised
    resolved = clause_pool_resolutions(pool=pool)
    assert len(resolved.rows) == CONTRACTS * 41 and {r.state for r in resolved.rows} == {AGREED}
    rows = clause_agreement(resolutions=resolved.rows, texts=resolved.texts)
    overall = rows[-1]
    assert overall.category == "ALL" and overall.contracts == CONTRACTS and overall.items == CONTRACTS * 41
    assert overall.span_agreement == 1.0 and overall.span_f1_present == 1.0 and overall.kappa == 1.0
    assert overall.ac1 == 1.0
    assert all(r.span_agreement == 1.0 for r in rows)
    assert all(r.kappa in (None, 1.0) for r in rows)  # undefined where both said the same everywhere
