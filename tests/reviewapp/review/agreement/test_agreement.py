"""Agreement figures equal scikit-learn's quadratic kappa and the krippendorff package's ordinal alpha."""

from __future__ import annotations

import itertools

import krippendorff
import numpy as np
import pytest
from django.contrib.auth.models import Group

from reviewapp.core.auth.roles import ensure_role_groups
from reviewapp.review.agreement import selectors as agreement
from reviewapp.review.agreement.judgments import pool_completed_judgments as pool_records_of
from reviewapp.review.assignment.services import item_rebind
from reviewapp.review.workspace.services import judgment_submit
from scoring.stats.agreement import kappa_interval
from tests.references import cohen_kappa_score
from tests.reviewapp.review.conftest import make_items, make_pool


def pool_records(pool):
    return pool_records_of(pool=pool)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pool_agreement_matches_independent_references(django_user_model, db, seed):
    ensure_role_groups()
    group = Group.objects.get(name="reviewer")
    people = []
    for i in range(3):
        user = django_user_model.objects.create_user(username=f"r{seed}{i}", password="x-long-password")
        user.groups.add(group)
        people.append(user)
    pool = make_pool(reviewers=people, items=make_items(n_queries=6, per_query=5), per_item=3)
    rng = np.random.default_rng(seed)
    items = list(pool.items.order_by("doc_id"))
    # truth: reviewer x item grade (None = did not complete; "unknown" = answered unknown)
    truth: dict[int, dict[str, object]] = {}
    for user in people:
        truth[user.pk] = {}
        for item in items:
            base = int(rng.integers(0, 4))
            draw = rng.random()
            if draw < 0.1:
                continue  # never completed
            passage: object = "unknown" if draw < 0.18 else int(np.clip(base + rng.integers(-1, 2), 0, 3))
            judgment_submit(item=item, reviewer=user, grades={"section": base, "passage": passage},
                                     complete=True)
            truth[user.pk][item.public_id] = passage
    (passage_agreement,) = [a for a in agreement.pool_agreement(pool=pool) if a.grade_type == "passage"]

    pairs = {(p.reviewer_a, p.reviewer_b): p for p in passage_agreement.pairs}
    assert len(pairs) == 3
    for a, b in itertools.combinations(sorted(people, key=lambda u: u.username), 2):
        shared = [i.public_id for i in items if i.public_id in truth[a.pk] and i.public_id in truth[b.pk]]
        both = [(truth[a.pk][i], truth[b.pk][i]) for i in shared
                if truth[a.pk][i] != "unknown" and truth[b.pk][i] != "unknown"]
        row = pairs[(a.username, b.username)]
        assert row.n == len(both)
        assert row.excluded == len(shared) - len(both)
        expected = cohen_kappa_score([x for x, _ in both], [y for _, y in both], weights="quadratic",
                                     labels=[0, 1, 2, 3])
        assert row.kappa_quadratic == pytest.approx(expected, abs=1e-12)

    matrix = np.array(
        [[np.nan if truth[u.pk].get(i.public_id) in (None, "unknown") else truth[u.pk][i.public_id]
          for i in items] for u in people],
        dtype=float,
    )
    expected_alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    assert passage_agreement.alpha == pytest.approx(expected_alpha, abs=1e-9)
    assert passage_agreement.alpha_items == int(((~np.isnan(matrix)).sum(axis=0) >= 2).sum())


def test_drafts_and_stale_judgments_do_not_enter_agreement(pool, reviewer_user, reviewer2_user):
    items = list(pool.items.order_by("doc_id"))
    for n, item in enumerate(items):
        judgment_submit(item=item, reviewer=reviewer_user, grades={"section": n % 4, "passage": n % 4},
                                 complete=True)
        judgment_submit(item=item, reviewer=reviewer2_user, grades={"section": 3 - n % 4,
                                                                             "passage": n % 4}, complete=n % 3 != 0)
    item_rebind(item=items[1], passage_caption="new caption")
    counted = [n for n in range(len(items)) if n % 3 != 0 and n != 1]
    (section, passage) = agreement.pool_agreement(pool=pool)
    assert section.pairs[0].n == passage.pairs[0].n == len(counted)
    assert passage.pairs[0].kappa_quadratic == pytest.approx(1.0)


