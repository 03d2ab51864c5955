"""Axis 1 (token F1) and axis 2 (grounding) against straightforward reference implementations."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from scoring.cuad.tokens import SourceIndex, grounding, ngrams, token_f1, tokenize


def reference_f1(a: str, b: str) -> float:
    ta, tb = re.findall(r"\w+", a.lower()), re.findall(r"\w+", b.lower())
    if not ta and not tb:
        return 1.0
    common = sum((Counter(ta) & Counter(tb)).values())
    if common == 0:
        return 0.0
    p, r = common / len(ta), common / len(tb)
    return 2 * p * r / (p + r)


def reference_grounding(claim: str, source: str) -> float:
    if claim.strip() and claim.strip().lower() in source.lower():
        return 1.0
    c = re.findall(r"\w+", claim.lower())
    s = re.findall(r"\w+", source.lower())
    if not c:
        return 0.0
    n = min(3, len(c))
    claim_grams = {tuple(c[i : i + n]) for i in range(len(c) - n + 1)}
    found = 0
    for g in claim_grams:
        if any(tuple(s[j : j + n]) == g for j in range(len(s) - n + 1)):
            found += 1
    return found / len(claim_grams)


def test_it_tokenizes_lowercased_unicode_words():
    assert tokenize("The Licensee's FEE: 5% (Zürich)") == ["the", "licensee", "s", "fee", "5", "zürich"]


def test_it_scores_a_hand_example_of_token_f1():
    # A = the the cat (3), B = the cat sat on (4); overlap the, cat = 2; p = 2/3, r = 1/2.
    assert token_f1(tokenize("The the cat"), tokenize("the cat sat on")) == pytest.approx(
        2 * (2 / 3) * 0.5 / (2 / 3 + 0.5)
    )


def test_it_gives_zero_f1_without_overlap_and_one_for_two_empty_bags():
    assert token_f1(["a"], ["b"]) == 0.0
    assert token_f1([], ["b"]) == 0.0
    assert token_f1([], []) == 1.0


def test_it_matches_the_reference_f1_on_random_texts():
    rng = random.Random(7)
    vocab = ["the", "party", "shall", "Party", "not", "assign", "ß", "éclair", "10", "x_y"]
    for _ in range(500):
        a = " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 12)))
        b = " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 12)))
        assert token_f1(tokenize(a), tokenize(b)) == pytest.approx(reference_f1(a, b))


def test_it_grounds_a_hand_example_with_distinct_trigrams():
    source = SourceIndex("Licensee shall pay the fee within thirty days.")
    # Distinct trigrams: (shall pay the) found, (pay the fee) found, (the fee promptly) not -> 2/3.
    assert grounding("shall pay the fee promptly", source) == pytest.approx(2 / 3)


def test_it_uses_ngrams_of_their_own_length_for_one_and_two_token_claims():
    source = SourceIndex("Governing law: the State of Delaware.")
    assert grounding("Delaware", source) == 1.0
    assert grounding("Nevada", source) == 0.0
    assert grounding("state delaware", source) == 0.0  # the bigram is absent
    assert grounding("State of", source) == 1.0


def test_it_grounds_verbatim_text_cut_inside_a_word():
    source = SourceIndex("THIS JOINT VENTURE AGREEMENT is made")
    assert grounding("JOINT VENTURE AGREEMEN", source) == 1.0
    assert grounding("[●]", source) == 0.0


def test_it_matches_the_reference_grounding_on_random_texts():
    rng = random.Random(11)
    vocab = ["a", "b", "c", "d", "e", "f"]
    for _ in range(300):
        source = " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 40)))
        claim = " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 8)))
        assert grounding(claim, SourceIndex(source)) == pytest.approx(reference_grounding(claim, source))


def test_it_lists_distinct_ngrams():
    assert ngrams(["a", "b", "a", "b"], 2) == {("a", "b"), ("b", "a")}
    assert ngrams(["a"], 3) == set()


def test_the_vectorised_f1_matrix_equals_pairwise_token_f1_on_random_texts():
    from scoring.cuad.pair_scores import f1_matrix

    rng = random.Random(3)
    vocab = ["a", "b", "c", "d", "e", "f", "g"]
    for _ in range(100):
        claims = [[rng.choice(vocab) for _ in range(rng.randint(0, 9))] for _ in range(rng.randint(0, 5))]
        refs = [[rng.choice(vocab) for _ in range(rng.randint(0, 9))] for _ in range(rng.randint(0, 5))]
        matrix = f1_matrix(claims, refs)
        assert matrix.shape == (len(claims), len(refs))
        for i, a in enumerate(claims):
            for j, b in enumerate(refs):
                assert matrix[i, j] == token_f1(a, b)
