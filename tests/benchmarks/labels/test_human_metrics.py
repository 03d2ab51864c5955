"""Human-label P@5 and pooled nDCG@5 through the review services and selectors, against ir_measures.

Every figure is computed end to end: pool declared from a rerank run, judgments
submitted with the review services, labels read back by the review selectors,
metrics from scoring. The reference is ir_measures (pytrec_eval) on the
labelled items only, so an unjudged item is simply absent from its qrels.
"""

from __future__ import annotations

import math
import random

import ir_measures
import numpy as np
import pytest
from ir_measures import P, nDCG

from benchmarks.labels.metrics import (
    SYSTEMS,
    HumanMetrics,
    human_inputs_load,
    human_metrics_as_json,
    human_metrics_compute,
)
from reviewapp.review.assignment.services import item_rebind
from scoring.stats.units import MIN_UNITS
from tests.benchmarks.labels.fixtures import declared_world, judge, random_grades, world_keys, world_reload
from tests.helpers import only_savepoint_tests, rows_for_the_module

REPLICATES = 1000


@pytest.fixture(scope="module")
def _world(django_db_setup, django_db_blocker):
    """The run and its declared pool, built once for the module; each test judges it in its own savepoint."""
    with rows_for_the_module(django_db_blocker, lambda: world_keys(*declared_world(
            seed=11, reviewer_names=("hm_rev_a", "hm_rev_b")))) as keys:
        yield keys


@pytest.fixture
def world(_world, request, db):
    only_savepoint_tests(request)
    return world_reload(_world)


def _compute(run, pool) -> HumanMetrics:
    return human_metrics_compute(human_inputs_load(rerank_run=run, pool=pool), replicates=REPLICATES, seed=3)


def _reference(metrics: HumanMetrics, labels: dict[tuple[str, str], int]) -> dict[tuple[str, str], float]:
    """ir_measures values per (system metric, qid) on qrels of the labelled items only."""
    qrels = [ir_measures.Qrel(qid, docid, grade) for (qid, docid), grade in labels.items()]
    out = {}
    for system in SYSTEMS:
        run = [ir_measures.ScoredDoc(r.qid, docid, float(len(ranked) - i))
               for r in metrics.inputs.rankings for ranked in [getattr(r, system)] for i, docid in enumerate(ranked)]
        for m in ir_measures.iter_calc([P(rel=2) @ 5, nDCG @ 5], qrels, run):
            name = "P@5" if str(m.measure).startswith("P") else "nDCG@5"
            out[(f"{system} {name}", m.query_id)] = m.value
    return out


def _check_against_reference(metrics: HumanMetrics, labels: dict[tuple[str, str], int]) -> None:
    reference = _reference(metrics, labels)
    for q in metrics.queries:
        ranking = next(r for r in metrics.inputs.rankings if r.qid == q.qid)
        pool = metrics.inputs.members[q.qid]
        for system in SYSTEMS:
            top5 = getattr(ranking, system)[:5]
            p5 = q.values[f"{system} P@5"]
            if all((q.qid, d) in labels for d in top5):
                assert p5 == pytest.approx(reference[(f"{system} P@5", q.qid)])
            else:
                assert p5 is None
            ndcg = q.values[f"{system} nDCG@5"]
            if all((q.qid, d) in labels for d in pool):
                assert ndcg == pytest.approx(reference[(f"{system} nDCG@5", q.qid)], abs=1e-9)
            else:
                assert ndcg is None
    for s in metrics.splits:
        for system in SYSTEMS:
            values = [q.values[f"{system} {s.metric}"] for q in metrics.queries if q.split == s.split]
            defined = [v for v in values if v is not None]
            figure = getattr(s, system)
            assert (figure.included, figure.excluded) == (len(defined), len(values) - len(defined))
            if defined:
                assert figure.interval.estimate == pytest.approx(np.mean(defined))
                if figure.families >= MIN_UNITS:
                    assert figure.interval.low - 1e-12 <= figure.interval.estimate <= figure.interval.high + 1e-12
                else:  # too few query families: no interval, and the reason in words
                    assert not figure.interval.has_bounds and "at least 3 needed" in figure.interval.note
            else:
                assert math.isnan(figure.interval.estimate)