def _grade_pool(pool, people, rng):
    items = list(pool.items.order_by("doc_id"))
    for user in people:
        for item in items:
            base = int(rng.integers(0, 4))
            passage = int(np.clip(base + rng.integers(-1, 2), 0, 3))
            judgment_submit(item=item, reviewer=user, grades={"section": base, "passage": passage},
                                     complete=True)
    return items


def test_every_agreement_figure_carries_an_interval_resampling_review_items(pool, reviewer_user, reviewer2_user):
    items = _grade_pool(pool, [reviewer_user, reviewer2_user], np.random.default_rng(4))
    (section, passage) = agreement.pool_agreement(pool=pool)
    for grade_type, figures in (("section", section), ("passage", passage)):
        row = figures.pairs[0]
        interval = row.kappa_interval
        assert interval.interval.estimate == pytest.approx(row.kappa_quadratic, abs=1e-12)
        assert (interval.unit, interval.units, interval.observations) == ("item", len(items), row.n)
        assert (interval.replicates, interval.seed) == (agreement.AGREEMENT_REPLICATES, agreement.AGREEMENT_SEED)
        # The same figure from the pure bootstrap on the same grades, items as units.
        grades = {r.item_id: r.grades[grade_type] for r in pool_records(pool) if r.reviewer_id == reviewer_user.pk}
        grades2 = {r.item_id: r.grades[grade_type] for r in pool_records(pool) if r.reviewer_id == reviewer2_user.pk}
        ids = sorted(grades)
        expected = kappa_interval([grades[i] for i in ids], [grades2[i] for i in ids], ids, weights="quadratic",
                                  unit="item", replicates=agreement.AGREEMENT_REPLICATES,
                                  seed=agreement.AGREEMENT_SEED)
        assert interval.interval == expected.interval
        assert figures.alpha_interval.units == figures.alpha_items == len(items)
        assert figures.alpha_interval.interval.estimate == pytest.approx(figures.alpha, abs=1e-12)
        assert figures.alpha_interval.interval.low <= figures.alpha <= figures.alpha_interval.interval.high


def test_a_job_can_resample_its_own_units_instead_of_items(pool, reviewer_user, reviewer2_user):
    _grade_pool(pool, [reviewer_user, reviewer2_user], np.random.default_rng(5))
    # make_items puts four items under each of three queries; two of the queries share a family.
    families = {"QIDMARK-0": "fam-a", "QIDMARK-1": "fam-a", "QIDMARK-2": "fam-b"}
    (passage,) = agreement.pool_agreement(pool=pool, grade_types=("passage",), units_by_query=families,
                                          unit="query family", replicates=500, seed=3)
    assert (passage.alpha_interval.unit, passage.alpha_interval.units) == ("query family", 2)
    assert passage.pairs[0].kappa_interval.units == 2
    assert "2 query families (12 items), 500 resamples of query families, seed 3" in (
        passage.pairs[0].kappa_interval.description)
    with pytest.raises(ValueError, match="no unit for queries"):
        agreement.pool_agreement(pool=pool, units_by_query={"QIDMARK-0": "fam-a"}, unit="query family")


