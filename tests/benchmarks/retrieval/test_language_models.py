"""Query likelihood (Dirichlet) and RM3 against straightforward Python reimplementations on random tiny corpora."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from benchmarks.retrieval import bm25
from benchmarks.retrieval.language_models import (
    RM3_FB_DOCS,
    RM3_FB_TERMS,
    qld_search,
    rm3_expansion,
    rm3_search,
    term_stats_build,
)

WORDS = [
    *[
        "lease",
        "tenant",
        "landlord",
        "deposit",
        "notice",
        "court",
        "appeal",
        "fee",
        "permit",
        "license",
        "vehicle",
        "owner",
        "water",
    ],
    *[
        "right",
        "contract",
        "seller",
        "buyer",
        "estate",
        "trust",
        "guardian",
        "minor",
        "school",
        "district",
        "county",
        "board",
        "hearing",
    ],
]


# Rare words too (Zipf-like), so some stay under Anserini's 10% document-frequency filter and RM3 expands.
VOCABULARY = WORDS + [f"rare{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(150)]
FREQUENCY = [1 / (rank + 1) for rank in range(len(VOCABULARY))]


def _corpus(rng: random.Random, n: int) -> list[bm25.Document]:
    docs = []
    for i in range(n):
        heading = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        body = " ".join(rng.choices(VOCABULARY, FREQUENCY, k=rng.randint(0, 40)))
        docs.append(bm25.Document(doc_id=f"NRS_{i:03d}", heading=heading, body=body, sort_key=f"{i:05d}"))
    rng.shuffle(docs)
    return docs


def _tokens(docs: list[bm25.Document]) -> dict[str, list[str]]:
    return {
        d.doc_id: bm25.document_tokens(bm25.analyze(d.heading), bm25.analyze(d.body), bm25.DEFAULT_CONFIG) for d in docs
    }


def _order(scores: dict[str, float], sort_key: dict[str, str]) -> list[str]:
    return sorted(scores, key=lambda d: (-scores[d], sort_key[d], d))


def _qld_reference(docs, query: str, mu: float) -> dict[str, float]:
    tokens = _tokens(docs)
    collection = Counter(t for toks in tokens.values() for t in toks)
    total = sum(collection.values())
    q = [t for t in bm25.analyze(query) if t in collection]
    out = {}
    for doc_id, toks in tokens.items():
        tf = Counter(toks)
        if not any(tf[t] for t in q):
            continue
        out[doc_id] = sum(math.log((tf[t] + mu * collection[t] / total) / (len(toks) + mu)) for t in q)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_query_likelihood_ranks_random_corpora_as_the_reference_does(seed):
    rng = random.Random(seed)
    docs = _corpus(rng, rng.randint(5, 60))
    stats = term_stats_build(docs)
    query = " ".join(rng.sample(WORDS, rng.randint(1, 4))) + " zebra"
    mu = rng.choice([2000.0, 50.0, 1.0])
    k = rng.randint(1, 30)
    reference = _qld_reference(docs, query, mu)
    outcome = qld_search(stats, query, k=k, mu=mu)
    assert outcome.unknown_tokens == ("zebra",)
    assert outcome.matched_count == len(reference)
    expected = _order(reference, {d.doc_id: d.sort_key for d in docs})[:k]
    assert [h.doc_id for h in outcome.hits] == expected
    for hit in outcome.hits:
        assert hit.score == pytest.approx(reference[hit.doc_id], rel=1e-12, abs=1e-12)


def _bm25_reference(tokens: dict[str, list[str]], weights: dict[str, float], k1=1.2, b=0.75) -> dict[str, float]:
    n = len(tokens)
    avgdl = sum(len(t) for t in tokens.values()) / n
    df = Counter(t for toks in tokens.values() for t in set(toks))
    out = {}
    for doc_id, toks in tokens.items():
        tf = Counter(toks)
        if not any(tf[t] for t in weights):
            continue
        out[doc_id] = sum(
            w * math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * tf[t] / (tf[t] + k1 * (1 - b + b * len(toks) / avgdl))
            for t, w in weights.items()
            if tf[t]
        )
    return out


def _rm3_reference(docs, query: str) -> tuple[dict[str, float], dict[str, float]]:
    tokens = _tokens(docs)
    sort_key = {d.doc_id: d.sort_key for d in docs}
    q = [t for t in bm25.analyze(query) if any(t in toks for toks in tokens.values())]
    first = _bm25_reference(tokens, dict(Counter(q)))
    feedback = _order(first, sort_key)[:RM3_FB_DOCS]
    df = Counter(t for toks in tokens.values() for t in set(toks))
    model: Counter = Counter()
    for doc_id in feedback:
        tf = {t: c for t, c in Counter(tokens[doc_id]).items() if df[t] <= 0.1 * len(docs)}
        top = dict(sorted(tf.items(), key=lambda x: (-x[1], x[0]))[:RM3_FB_TERMS])
        for t, c in top.items():
            model[t] += c / sum(top.values()) * first[doc_id]
    kept = dict(sorted(model.items(), key=lambda x: (-x[1], x[0]))[:RM3_FB_TERMS])
    weights = {t: 0.5 * c / len(q) for t, c in Counter(q).items()}
    for t, w in kept.items():
        weights[t] = weights.get(t, 0.0) + 0.5 * w / sum(kept.values())
    return weights, _bm25_reference(tokens, weights)


@pytest.mark.parametrize("seed", range(12))
def test_rm3_expands_and_ranks_random_corpora_as_the_reference_does(seed):
    rng = random.Random(100 + seed)
    # Enough documents that some words stay under Anserini's 10% document-frequency filter.
    docs = _corpus(rng, rng.randint(40, 90))
    index = bm25.build_index(docs)
    stats = term_stats_build(docs)
    query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
    weights, reference = _rm3_reference(docs, query)
    outcome, expansion = rm3_search(index, stats, query, k=30)
    assert expansion is not None
    assert sum(expansion.weights.values()) == pytest.approx(1.0)
    assert len(expansion.weights) > len(set(bm25.analyze(query)))  # it did expand
    # bm25s stores float32 weights; the reference is float64: equal to float32 precision.
    assert expansion.weights.keys() == weights.keys()
    for token, w in weights.items():
        assert expansion.weights[token] == pytest.approx(w, rel=1e-5)
    assert outcome.matched_count == len(reference)
    returned = {h.doc_id for h in outcome.hits}
    for hit in outcome.hits:
        assert hit.score == pytest.approx(reference[hit.doc_id], rel=1e-5)
    lowest = min(reference[d] for d in returned)
    assert all(score <= lowest * (1 + 1e-5) for d, score in reference.items() if d not in returned)
    assert [h.score for h in outcome.hits] == sorted((h.score for h in outcome.hits), reverse=True)


def test_the_same_inputs_give_the_same_bits_whatever_the_document_order():
    rng = random.Random(7)
    docs = _corpus(rng, 50)
    shuffled = list(reversed(docs))
    a = rm3_search(bm25.build_index(docs), term_stats_build(docs), "tenant deposit notice")[0]
    b = rm3_search(bm25.build_index(shuffled), term_stats_build(shuffled), "tenant deposit notice")[0]
    assert a == b
    assert qld_search(term_stats_build(docs), "court fee") == qld_search(term_stats_build(shuffled), "court fee")


def test_questions_without_searchable_words_say_so_and_rank_nothing():
    docs = _corpus(random.Random(1), 20)
    stats, index = term_stats_build(docs), bm25.build_index(docs)
    assert qld_search(stats, "the of and").status == bm25.NO_TERMS
    assert qld_search(stats, "zebra giraffe").status == bm25.NO_HIT
    outcome, expansion = rm3_search(index, stats, "zebra")
    assert outcome.status == bm25.NO_HIT and not outcome.hits and expansion is None


def test_an_expansion_needs_an_original_weight_between_zero_and_one():
    docs = _corpus(random.Random(2), 20)
    with pytest.raises(ValueError, match="between 0 and 1"):
        rm3_expansion(term_stats_build(docs), (), ["lease"], original_weight=1.5)
