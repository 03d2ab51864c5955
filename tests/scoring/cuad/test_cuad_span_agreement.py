"""Span agreement between two labellers, against a brute-force reference over every one-to-one matching."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from scoring.cuad.span_agreement import SpanAnswer, pairwise_span_agreement, span_agreement, span_set_f1

WORDS = ["the", "party", "shall", "assign", "notice", "law", "of", "nevada", "days", "thirty"]


def _f1(a: str, b: str) -> float:
    """Bag-of-tokens F1 written out again from its definition (lowercased \\w+ tokens)."""
    import re

    ta, tb = re.findall(r"\w+", a.lower()), re.findall(r"\w+", b.lower())
    if not ta or not tb:
        return 1.0 if not ta and not tb else 0.0
    overlap = sum((Counter(ta) & Counter(tb)).values())
    return 2.0 * overlap / (len(ta) + len(tb))


def _brute_force(a: list[str], b: list[str]) -> float:
    """Best total F1 over every partial one-to-one matching (permutations of the longer side), then 2T/(|A|+|B|)."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    best = max(
        sum(_f1(s, long_[j]) for s, j in zip(short, chosen, strict=True))
        for chosen in itertools.permutations(range(len(long_)), len(short))
    )
    return 2.0 * best / (len(a) + len(b))


def _random_span(rng: np.random.Generator) -> str:
    return " ".join(rng.choice(WORDS, size=int(rng.integers(1, 6))))


def test_it_equals_a_brute_force_matching_over_permutations_on_random_span_sets():
    rng = np.random.default_rng(20261202)
    for _ in range(300):
        a = [_random_span(rng) for _ in range(int(rng.integers(0, 5)))]
        b = [_random_span(rng) for _ in range(int(rng.integers(0, 5)))]
        assert span_set_f1(a, b) == pytest.approx(_brute_force(a, b), abs=1e-12)
        assert span_set_f1(a, b) == pytest.approx(span_set_f1(b, a), abs=1e-12)  # symmetric


def test_identical_sets_agree_exactly_and_presence_decides_first():
    spans = ("This Agreement is governed by the laws of Nevada.", "Nevada", "[●]")
    assert span_agreement(SpanAnswer(True, spans), SpanAnswer(True, tuple(reversed(spans)))) == 1.0
    assert span_agreement(SpanAnswer(False), SpanAnswer(False)) == 1.0
    assert span_agreement(SpanAnswer(True, spans), SpanAnswer(False)) == 0.0


def test_an_unmatched_span_counts_as_zero_on_its_side():
    # one shared span (F1 1) and one span only lawyer A highlighted: 2 x 1 / (2 + 1)
    assert span_set_f1(["governed by Nevada law", "thirty days notice"], ["governed by Nevada law"]) == pytest.approx(
        2 / 3)


def test_three_labellers_give_the_mean_of_the_three_pairs():
    a, b, c = SpanAnswer(True, ("law of nevada",)), SpanAnswer(True, ("law of nevada",)), SpanAnswer(False)
    assert pairwise_span_agreement([a, b, c]) == pytest.approx((1.0 + 0.0 + 0.0) / 3)
    assert pairwise_span_agreement([a]) is None
