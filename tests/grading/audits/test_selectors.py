"""CUAD label audit figures: kappa and the 2x2 table against scikit-learn, credited recall against a fresh grade."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from grading.audits.selectors import audit_agreement, audit_report, credit_extractions
from grading.dataset.models import Contract
from grading.dataset.selectors import sample_contract_ids
from grading.dataset.services import cuad_load
from grading.runs.selectors import run_pair_table
from grading.runs.services import extraction_run_import
from grading.scorecard.selectors import run_scorecard
from scoring.cuad.grading import Thresholds
from scoring.stats.agreement import landis_koch_band
from scoring.stats.units import MIN_UNITS
from tests.grading.audit_support import audited_run, local_audit, set_verdicts
from tests.grading.cuad_fixture import contracts, cuad_bytes
from tests.references import accuracy_score, cohen_kappa_score, confusion_matrix


@pytest.fixture
def audited(db, tmp_path):
    return audited_run(tmp_path)


# ---------------------------------------------------------------------------
# Agreement against scikit-learn


def _kappa_matches(ours, a, b) -> None:
    if len(set(a) | set(b)) < 2:
        assert ours.kappa is None
        return
    reference = cohen_kappa_score(a, b)
    if math.isnan(reference):
        assert ours.kappa is None
    else:
        assert ours.kappa == pytest.approx(reference, abs=1e-12)
        assert ours.band == landis_koch_band(reference)


def test_kappa_raw_agreement_and_the_2x2_table_match_scikit_learn_on_random_verdicts():
    rng = np.random.default_rng(2024)
    for _ in range(300):
        n = int(rng.integers(1, 60))
        a = rng.random(n) < rng.random()
        b = np.where(rng.random(n) < rng.random(), a, rng.random(n) < rng.random())
        ours = audit_agreement(verdicts_a=a.tolist(), verdicts_b=b.tolist(),
                               contracts=[f"c{i % 7}" for i in range(n)])
        _kappa_matches(ours, a.tolist(), b.tolist())
        assert ours.raw_agreement == pytest.approx(accuracy_score(a, b))
        assert ours.table == confusion_matrix(a, b, labels=[False, True]).tolist()


def test_the_audit_report_kappa_matches_scikit_learn_over_stored_verdicts(tmp_path, db):
    _, run = audited_run(tmp_path, extra=12)
    audit = local_audit(run)
    rng = np.random.default_rng(5)
    n = audit.n_candidates
    a = (rng.random(n) < 0.6).tolist()
    b = [x if rng.random() < 0.7 else not x for x in a]
    set_verdicts(audit, {"a": a, "b": b})
    report = audit_report(audit=audit)
    _kappa_matches(report.agreement, a, b)
    assert report.agreement.n == n and report.agreement.table == confusion_matrix(a, b, labels=[False, True]).tolist()


def _loop_kappa_interval(a, b, contracts, *, replicates, seed):
    """Reference: draw contracts (numbered in sorted order) with the same RNG stream, scikit-learn kappa per draw."""
    names = sorted(set(contracts))
    members = [[i for i, c in enumerate(contracts) if c == name] for name in names]
    values = []
    for row in np.random.default_rng(seed).integers(0, len(names), (replicates, len(names))):
        rows = [i for u in row for i in members[u]]
        xa, xb = [a[i] for i in rows], [b[i] for i in rows]
        values.append(math.nan if len(set(xa) | set(xb)) < 2 else cohen_kappa_score(xa, xb, labels=[False, True]))
    values = np.array(values)
    return np.percentile(values[~np.isnan(values)], [2.5, 97.5]), int(np.isnan(values).sum())


def test_the_audit_kappa_interval_resamples_contracts_like_a_scikit_learn_loop(tmp_path, db):
    _, run = audited_run(tmp_path, extra=12)
    audit = local_audit(run)
    rng = np.random.default_rng(7)
    n = audit.n_candidates
    a = (rng.random(n) < 0.6).tolist()
    b = [x if rng.random() < 0.7 else not x for x in a]
    set_verdicts(audit, {"a": a, "b": b})
    interval = audit_report(audit=audit).agreement.kappa_interval
    contracts = [str(c) for c in audit.candidates.order_by("position").values_list("contract_id", flat=True)]
    (low, high), undefined = _loop_kappa_interval(a, b, contracts, replicates=interval.replicates, seed=interval.seed)
    assert (interval.unit, interval.units, interval.observations) == ("contract", len(set(contracts)), n)
    assert (interval.replicates, interval.seed) == (1000, 0)
    assert interval.undefined == undefined
    if interval.units < MIN_UNITS:  # the fixture's two contracts: the rule withholds the loop's interval
        assert not interval.has_interval and "too few for an interval" in interval.caveat
    else:
        assert [interval.interval.low, interval.interval.high] == pytest.approx([low, high], abs=1e-12)


def test_unruled_candidates_and_contracts_without_a_shared_ruling_take_no_part_in_the_kappa_draw():
    a = [True, False, True, None, True, False]
    b = [True, False, False, True, None, True]
    contracts = ["c1", "c1", "c2", "c3", "c4", "c2"]
    ours = audit_agreement(verdicts_a=a, verdicts_b=b, contracts=contracts, replicates=300, seed=2)
    assert (ours.kappa_interval.units, ours.kappa_interval.observations) == (2, 4)
    assert ours.kappa_interval.interval.estimate == pytest.approx(ours.kappa, abs=1e-12)


# ---------------------------------------------------------------------------
# Impact: credited recall


def test_credited_recall_equals_a_fresh_grade_with_the_confirmed_candidates_added_to_cuad(tmp_path, db):
    loaded, run = audited_run(tmp_path, extra=10)
    audit = local_audit(run)
    candidates = list(audit.candidates.select_related("contract", "category").order_by("position"))
    rng = np.random.default_rng(9)
    verbatim = [c.text in c.contract.text for c in candidates]
    a = [bool(v and rng.random() < 0.7) for v in verbatim]
    b = [bool(x and rng.random() < 0.8) or (not x and rng.random() < 0.3) for x in a]
    set_verdicts(audit, {"a": a, "b": b})
    confirmed = [c for c, x, y in zip(candidates, a, b, strict=True) if x and y]
    assert confirmed

    report = audit_report(audit=audit)
    before, both = report.impact.row("before"), report.impact.row("both")
    k = len(confirmed)
    assert both.credited == k
    c0, s0 = before.figures.credit, before.figures.counts["spans"]
    assert both.figures.counts["spans"] == s0 + k
    assert both.figures.recall.estimate == pytest.approx((c0 + k) / (s0 + k))
    assert both.figures.precision.estimate == pytest.approx((c0 + k) / before.figures.counts["extractions"])
    assert report.impact.row("a").credited == sum(a) and report.impact.row("b").credited == sum(b)

    # Independent path: a CUAD file where the confirmed candidates ARE spans, the same run imported and graded.
    items = contracts()
    by_title = {c["title"]: c for c in items}
    for c in confirmed:
        item = by_title[c.contract.title]
        item["answers"][c.category.name].append((item["context"].index(c.text), c.text))
    path = tmp_path / "CUAD_credited.json"
    path.write_bytes(cuad_bytes(items))
    dataset = cuad_load(path=path).dataset
    rerun, _ = extraction_run_import(
        dataset=dataset, raw=json.dumps({"model": run.model, "extractions": [
            {"contract": e.contract.title, "category": e.category.name, "text": e.text}
            for e in run.extractions.select_related("contract", "category").order_by("position")
        ]})
    )
    ids = dict(Contract.objects.filter(dataset=dataset).values_list("title", "id"))
    titles = dict(Contract.objects.filter(dataset=loaded.dataset).values_list("id", "title"))
    scope = [ids[titles[pk]] for pk in sample_contract_ids(sample=loaded.sample)]
    fresh = run_scorecard(run=rerun, contract_ids=scope, thresholds=Thresholds())
    assert fresh.overall.counts == both.figures.counts
    assert fresh.overall.recall.estimate == pytest.approx(both.figures.recall.estimate)
    for name in ("precision", "recall", "f1"):
        mine, ref = getattr(both.figures, name), getattr(fresh.overall, name)
        assert (mine.estimate, mine.low, mine.high) == pytest.approx((ref.estimate, ref.low, ref.high))


def test_crediting_refuses_an_extraction_that_already_has_a_cuad_span(audited):
    _, run = audited
    audit = local_audit(run)
    pairs = run_pair_table(run=run, contract_ids=sample_contract_ids(sample=audit.sample))
    matched = int(np.flatnonzero(pairs.table.ext_span >= 0)[0])
    with pytest.raises(ValueError, match="already matched"):
        credit_extractions(pairs.table, [matched])


def test_the_audit_agreement_explains_the_kappa_paradox_with_gwet_ac1_and_prevalence():
    # Judge A says no to all six candidates, judge B to five: 5 of 6 agree, kappa 0, AC1 98/122.
    ours = audit_agreement(verdicts_a=[False] * 6, verdicts_b=[False] * 5 + [True],
                           contracts=["c1", "c1", "c2", "c2", "c3", "c3"], replicates=200, seed=1)
    assert ours.kappa == pytest.approx(0.0) and ours.agreements == 5
    assert ours.ac1 == pytest.approx(98 / 122) and ours.pabak == pytest.approx(2 / 3)
    assert ours.prevalence == (("no", pytest.approx(11 / 12)), ("yes", pytest.approx(1 / 12)))
    assert ours.paradox_note == ("5 of 6 agree and kappa 0.000: one grade (no, 92% of grades) is so common that "
                                 "chance agreement is high; Gwet's AC1 0.80 is robust to that.")
    assert ours.ac1_interval.interval.estimate == pytest.approx(ours.ac1) and ours.ac1_interval.units == 3