@pytest.mark.parametrize("seed", [1, 2])
def test_p5_and_pooled_ndcg_match_ir_measures_on_a_randomly_judged_pool(world, seed):
    run, pool, reviewers = world
    grades = random_grades(pool, seed=seed)
    rng = random.Random(seed)
    skipped = set(rng.sample(sorted(grades), k=len(grades) // 6))
    judge(pool, reviewers, {k: g for k, g in grades.items() if k not in skipped})
    metrics = _compute(run, pool)
    labels = {k: g for k, g in grades.items() if k not in skipped}
    assert metrics.inputs.labels == labels
    _check_against_reference(metrics, labels)
    assert any(q.values["keyword P@5"] is None for q in metrics.queries)  # the skips excluded something


def test_a_fully_judged_pool_defines_every_query_for_both_systems(world):
    run, pool, reviewers = world
    grades = random_grades(pool, seed=9)
    judge(pool, reviewers, grades)
    metrics = _compute(run, pool)
    _check_against_reference(metrics, grades)
    for s in metrics.splits:
        assert s.keyword.excluded == s.reranked.excluded == 0 and s.paired_included == s.queries == 6
        assert s.difference.estimate == pytest.approx(s.reranked.interval.estimate - s.keyword.interval.estimate)


def test_an_unjudged_item_changes_excluded_never_the_value(world):
    run, pool, reviewers = world
    grades = random_grades(pool, seed=4)
    # One item in the keyword top five of one query stays unjudged at first.
    ranking = next(r for r in human_inputs_load(rerank_run=run, pool=pool).rankings if r.qid == "q03")
    held_back = ("q03", ranking.keyword[0])
    judge(pool, reviewers, {k: g for k, g in grades.items() if k != held_back})
    before = _compute(run, pool)
    judge(pool, reviewers, {held_back: grades[held_back]})
    after = _compute(run, pool)
    for q_before, q_after in zip(before.queries, after.queries, strict=True):
        for key, value in q_before.values.items():
            if q_before.qid == "q03" and (key.endswith("nDCG@5") or key == "keyword P@5"):
                assert value is None and q_after.values[key] is not None
            else:
                assert value == q_after.values[key]
    for s_before, s_after in zip(before.splits, after.splits, strict=True):
        for system in SYSTEMS:
            b, a = getattr(s_before, system), getattr(s_after, system)
            changed = s_before.split == "heldout" and (s_before.metric == "nDCG@5" or system == "keyword")
            assert (b.excluded, b.included) == ((a.excluded + 1, a.included - 1) if changed else
                                                (a.excluded, a.included))
            others = [q.values[f"{system} {s_after.metric}"] for q in after.queries
                      if q.split == s_after.split and not (changed and q.qid == "q03")]
            assert b.interval.estimate == pytest.approx(np.mean(others))


def test_draft_judgments_never_count(world):
    run, pool, reviewers = world
    judge(pool, reviewers, random_grades(pool, seed=5), complete=False)
    metrics = _compute(run, pool)
    assert metrics.inputs.labels == {} and not metrics.has_labels
    assert metrics.inputs.pool.label_states["unjudged"] == pool.items.count()
    for s in metrics.splits:
        assert s.keyword.included == s.reranked.included == 0 and math.isnan(s.keyword.interval.estimate)
    rows = human_metrics_as_json(metrics)["summary"]
    assert all(row["estimate"] is None for row in rows)


def test_stale_judgments_are_excluded_and_counted(world):
    run, pool, reviewers = world
    grades = random_grades(pool, seed=6)
    judge(pool, reviewers, grades)
    item = pool.items.get(query_id="q00", doc_id=sorted(d for q, d in grades if q == "q00")[0])
    item_rebind(item=item, passage_text=item.passage_text + " (amended)")
    metrics = _compute(run, pool)
    assert ("q00", item.doc_id) not in metrics.inputs.labels
    assert metrics.inputs.pool.stale_judgments == 2 and metrics.inputs.pool.labelled == len(grades) - 1
    q00 = next(q for q in metrics.queries if q.qid == "q00")
    assert q00.values["keyword nDCG@5"] is None and q00.values["reranked nDCG@5"] is None
    _check_against_reference(metrics, {k: g for k, g in grades.items() if k != ("q00", item.doc_id)})


def test_disagreement_and_unknown_leave_an_item_without_a_label(world):
    run, pool, reviewers = world
    grades = random_grades(pool, seed=7)
    keys = sorted(grades)
    judge(pool, reviewers, {**grades, keys[0]: (0, 3), keys[1]: ("unknown", "unknown")})
    metrics = _compute(run, pool)
    assert keys[0] not in metrics.inputs.labels and keys[1] not in metrics.inputs.labels
    states = metrics.inputs.pool.label_states
    assert states["disagree"] == 1 and states["unknown"] == 1 and states["labelled"] == len(keys) - 2
    _check_against_reference(metrics, {k: g for k, g in grades.items() if k not in keys[:2]})


def test_an_adjudication_resolves_a_disagreement(world, admin_user_):
    from reviewapp.review.agreement.disagreements import adjudication_record

    run, pool, reviewers = world
    grades = random_grades(pool, seed=8)
    key = sorted(grades)[0]
    judge(pool, reviewers, {**grades, key: (1, 2)})
    adjudication_record(item=pool.items.get(query_id=key[0], doc_id=key[1]), grade_type="passage", value=2,
                        adjudicator=admin_user_)
    metrics = _compute(run, pool)
    assert metrics.inputs.labels[key] == 2
    _check_against_reference(metrics, {**grades, key: 2})


def test_the_page_and_api_show_reviewer_alpha_with_its_interval_over_query_families(world, stakeholder_client):
    import krippendorff

    run, pool, reviewers = world
    rng = random.Random(12)
    # Two reviewers who mostly agree, so alpha is defined and not trivially 1.
    grades = {}
    for key, g in random_grades(pool, seed=12).items():
        other = g if rng.random() < 0.7 else min(3, max(0, g + rng.choice([-1, 1])))
        grades[key] = (g, other)
    judge(pool, reviewers, grades)
    query = "replicates=2000&seed=5"
    html = stakeholder_client.get(f"/benchmarks/labels/rerank/{run.pk}/human-metrics/?{query}").content.decode()
    api = stakeholder_client.get(f"/api/v1/benchmarks/rerank-runs/{run.pk}/human-metrics/?{query}").json()
    alpha = api["reviewer_agreement"]["krippendorff_alpha_ordinal"]

    keys = sorted(grades)
    matrix = np.array([[grades[k][r] for k in keys] for r in range(2)], dtype=float)
    assert alpha["estimate"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal"), abs=1e-6)
    families = {r.qid: r.family for r in human_inputs_load(rerank_run=run, pool=pool).rankings}
    n_families = len({families[qid] for qid, _ in keys})
    assert (alpha["unit"], alpha["units"], alpha["observations"]) == ("query family", n_families, len(keys))
    assert (alpha["replicates"], alpha["seed"]) == (2000, 5)
    assert alpha["low"] <= alpha["estimate"] <= alpha["high"]
    block = html.split('data-testid="alpha-interval">')[1].split("</small>")[0]
    assert f"<strong>{alpha['estimate']:.3f}</strong>" in block
    assert f"[{alpha['low']:.3f}, {alpha['high']:.3f}]" in block
    assert (f"95% percentile bootstrap interval over {n_families} query families ({len(keys)} pairable items), "
            "2000 resamples of query families, seed 5") in block
    # Stakeholders read this page: the reviewers are counted, never named.
    section = html.split('id="reviewer-agreement"')[1].split("</section>")[0]
    assert all(r.username not in section for r in reviewers)
    exported = stakeholder_client.get(
        f"/benchmarks/labels/rerank/{run.pk}/human-metrics/human-metrics.json?{query}").json()
    assert exported["reviewer_agreement"] == api["reviewer_agreement"]
