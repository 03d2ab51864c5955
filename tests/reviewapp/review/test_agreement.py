"""Agreement figures equal scikit-learn's quadratic kappa and the krippendorff package's ordinal alpha."""

from __future__ import annotations

import itertools

import krippendorff
import numpy as np
import pytest
from django.contrib.auth.models import Group
from sklearn.metrics import cohen_kappa_score

from reviewapp.core.access import ensure_role_groups
from reviewapp.review import agreement, services
from tests.reviewapp.review.conftest import make_items, make_pool


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
            services.judgment_submit(item=item, reviewer=user, grades={"section": base, "passage": passage},
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
        services.judgment_submit(item=item, reviewer=reviewer_user, grades={"section": n % 4, "passage": n % 4},
                                 complete=True)
        services.judgment_submit(item=item, reviewer=reviewer2_user, grades={"section": 3 - n % 4,
                                                                             "passage": n % 4}, complete=n % 3 != 0)
    services.item_rebind(item=items[1], passage_caption="new caption")
    counted = [n for n in range(len(items)) if n % 3 != 0 and n != 1]
    (section, passage) = agreement.pool_agreement(pool=pool)
    assert section.pairs[0].n == passage.pairs[0].n == len(counted)
    assert passage.pairs[0].kappa_quadratic == pytest.approx(1.0)
