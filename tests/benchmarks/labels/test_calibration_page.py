"""Calibration against human passage labels (vs scikit-learn), the pages, exports, API and permissions."""

from __future__ import annotations

import csv
import io
import json
import random

import numpy as np
import pytest

from benchmarks.labels.metrics import Calibration, calibration_compute, human_inputs_load
from benchmarks.labels.pools import review_pool_declare
from reviewapp.review.pools.refs import pool_model
from tests.benchmarks.labels.fixtures import declared_world, judge, random_grades, world_keys, world_reload
from tests.helpers import only_savepoint_tests, rows_for_the_module
from tests.references import brier_score_loss, calibration_curve


@pytest.fixture(scope="module")
def _world(django_db_setup, django_db_blocker):
    """The run and its declared pool, built once for the module; each test judges it in its own savepoint."""
    with rows_for_the_module(django_db_blocker, lambda: world_keys(*declared_world(
            seed=21, reviewer_names=("cal_rev_a", "cal_rev_b"), queries=8))) as keys:
        yield keys


@pytest.fixture
def world(_world, request, db):
    only_savepoint_tests(request)
    return world_reload(_world)


def _calibration(run, pool) -> Calibration:
    return calibration_compute(human_inputs_load(rerank_run=run, pool=pool))


def _check_against_sklearn(calibration: Calibration, labels: dict[tuple[str, str], int]) -> None:
    inputs = calibration.inputs
    split_of = {r.qid: r.split for r in inputs.rankings}
    for s in calibration.splits:
        keys = [k for k in labels if split_of[k[0]] == s.split and k in inputs.distributions]
        dists = np.array([inputs.distributions[k] for k in keys])
        p = (dists[:, 2] + dists[:, 3]) / dists.sum(axis=1)
        y = np.array([labels[k] >= 2 for k in keys], dtype=int)
        assert s.summary.included == len(keys)
        assert s.summary.brier == pytest.approx(brier_score_loss(y, p))
        prob_true, prob_pred = calibration_curve(y, p, n_bins=5, strategy="uniform")
        filled = [b for b in s.summary.bins if b.count]
        assert [b.observed_rate for b in filled] == pytest.approx(list(prob_true))
        assert [b.mean_predicted for b in filled] == pytest.approx(list(prob_pred))
        counts, _ = np.histogram(p, bins=[0, 0.2, 0.4, 0.6, 0.8, 1.0])
        assert [b.count for b in s.summary.bins] == list(counts)
        ece = sum(n / len(p) * abs(pp - pt) for n, pt, pp in zip(counts[counts > 0], prob_true, prob_pred,
                                                                  strict=True))
        assert s.summary.ece == pytest.approx(ece)
        above = p >= 0.8
        assert s.summary.diagnostic.at_or_above == above.sum()
        assert s.summary.diagnostic.judged_useful == y[above].sum()
        agree = dists.argmax(axis=1) == np.array([labels[k] for k in keys])
        confidence = dists.max(axis=1) / dists.sum(axis=1)
        for b in s.summary.agreement_bins:
            inside = (confidence >= b.low) & ((confidence < b.high) if b.high < 1 else (confidence <= 1))
            assert b.count == inside.sum()
            if b.count:
                assert b.exact_agreement == pytest.approx(agree[inside].mean())


