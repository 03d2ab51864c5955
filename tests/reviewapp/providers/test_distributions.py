"""Distribution helpers checked against scipy on random inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import softmax
from scipy.stats import entropy

from reviewapp.providers.local.distributions import concentration, from_top_logprobs, renormalise
from scoring.stats.calibration import p_useful


def test_concentration_is_one_minus_normalised_entropy_on_random_distributions():
    rng = np.random.default_rng(20260920)
    for _ in range(200):
        probs = rng.dirichlet(np.ones(4) * rng.uniform(0.1, 3))
        assert concentration(probs) == pytest.approx(1 - entropy(probs) / math.log(4), abs=1e-9)
    assert concentration([1, 0, 0, 0]) == pytest.approx(1.0)
    assert concentration([0.25] * 4) == pytest.approx(0.0, abs=1e-12)


def test_top_logprobs_renormalise_like_a_softmax_over_the_labels():
    rng = np.random.default_rng(3)
    for _ in range(100):
        logits = rng.normal(size=4)
        logprobs = logits - np.log(np.exp(logits).sum() + rng.uniform(0, 2))  # mass leaks to other tokens
        top = [{"token": str(i), "logprob": float(lp)} for i, lp in enumerate(logprobs)]
        top.append({"token": "Yes", "logprob": -3.0})
        probs, mass = from_top_logprobs(top, ("0", "1", "2", "3"))
        assert probs == pytest.approx(softmax(logits))
        assert mass == pytest.approx(float(np.exp(logprobs).sum()))


def test_p_useful_is_the_mass_on_grades_two_and_three():
    probs, _ = renormalise([1, 1, 2, 4])
    assert p_useful(probs) == pytest.approx(6 / 8)


@pytest.mark.parametrize("weights", [[0, 0, 0, 0], [-1, 1, 1, 1], [float("nan"), 1, 1, 1]])
def test_unusable_weights_are_refused(weights):
    with pytest.raises(ValueError):
        renormalise(weights)