def test_the_pool_page_and_api_show_each_interval_with_its_units_resamples_and_seed(
        pool, admin_client_, reviewer_user, reviewer2_user):
    items = _grade_pool(pool, [reviewer_user, reviewer2_user], np.random.default_rng(6))
    (_, passage) = agreement.pool_agreement(pool=pool)
    html = admin_client_.get(f"/review/pools/{pool.public_id}/").content.decode().replace("&#x27;", "'")
    pair = passage.pairs[0]
    testid = f"kappa-passage-{pair.reviewer_a}-{pair.reviewer_b}"
    low, high = pair.kappa_interval.interval.low, pair.kappa_interval.interval.high
    assert f'data-testid="{testid}"' in html
    assert f"[{low:.3f}, {high:.3f}]" in html
    population = (f"95% percentile bootstrap interval over {len(items)} items ({pair.n} items), "
                  f"{agreement.AGREEMENT_REPLICATES} resamples of items, seed {agreement.AGREEMENT_SEED}")
    assert population in html
    raw = pair.raw_agreement_interval.interval
    assert f'data-testid="raw-passage-{pair.reviewer_a}-{pair.reviewer_b}">[{raw.low:.3f}, {raw.high:.3f}]' in html
    alpha = passage.alpha_interval.interval
    assert f"{alpha.estimate:.3f}</strong> <span class=\"ci\">[{alpha.low:.3f}, {alpha.high:.3f}]" in html

    data = admin_client_.get(f"/api/v1/review/pools/{pool.public_id}/agreement/").json()
    api_passage = next(g for g in data["grade_types"] if g["grade_type"] == "passage")
    api_kappa = api_passage["pairs"][0]["kappa_interval"]
    assert api_kappa["low"] == pytest.approx(low) and api_kappa["high"] == pytest.approx(high)
    assert (api_kappa["unit"], api_kappa["units"], api_kappa["observations"]) == ("item", len(items), pair.n)
    assert (api_kappa["replicates"], api_kappa["seed"], api_kappa["undefined_replicates"]) == (
        agreement.AGREEMENT_REPLICATES, agreement.AGREEMENT_SEED, pair.kappa_interval.undefined)
    assert api_passage["alpha_interval"]["estimate"] == pytest.approx(passage.alpha)


def test_an_undefined_kappa_is_shown_as_undefined_with_the_reason_not_as_a_number(
        pool, admin_client_, reviewer_user, reviewer2_user):
    for item in pool.items.all():
        for user in (reviewer_user, reviewer2_user):
            judgment_submit(item=item, reviewer=user, grades={"section": 2, "passage": 2}, complete=True)
    html = admin_client_.get(f"/review/pools/{pool.public_id}/").content.decode().replace("&#x27;", "'")
    assert "undefined on these data (both raters using one and the same category): no interval" in html
    data = admin_client_.get(f"/api/v1/review/pools/{pool.public_id}/agreement/").json()
    kappa = data["grade_types"][0]["pairs"][0]["kappa_interval"]
    assert kappa["estimate"] is None and kappa["low"] is None and "undefined" in kappa["caveat"]


def test_the_pool_page_and_api_explain_the_kappa_paradox_with_prevalence_and_gwet(
        pool, admin_client_, reviewer_user, reviewer2_user):
    items = list(pool.items.order_by("doc_id"))
    for n, item in enumerate(items):
        judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 0, "passage": 0},
                                 complete=True)
        odd = 1 if n == len(items) - 1 else 0
        judgment_submit(item=item, reviewer=reviewer2_user, grades={"section": 0, "passage": odd},
                                 complete=True)
    (_, passage) = agreement.pool_agreement(pool=pool)
    pair = passage.pairs[0]
    assert pair.kappa_quadratic == pytest.approx(0.0)
    assert pair.agreements == len(items) - 1
    assert pair.ac2_quadratic > 0.8
    share = (2 * len(items) - 1) / (2 * len(items))
    note = (f"{len(items) - 1} of {len(items)} agree and quadratic kappa 0.000: one grade (0, {share:.0%} of grades) "
            f"is so common that chance agreement is high; Gwet's AC2 {pair.ac2_quadratic:.2f} is robust to that.")
    assert pair.paradox_note == note

    html = admin_client_.get(f"/review/pools/{pool.public_id}/").content.decode().replace("&#x27;", "'")
    suffix = f"passage-{pair.reviewer_a}-{pair.reviewer_b}"
    assert f'data-testid="paradox-{suffix}">{note}' in html
    assert f'data-testid="ac2-{suffix}"><strong>{pair.ac2_quadratic:.3f}</strong>' in html
    assert f'data-testid="prevalence-{suffix}">0: {round(share * 100)}%; 1: {round((1 - share) * 100)}%; 2: 0%' in html

    data = admin_client_.get(f"/api/v1/review/pools/{pool.public_id}/agreement/").json()
    api_pair = next(g for g in data["grade_types"] if g["grade_type"] == "passage")["pairs"][0]
    assert api_pair["paradox_note"] == note
    assert api_pair["ac2_quadratic"] == pytest.approx(pair.ac2_quadratic)
    assert api_pair["ac2_interval"]["estimate"] == pytest.approx(pair.ac2_quadratic)
    assert api_pair["prevalence"]["0"] == pytest.approx(share)
    assert api_pair["agreements"] == len(items) - 1
