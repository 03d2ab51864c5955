"""Every pair of systems on one draw: intervals, p-values and Holm's adjustment against a hand-written bootstrap.

The reference draws the same index matrix (``default_rng(seed).integers(0, F, (B, F))`` over families numbered
in sorted order), loops over replicates in Python, and adjusts with statsmodels' ``multipletests(method="holm")``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from scoring.ir.family_bootstrap import family_bootstraps, paired_family_bootstrap
from scoring.stats.multiple import bootstrap_p_value, holm_adjust
from tests.references import multipletests


def hand_pairs(systems: dict[str, list[float]], families: list[str], *, replicates: int, seed: int):
    """{(a, b): (difference a - b per replicate, point estimate)} by a loop over replicates."""
    labels = sorted(set(families), key=str)
    members = {f: [i for i, g in enumerate(families) if g == f] for f in labels}
    draws = np.random.default_rng(seed).integers(0, len(labels), size=(replicates, len(labels)))
    means = {name: [] for name in systems}
    for row in draws:
        chosen = [i for code in row for i in members[labels[code]]]
        for name, values in systems.items():
            means[name].append(sum(values[i] for i in chosen) / len(chosen))
    out = {}
    for a, b in itertools.combinations(systems, 2):
        diffs = np.array(means[a]) - np.array(means[b])
        out[a, b] = (diffs, np.mean(systems[a]) - np.mean(systems[b]))
    return out


def hand_p(diffs: np.ndarray) -> float:
    n = diffs.size
    return min(1.0, 2 * min((np.sum(diffs <= 0) + 1) / (n + 1), (np.sum(diffs >= 0) + 1) / (n + 1)))


@pytest.mark.parametrize("case", range(12))
def test_pairwise_intervals_and_holm_p_values_match_a_hand_bootstrap_and_statsmodels(case):
    rng = np.random.default_rng(100 + case)
    n_families = int(rng.integers(3, 9))
    families = [f"f{int(rng.integers(0, n_families))}" for _ in range(int(rng.integers(n_families, 30)))]
    families[:3] = ["f0", "f1", "f2"]  # at least the minimum number of families for an interval
    k = int(rng.integers(3, 6))
    if case % 2:
        systems = {f"s{i}": rng.integers(0, 2, len(families)).astype(float).tolist() for i in range(k)}
    else:
        systems = {f"s{i}": (1.0 / rng.integers(1, 31, len(families))).tolist() for i in range(k)}
    replicates, seed = int(rng.integers(200, 700)), int(rng.integers(0, 2**31))
    pairs_in = {(a, b): (systems[a], systems[b]) for a, b in itertools.combinations(systems, 2)}
    _, pairs = family_bootstraps({}, pairs_in, families, replicates=replicates, seed=seed, keep_replicates=True)
    reference = hand_pairs(systems, families, replicates=replicates, seed=seed)
    for key, pair in pairs.items():
        diffs, point = reference[key]
        np.testing.assert_allclose(pair.replicate_differences, diffs, rtol=0, atol=1e-12)
        low, high = np.percentile(diffs, [2.5, 97.5])
        assert pair.difference.estimate == pytest.approx(point, abs=1e-12)
        assert (pair.difference.low, pair.difference.high) == pytest.approx((low, high), abs=1e-12)
        assert bootstrap_p_value(pair.replicate_differences) == pytest.approx(hand_p(diffs), abs=1e-12)
        # Sharing the draw among pairs changes nothing: each pair alone gives the same interval.
        alone = paired_family_bootstrap(*pairs_in[key], families, replicates=replicates, seed=seed)
        assert alone.difference == pair.difference
    p_values = [bootstrap_p_value(pairs[key].replicate_differences) for key in pairs_in]
    expected = multipletests([hand_p(reference[key][0]) for key in pairs_in], method="holm")[1]
    assert holm_adjust(p_values) == pytest.approx(list(expected), abs=1e-12)


def test_replicates_are_kept_only_when_asked_and_never_change_the_figures():
    rng = np.random.default_rng(3)
    families = [f"f{i % 5}" for i in range(20)]
    a, b = rng.random(20).tolist(), rng.random(20).tolist()
    _, plain = family_bootstraps({}, {0: (a, b)}, families, replicates=500, seed=1)
    _, kept = family_bootstraps({}, {0: (a, b)}, families, replicates=500, seed=1, keep_replicates=True)
    assert plain[0].replicate_differences is None and kept[0].replicate_differences.shape == (500,)
    assert plain[0] == kept[0]
    assert np.percentile(kept[0].replicate_differences, 2.5) == pytest.approx(kept[0].difference.low, abs=1e-15)
