"""The coded pair scores are the string definitions' numbers exactly, on random and hostile texts."""

from __future__ import annotations

import random

import numpy as np
import pytest

from scoring.cuad import coding, pair_scores
from scoring.cuad.coding import code_texts
from scoring.cuad.pair_scores import score_contract
from scoring.cuad.tokens import SourceIndex, grounding, tokenize

# Pieces that stress the tokeniser: accents, a final sigma, a dotted capital I (lowercases to two characters),
# non-word Unicode, an underscore, digits, long words (hashed rather than packed) and a fraction (a word
# character).
PIECES = ["a", "b", "Ab", "c", "Dé", "e_f", "7", "ü", "—", ".", " ", "ΑΣ", "Σ", "σ", "x", "\u2003", "İ", "½",
          "extraordinarily", "indemnification", "l'", "'", "\n", "ß", "K"]


def random_text(rng: random.Random, words: int) -> str:
    return "".join(rng.choice(PIECES) + rng.choice(["", " ", ", ", "-"]) for _ in range(words))


def string_path(text, extractions, spans):
    """The string definitions, as ``score_contract`` takes them when the tokens cannot be coded."""
    original = pair_scores.code_texts
    pair_scores.code_texts = lambda texts: None
    try:
        return score_contract(text, extractions, spans)
    finally:
        pair_scores.code_texts = original


def assert_same_scores(a, b):
    assert a.grounding.tolist() == b.grounding.tolist()
    assert a.best_f1.tolist() == b.best_f1.tolist()
    assert a.best_span.tolist() == b.best_span.tolist()
    for m in a.matched_span:
        assert a.matched_span[m].tolist() == b.matched_span[m].tolist()
        assert a.matched_f1[m].tolist() == b.matched_f1[m].tolist()


def test_coded_ids_are_exactly_the_distinct_tokens_of_each_text():
    rng = random.Random(11)
    for _ in range(300):
        texts = [random_text(rng, rng.randint(0, 25)) for _ in range(rng.randint(1, 6))]
        coded = code_texts(texts)
        assert coded is not None
        tokens = [tokenize(text) for text in texts]
        assert coded.lengths().tolist() == [len(t) for t in tokens]
        flat = [token for t in tokens for token in t]
        ids = coded.ids.tolist()
        by_token = {}
        for token, token_id in zip(flat, ids, strict=True):
            assert by_token.setdefault(token, token_id) == token_id, (texts, token)
        assert len(set(by_token.values())) == len(by_token) == coded.vocabulary
        for k, text in enumerate(texts):
            assert coded.lowered_text(k) == text.lower()


def test_a_hash_collision_is_caught_and_gives_no_codes(monkeypatch):
    # Every long token gets the same hash: the character check must refuse the codes.
    monkeypatch.setattr(coding, "_hashes", lambda chars, lengths: np.zeros(len(lengths), dtype=np.uint64))
    assert code_texts(["indemnification extraordinarily"]) is None
    assert code_texts(["indemnification indemnification"]) is not None  # the same token twice is no collision
    assert code_texts(["Dé", "dé"]) is not None  # non-ASCII texts hash every token; equal tokens pass


@pytest.mark.parametrize("seed", range(3))
def test_coded_pair_scores_equal_the_string_path_on_random_contracts(seed):
    rng = random.Random(seed)
    for _ in range(150):
        text = random_text(rng, rng.randint(0, 60))
        spans = [(rng.randint(0, 3), random_text(rng, rng.randint(0, 8))) for _ in range(rng.randint(0, 8))]
        extractions = [(rng.randint(0, 3), random_text(rng, rng.randint(0, 8))) for _ in range(rng.randint(0, 10))]
        for _ in range(rng.randint(0, 4)):  # verbatim pieces, often cut inside a word
            if text:
                start = rng.randrange(len(text))
                extractions.append((rng.randint(0, 3), text[start : start + rng.randint(1, 30)]))
        for cat, span in spans[:2]:
            extractions.append((cat, span))
        coded = score_contract(text, extractions, spans)
        assert_same_scores(coded, string_path(text, extractions, spans))
        expected = [grounding(claim, SourceIndex(text)) for _, claim in extractions]
        assert coded.grounding.tolist() == expected


def test_a_claim_cut_inside_words_at_both_ends_is_still_found_verbatim():
    text = "The Licensee shall indemnify the Licensor against all claims."
    claim = "icensee shall indemnify the Licens"  # edges cut, interior trigrams all in the text
    scores = score_contract(text, [(0, claim), (0, "shall the indemnify Licensor")], [(0, "indemnify")])
    assert scores.grounding[0] == 1.0
    assert scores.grounding[1] == grounding("shall the indemnify Licensor", SourceIndex(text)) < 1.0


def test_the_join_is_chunked_when_cells_share_many_tokens(monkeypatch):
    monkeypatch.setattr(pair_scores, "_JOIN_PAIRS", 7)  # forces many chunks on a small contract
    rng = random.Random(4)
    text = random_text(rng, 80)
    spans = [(c, random_text(rng, 12)) for c in (0, 0, 1, 1, 1)]
    extractions = [(rng.randint(0, 2), random_text(rng, 12)) for _ in range(12)]
    assert_same_scores(score_contract(text, extractions, spans), string_path(text, extractions, spans))


def test_power_tables_are_inverse_and_only_small_ones_are_kept(monkeypatch):
    monkeypatch.setattr(coding, "_TABLES_KEPT", 64)
    monkeypatch.setattr(coding, "_tables", (np.ones(1, dtype=np.uint64), np.ones(1, dtype=np.uint64)))
    powers, inverse = coding._power_tables(1000)
    assert len(powers) == len(inverse) == 1000 and (powers * inverse == 1).all()
    assert len(coding._tables[0]) == 1  # too large to keep
    coding._power_tables(40)
    assert len(coding._tables[0]) == len(coding._tables[1]) == 40
    text = " ".join(["indemnification", "extraordinarily"] * 40)  # hashed tokens over more than 64 characters
    assert code_texts([text]).ids.tolist() == [0, 1] * 40 or code_texts([text]).ids.tolist() == [1, 0] * 40