@pytest.mark.parametrize("seed", [1, 2])
def test_brier_reliability_ece_and_agreement_match_scikit_learn_per_split(world, seed):
    run, pool, reviewers = world
    grades = random_grades(pool, seed=seed)
    skipped = set(random.Random(seed).sample(sorted(grades), k=len(grades) // 5))
    labels = {k: g for k, g in grades.items() if k not in skipped}
    judge(pool, reviewers, labels)
    calibration = _calibration(run, pool)
    _check_against_sklearn(calibration, labels)
    declared = sum(s.declared for s in calibration.splits)
    assert declared == pool_model(pool).items.count()
    assert sum(s.no_label for s in calibration.splits) == len(skipped)


def test_an_unjudged_item_changes_excluded_never_the_value(world):
    run, pool, reviewers = world
    grades = random_grades(pool, seed=3)
    distributions = human_inputs_load(rerank_run=run, pool=pool).distributions
    held_back = sorted(k for k in grades if k in distributions)[0]
    judge(pool, reviewers, {k: g for k, g in grades.items() if k != held_back})
    before = _calibration(run, pool)
    _check_against_sklearn(before, {k: g for k, g in grades.items() if k != held_back})
    judge(pool, reviewers, {held_back: grades[held_back]})
    after = _calibration(run, pool)
    split = next(r.split for r in after.inputs.rankings if r.qid == held_back[0])
    b, a = (next(s for s in c.splits if s.split == split) for c in (before, after))
    assert (b.no_label, b.summary.included) == (a.no_label + 1, a.summary.included - 1)


def test_draft_and_stale_judgments_never_count(world):
    from reviewapp.review.assignment.services import item_rebind

    run, pool, reviewers = world
    grades = random_grades(pool, seed=4)
    judge(pool, reviewers, grades, complete=False)
    assert not _calibration(run, pool).has_labels
    judge(pool, reviewers, grades)
    item = pool_model(pool).items.order_by("query_id", "doc_id").first()
    item_rebind(item=item, source_text=item.source_text + " Amended.")
    calibration = _calibration(run, pool)
    _check_against_sklearn(calibration, {k: g for k, g in grades.items() if k != (item.query_id, item.doc_id)})
    assert calibration.inputs.pool.stale_judgments == 2


def _page(client, run, suffix: str = "", pool: str = ""):
    return client.get(f"/benchmarks/labels/rerank/{run.pk}/calibration/{suffix}" + (f"?pool={pool}" if pool else ""))


def test_a_stakeholder_reads_brier_ece_and_the_diagram_per_split_with_the_caveats(world, stakeholder_client):
    run, pool, reviewers = world
    grades = random_grades(pool, seed=5)
    skipped = sorted(grades)[:3]
    judge(pool, reviewers, {k: g for k, g in grades.items() if k not in skipped})
    response = _page(stakeholder_client, run)
    html = response.content.decode()
    assert response.status_code == 200
    calibration = _calibration(run, pool)
    assert "Cannot establish population calibration" in html and "selected pool" in html
    assert pool.declared_rule in html.replace("&#x27;", "'")
    assert f"<strong>{len(grades) - 3}</strong> of <strong>{len(grades)}</strong> items" in html
    for s in calibration.splits:
        assert f'data-testid="brier-interval-{s.split}"><strong>{s.summary.brier:.3f}</strong>' in html
        assert f'data-testid="ece-interval-{s.split}"><strong>{s.summary.ece:.3f}</strong>' in html
        assert f'aria-labelledby="reliability-{s.split}-title"' in html
    assert html.count("<svg") == 2 and "diagnostic, not a production cutoff" in html
    assert "not the probability that the grade is right" in html


def test_with_no_completed_labels_the_page_says_so_and_shows_no_figures(world, stakeholder_client):
    run, _pool, _reviewers = world
    html = _page(stakeholder_client, run).content.decode()
    assert "No completed labels yet" in html
    assert 'data-testid="brier-interval-dev"><strong>undefined</strong>' in html
    assert "no labelled items: Brier score is not computed" in html
    payload = _page(stakeholder_client, run, "calibration.json").json()
    assert all(row["brier"] is None and row["included"] == 0 for row in payload["summary"])


def test_a_synthetic_demo_pool_is_flagged_and_never_the_default(world, stakeholder_client, reviewer_user,
                                                                 reviewer2_user):
    from benchmarks.labels.demo import _synthetic_accounts

    run, _pool, _reviewers = world
    # A synthetic pool takes only the demo's generator accounts, never a real reviewer.
    generators = _synthetic_accounts()
    fake = review_pool_declare(rerank_run=run, reviewers=generators, name="DEMO SYNTHETIC",
                               extra_params={"synthetic": True}).pool
    judge(fake, generators, random_grades(fake, seed=6))
    default = _page(stakeholder_client, run).content.decode()
    assert "No completed labels yet" in default and f"?pool={fake.public_id}" in default
    flagged = _page(stakeholder_client, run, pool=fake.public_id).content.decode()
    assert "DEMO DATA, NOT HUMAN LABELS" in flagged and "demo-synthetic-labels" in flagged
    payload = _page(stakeholder_client, run, "calibration.json", pool=fake.public_id).json()
    assert payload["pool"]["synthetic"] is True and payload["caveats"][0].startswith("DEMO DATA")


def test_every_export_parses_and_agrees_with_the_json_and_the_api(world, stakeholder_client):
    run, pool, reviewers = world
    judge(pool, reviewers, random_grades(pool, seed=7))
    payload = _page(stakeholder_client, run, "calibration.json").json()
    for name, key in (("summary.csv", "summary"), ("reliability.csv", "reliability"),
                      ("agreement.csv", "agreement"), ("items.csv", "items")):
        response = _page(stakeholder_client, run, name)
        assert response["Content-Type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(response.content.decode())))
        assert len(rows) == len(payload[key])
        for row, expected in zip(rows, payload[key], strict=True):
            assert row.keys() == expected.keys()
            for column, value in expected.items():
                assert row[column] == ("" if value is None else str(value))
    api = stakeholder_client.get(f"/api/v1/benchmarks/rerank-runs/{run.pk}/calibration/").json()
    assert json.loads(json.dumps(api)) == payload
    human = stakeholder_client.get(f"/benchmarks/labels/rerank/{run.pk}/human-metrics/human-metrics.json"
                                   "?replicates=1000").json()
    api_human = stakeholder_client.get(f"/api/v1/benchmarks/rerank-runs/{run.pk}/human-metrics/?replicates=1000").json()
    assert api_human["summary"] == human["summary"] and api_human["pool"] == human["pool"]
    assert [q["qid"] for q in api_human["queries"]] == [q["qid"] for q in human["queries"]]
    for name, key in (("summary.csv", "summary"), ("queries.csv", "queries")):
        text = stakeholder_client.get(f"/benchmarks/labels/rerank/{run.pk}/human-metrics/{name}?replicates=1000")
        assert len(list(csv.DictReader(io.StringIO(text.content.decode())))) == len(human[key])
    page = stakeholder_client.get(f"/benchmarks/labels/rerank/{run.pk}/human-metrics/?replicates=1000").content.decode()
    assert "ideal ranking uses only the judged grades" in page and "never a zero" in page
    pools = stakeholder_client.get(f"/api/v1/benchmarks/rerank-runs/{run.pk}/review-pools/").json()
    assert [p["public_id"] for p in pools] == [pool.public_id]


def test_reviewers_get_403_and_anonymous_users_the_login_page_everywhere(world, reviewer_client, client):
    run, _pool, _reviewers = world
    base = f"/benchmarks/labels/rerank/{run.pk}"
    urls = [f"{base}/calibration/", f"{base}/calibration/items.csv", f"{base}/calibration/calibration.json",
            f"{base}/human-metrics/", f"{base}/human-metrics/queries.csv", f"{base}/review-pool/"]
    api = [f"/api/v1/benchmarks/rerank-runs/{run.pk}/{name}/" for name in ("calibration", "human-metrics",
                                                                          "review-pools")]
    for url in urls + api:
        assert reviewer_client.get(url).status_code == 403, url
    for url in urls:
        assert client.get(url).status_code == 302, url
    for url in api:
        assert client.get(url).status_code in (401, 403), url


def test_a_bad_pool_or_bootstrap_setting_gets_a_message(world, stakeholder_client):
    run, _pool, _reviewers = world
    assert _page(stakeholder_client, run, pool="nope").status_code == 400
    response = stakeholder_client.get(f"/benchmarks/labels/rerank/{run.pk}/human-metrics/?replicates=5")
    assert response.status_code == 400 and "replicates must be between" in response.content.decode()
    assert stakeholder_client.get(f"/benchmarks/labels/rerank/{run.pk}/calibration/nope.csv").status_code == 404


def _family_loop(calibration: Calibration, split: str, labels, *, replicates: int, seed: int):
    """Reference: resample the split's query families with the same RNG stream; scikit-learn Brier, hand ECE."""
    inputs = calibration.inputs
    ranking = {r.qid: r for r in inputs.rankings}
    keys = sorted(k for k in labels if ranking[k[0]].split == split and k in inputs.distributions)
    dists = np.array([inputs.distributions[k] for k in keys])
    p = (dists[:, 2] + dists[:, 3]) / dists.sum(axis=1)
    y = np.array([labels[k] >= 2 for k in keys], dtype=int)
    families = sorted({ranking[k[0]].family for k in keys})
    members = [[i for i, k in enumerate(keys) if ranking[k[0]].family == f] for f in families]
    # A resample's Brier and ECE depend only on how often it drew each family, not on the order: each distinct draw
    # is computed once (ten for this world's three families a split), not a thousand scikit-learn calls a split.
    figures: dict[tuple[int, ...], tuple[float, float]] = {}
    brier, ece = [], []
    for row in np.random.default_rng(seed).integers(0, len(families), (replicates, len(families))):
        drawn = tuple(sorted(row.tolist()))
        if drawn not in figures:
            rows = [i for u in drawn for i in members[u]]
            _, edges = np.histogram(p[rows], bins=[0, 0.2, 0.4, 0.6, 0.8, 1.0])
            which = np.clip(np.searchsorted(edges[1:-1], p[rows], side="right"), 0, 4)
            figures[drawn] = (brier_score_loss(y[rows], p[rows]),
                              sum(abs(p[rows][which == b].sum() - y[rows][which == b].sum()) for b in range(5))
                              / len(rows))
        brier.append(figures[drawn][0])
        ece.append(figures[drawn][1])
    return len(families), len(keys), np.percentile(brier, [2.5, 97.5]), np.percentile(ece, [2.5, 97.5])


def test_brier_and_ece_intervals_resample_query_families_like_a_scikit_learn_loop(world):
    run, pool, reviewers = world
    grades = random_grades(pool, seed=8)
    judge(pool, reviewers, grades)
    calibration = calibration_compute(human_inputs_load(rerank_run=run, pool=pool), replicates=1000, seed=4)
    for s in calibration.splits:
        families, items, brier, ece = _family_loop(calibration, s.split, grades, replicates=1000, seed=4)
        for figure, (low, high) in ((s.intervals.brier, brier), (s.intervals.ece, ece)):
            assert (figure.unit, figure.units, figure.observations) == ("query family", families, items)
            assert (figure.replicates, figure.seed, figure.undefined) == (1000, 4, 0)
            assert [figure.interval.low, figure.interval.high] == pytest.approx([low, high], abs=1e-12)
        assert s.intervals.brier.interval.estimate == pytest.approx(s.summary.brier, abs=1e-12)
        assert s.intervals.ece.interval.estimate == pytest.approx(s.summary.ece, abs=1e-12)


def test_the_page_api_and_exports_show_brier_and_ece_intervals_with_families_items_resamples_and_seed(
        world, stakeholder_client):
    run, pool, reviewers = world
    judge(pool, reviewers, random_grades(pool, seed=9))
    query = "replicates=2000&seed=17"
    html = stakeholder_client.get(f"/benchmarks/labels/rerank/{run.pk}/calibration/?{query}").content.decode()
    calibration = calibration_compute(human_inputs_load(rerank_run=run, pool=pool), replicates=2000, seed=17)
    payload = stakeholder_client.get(f"/api/v1/benchmarks/rerank-runs/{run.pk}/calibration/?{query}").json()
    exported = stakeholder_client.get(f"/benchmarks/labels/rerank/{run.pk}/calibration/summary.csv?{query}")
    csv_rows = {r["split"]: r for r in csv.DictReader(io.StringIO(exported.content.decode()))}
    assert payload["bootstrap"] == {"replicates": 2000, "seed": 17, "level": 0.95, "unit": "query family",
                                    "method": "percentile; Brier and ECE on the same resamples of query families"}
    for s in calibration.splits:
        for name, figure in (("brier", s.intervals.brier), ("ece", s.intervals.ece)):
            low, high = figure.interval.low, figure.interval.high
            block = html.split(f'data-testid="{name}-interval-{s.split}">')[1].split("</span></td>")[0]
            assert f"[{low:.3f}, {high:.3f}]" in block
            assert (f"95% percentile bootstrap interval over {figure.units} query families "
                    f"({s.summary.included} labelled items), 2000 resamples of query families, seed 17") in block
            row = next(r for r in payload["summary"] if r["split"] == s.split)
            assert row[f"{name}_low"] == pytest.approx(low, abs=1e-6)
            assert row[f"{name}_high"] == pytest.approx(high, abs=1e-6)
            assert (row["interval_units"], row["interval_replicates"], row["interval_seed"]) == (
                figure.units, 2000, 17)
            assert float(csv_rows[s.split][f"{name}_low"]) == pytest.approx(low, abs=1e-6)
    assert 'id="interval-note"' in html
