"""Engine-independent BM25 (bm25s + PyStemmer): formula, determinism, ties, analyzer, disclosure, cache.

No database: the module is pure. Scores are checked against an independent numpy
implementation of each variant's formula over the same analyzed tokens.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import Stemmer
from rank_bm25 import BM25Okapi

from benchmarks.retrieval import bm25
from benchmarks.retrieval.bm25_cache import IndexCache

REPO_ROOT = Path(__file__).resolve().parents[3]
MODULE_PATH = REPO_ROOT / "benchmarks" / "retrieval" / "bm25.py"


Document = bm25.Document
Bm25Config = bm25.Bm25Config

# Words chosen so that stemming merges some (tenant/tenants, deposit/deposits) and stop
# words ("the", "of", "no") and one-letter words ("a") occur and must vanish.
_WORDS_PROSE = ("landlord tenant tenants deposit deposits security return notice repair repairs court divorce "
                "property wages employer employee the of no a to shall may must nevada hawaii dissolution "
                "dissolved child children support")
WORDS = _WORDS_PROSE.split()
# Lucene's English stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), which bm25s ships as "english".
_LUCENE_PROSE = ("a an and are as at be but by for if in into is it no not of on or such that the their then there "
                 "these they this to was will with")
LUCENE_ENGLISH_STOP_SET = frozenset(_LUCENE_PROSE.split())


def _random_documents(rng: random.Random, count: int, prefix: str = "d") -> list:
    docs = []
    for i in range(count):
        heading = " ".join(rng.choices(WORDS, k=rng.randint(0, 4)))
        body = " ".join(rng.choices(WORDS, k=rng.randint(0, 40)))
        docs.append(Document(doc_id=f"{prefix}{i:03d}", heading=heading, body=body, sort_key=f"k{rng.randint(0, 9)}"))
    return docs


def _random_queries(rng: random.Random, count: int) -> list[str]:
    return [" ".join(rng.choices([*WORDS, "xyzzy"], k=rng.randint(1, 6))) for _ in range(count)]


def _reference_scores(docs: list, query: str, config) -> dict[str, float]:
    """Independent float64 BM25 of each variant (Kamphuis et al. 2020 forms as bm25s names them).

    Uses only the public analyzer; a document holding no query token is left out (not a match).
    """
    tokens = {
        d.doc_id: bm25.document_tokens(bm25.analyze(d.heading, config), bm25.analyze(d.body, config), config)
        for d in docs
    }
    n_docs = len(docs)
    avgdl = sum(len(t) for t in tokens.values()) / n_docs
    df = Counter(t for doc in tokens.values() for t in set(doc))
    query_tokens = [t for t in bm25.analyze(query, config) if t in df]
    if config.query_term_frequency == "binary":
        query_tokens = list(dict.fromkeys(query_tokens))
    k1, b, delta = config.k1, config.b, config.delta

    def idf(n: int) -> float:
        return {
            "lucene": math.log(1 + (n_docs - n + 0.5) / (n + 0.5)),
            "robertson": math.log(max(1.0, (n_docs - n + 0.5) / (n + 0.5))),
            "atire": math.log(n_docs / n),
            "bm25l": math.log((n_docs + 1) / (n + 0.5)),
            "bm25+": math.log((n_docs + 1) / n),
        }[config.variant]

    def weight(tf: int, dl: int) -> float:
        norm = 1 - b + b * dl / avgdl
        if config.variant in ("lucene", "robertson"):
            return tf / (tf + k1 * norm)
        if config.variant == "atire":
            return tf * (k1 + 1) / (tf + k1 * norm)
        if config.variant == "bm25l":
            c = tf / norm
            return (k1 + 1) * (c + delta) / (k1 + c + delta)
        return tf * (k1 + 1) / (tf + k1 * norm) + delta  # bm25+

    scores = {}
    for doc_id, doc in tokens.items():
        counts = Counter(doc)
        if not any(counts[t] for t in query_tokens):
            continue
        scores[doc_id] = sum(idf(df[t]) * weight(counts[t], len(doc)) for t in query_tokens)
    return scores


@pytest.mark.parametrize("variant", ["lucene", "robertson", "atire", "bm25l", "bm25+"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scores_equal_an_independent_reference_of_the_formula(variant, seed):
    rng = random.Random(seed)
    config = Bm25Config(variant=variant)
    docs = _random_documents(rng, 60)
    index = bm25.build_index(docs, config)
    for query in _random_queries(rng, 25):
        outcome = index.search(query, k=len(docs))
        reference = _reference_scores(docs, query, config)
        # The same documents match: exactly those holding a query token.
        assert {h.doc_id for h in outcome.hits} == set(reference), query
        got = np.array([h.score for h in outcome.hits])
        want = np.array([reference[h.doc_id] for h in outcome.hits])
        # bm25s keeps float32 weights and sums them in float32: agreement to float32 precision.
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6, err_msg=query)
        # The reference's order agrees wherever the reference's scores differ by more than float32 noise.
        for first, second in zip(outcome.hits, outcome.hits[1:], strict=False):
            assert reference[first.doc_id] >= reference[second.doc_id] - 1e-5


def test_lucene_scores_are_the_classic_formula_divided_by_k1_plus_1():
    # The module docstring promises this relation; check it on a hand-sized example.
    config = Bm25Config()
    docs = [Document("a", "", "deposit deposit landlord", "1"), Document("b", "", "landlord tenant", "2"),
            Document("c", "", "court", "3")]
    hit = bm25.build_index(docs, config).search("deposit", 1).hits[0]
    n_docs, n, tf, dl, avgdl = 3, 1, 2, 3, (3 + 2 + 1) / 3
    classic = math.log(1 + (n_docs - n + 0.5) / (n + 0.5)) * tf * (config.k1 + 1) / (
        tf + config.k1 * (1 - config.b + config.b * dl / avgdl))
    assert hit.doc_id == "a"
    assert hit.score == pytest.approx(classic / (config.k1 + 1), rel=1e-6)


def _outcomes(index, queries: list[str], k: int = 10) -> list:
    return [(o.status, o.hits) for o in (index.search(q, k) for q in queries)]


def test_ranking_is_independent_of_document_input_order():
    rng = random.Random(7)
    docs = _random_documents(rng, 80)
    queries = _random_queries(rng, 40)
    expected = _outcomes(bm25.build_index(docs), queries)
    for _ in range(3):
        shuffled = docs[:]
        rng.shuffle(shuffled)
        # Exact equality: the same documents, the same float32 bits, the same order.
        assert _outcomes(bm25.build_index(shuffled), queries) == expected
    assert bm25.document_set_hash(docs) == bm25.document_set_hash(reversed(docs))


def test_the_index_of_a_set_depends_on_that_set_only():
    rng = random.Random(11)
    set_a = _random_documents(rng, 50, prefix="a")
    set_b = _random_documents(rng, 50, prefix="b")
    queries = _random_queries(rng, 30)
    index_a = bm25.build_index(set_a)
    before = _outcomes(index_a, queries, k=50)
    index_ab = bm25.build_index(set_a + set_b)
    # Building another index shares nothing with the first (no global vocabulary or statistics).
    assert _outcomes(index_a, queries, k=50) == before
    assert _outcomes(bm25.build_index(set_a), queries, k=50) == before
    # Statistics are per set: with B added, the same A documents score differently.
    a_scores = {h.doc_id: h.score for h in index_a.search("deposit", 50).hits}
    ab_scores = {h.doc_id: h.score for h in index_ab.search("deposit", 100).hits if h.doc_id.startswith("a")}
    assert a_scores.keys() == ab_scores.keys() and a_scores != ab_scores


@pytest.mark.slow  # starts two Python processes
def test_scores_are_the_same_bits_in_processes_with_different_hash_seeds(tmp_path):
    # bm25s numbers its vocabulary through Python sets; a hash-seed dependence would show here.
    script = tmp_path / "run.py"
    script.write_text(
        "import importlib.util, json, random, sys\n"
        f"spec = importlib.util.spec_from_file_location('bm25_under_test', {str(MODULE_PATH)!r})\n"
        "m = importlib.util.module_from_spec(spec); sys.modules[spec.name] = m; spec.loader.exec_module(m)\n"
        "rng = random.Random(5)\n"
        f"words = {list(WORDS)!r}\n"
        "docs = [m.Document(f'd{i}', ' '.join(rng.choices(words, k=3)), ' '.join(rng.choices(words, k=30)),"
        " str(i % 4)) for i in range(60)]\n"
        "index = m.build_index(docs)\n"
        "out = [[(h.doc_id, h.score.hex()) for h in index.search(q, 60).hits]"
        " for q in ['landlord deposit', 'court divorce property', 'child support must']]\n"
        "print(json.dumps([out, index.config_hash]))\n"
    )
    runs = []
    for seed in ("1", "2"):
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True,
                              env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}, timeout=120)
        runs.append(json.loads(done.stdout))
    assert runs[0] == runs[1]
    assert runs[0][0][0]  # non-trivial: the first query found documents


def test_ties_are_broken_by_sort_key_then_doc_id():
    same = "security deposit return"
    docs = [
        Document("z", "", same, "2"),
        Document("y", "", same, "1"),
        Document("x", "", same, "2"),  # same sort_key as "z": doc_id decides
        Document("w", "", "security deposit return deposit", "0"),  # more of the term: scores higher
        Document("v", "", "unrelated words only", "0"),
    ]
    index = bm25.build_index(docs)
    hits = index.search("deposit", 10).hits
    assert [h.doc_id for h in hits] == ["w", "y", "x", "z"]
    assert hits[1].score == hits[2].score == hits[3].score > 0
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    # The cut at k falls inside the tie by the same rule, never by array position.
    assert [h.doc_id for h in index.search("deposit", 2).hits] == ["w", "y"]
    assert [h.doc_id for h in bm25.build_index(list(reversed(docs))).search("deposit", 3).hits] == ["w", "y", "x"]


@pytest.mark.parametrize("variant", ["lucene", "robertson", "atire", "bm25l", "bm25+"])
def test_the_top_k_is_the_full_ranking_cut_at_k_whatever_k(variant):
    # search() sorts only the matches scoring at least the k-th best; the hits, their order inside
    # ties at the cut and the matched count must be those of sorting every match.
    rng = random.Random(7)
    index = bm25.build_index(_random_documents(rng, 80), Bm25Config(variant=variant))
    for query in _random_queries(rng, 25):
        full = index.search(query, len(index))
        for k in (1, 2, 3, 5, 10, 30):
            cut = index.search(query, k)
            assert cut.hits == full.hits[:k]
            assert cut.matched_count == full.matched_count



def _reference_ranking(index, docs: list, held: list[set[str]], tokens: list[str]) -> list[tuple[str, float]]:
    """(doc id, score) of every match, the plain way: a match is a document whose analyzed tokens (``held``) include
    a query token; its score starts at 0 in the index's dtype and adds, in query order, the weight bm25s stored for
    each query token it holds, then bm25s's weight of absent tokens (bm25l, bm25+); then a full sort by score
    descending, sort key, doc id. Only the stored weights come from the index (the formula test checks them)."""
    config = index.config
    dtype = np.dtype(config.dtype)
    if config.query_term_frequency == "binary":
        tokens = list(dict.fromkeys(tokens))
    ids = [index.vocabulary[t] for t in tokens if t in index.vocabulary]
    stored = index.retriever.scores
    weights = {}
    for token_id in set(ids):
        start, end = stored["indptr"][token_id], stored["indptr"][token_id + 1]
        for position, weight in zip(stored["indices"][start:end].tolist(), stored["data"][start:end], strict=True):
            weights[token_id, index.doc_ids[position]] = weight
    absent = index.retriever.nonoccurrence_array
    ranked = []
    for doc, doc_tokens in zip(docs, held, strict=True):
        if not doc_tokens & set(tokens):
            continue
        score = dtype.type(0)
        for token_id in ids:
            if (token_id, doc.doc_id) in weights:
                score = dtype.type(score + weights[token_id, doc.doc_id])
        if absent is not None:
            score = dtype.type(score + absent[np.asarray(ids, dtype=np.int32)].sum())
        ranked.append((-score, doc.sort_key, doc.doc_id, float(score)))
    ranked.sort()
    return [(doc_id, score) for _, _, doc_id, score in ranked]


@pytest.mark.parametrize("config", [
    Bm25Config(), Bm25Config(variant="robertson"), Bm25Config(variant="atire"), Bm25Config(variant="bm25l"),
    Bm25Config(variant="bm25+"), Bm25Config(dtype="float64"), Bm25Config(query_term_frequency="binary"),
], ids=lambda c: f"{c.variant}-{c.dtype}-{c.query_term_frequency}")
def test_search_gives_the_reference_hits_to_the_bit_in_the_reference_order(config, monkeypatch):
    # search_tokens adds weights without np.add.at, finds lucene's matches from the sums and selects the top k from
    # a sample's floor; none of that may change a hit, a score's bits, the order of a tie or the match count.
    floors = []
    real_floor = bm25._kth_largest_floor
    monkeypatch.setattr(bm25, "_kth_largest_floor", lambda *args: floors.append(real_floor(*args)) or floors[-1])
    rng = random.Random(29)
    docs = _random_documents(rng, 300)
    # Copies under other ids and sort keys: equal scores, so the tie rule decides at the cut.
    docs += [dataclasses.replace(d, doc_id=f"c{i:03d}", sort_key=f"k{rng.randint(0, 9)}") for i, d in
             enumerate(rng.sample(docs, 60))]
    index = bm25.build_index(docs, config)
    held = [set(bm25.document_tokens(bm25.analyze(d.heading, config), bm25.analyze(d.body, config), config))
            for d in docs]
    queries = [*_random_queries(rng, 30), "deposit", "the deposit deposit", "support nevada hawaii"]
    for query in queries:
        tokens = bm25.analyze(query, config)
        ranking = _reference_ranking(index, docs, held, tokens)
        for k in (1, 2, 5, 30, len(docs)):
            outcome = index.search_tokens(tokens, k)
            got = [(h.doc_id, h.score) for h in outcome.hits]
            assert got == ranking[:k], (query, k)  # floats compared with ==: the same bits
            assert [h.rank for h in outcome.hits] == list(range(1, len(got) + 1))
            assert outcome.matched_count == len(ranking)
    # The sampled floor was used, and cut something, on the variants whose weights are all above 0.
    if config.variant == "lucene":
        assert any(floor > 0 for floor in floors)


@pytest.mark.parametrize("seed", range(20))
def test_the_sampled_floor_is_at_most_the_kth_largest(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(50, 5000))
    values = np.zeros(size, dtype=np.float32)
    # Matches bunched at one end, and few distinct scores: the cases where a sample is least like the whole.
    matched = int(rng.integers(1, size))
    start = int(rng.integers(0, size - matched + 1))
    values[start:start + matched] = rng.integers(1, 6, matched).astype(np.float32) / 4
    for k in (1, 3, 30):
        if matched <= k:
            continue
        floor = bm25._kth_largest_floor(values, k, matched)
        assert 0 <= floor <= np.sort(values)[-k]


def test_stop_words_are_bm25s_english_list_which_is_lucenes_and_keeps_legal_words():
    assert frozenset(bm25.STOPWORD_LISTS["english"]) == LUCENE_ENGLISH_STOP_SET
    assert bm25.analyze("Nevada shall, may and must; the Hawaii statute of no effect") == [
        "nevada", "shall", "may", "must", "hawaii", "statut", "effect"]
    detail = Bm25Config().detail()
    assert detail["stopwords"] == "english" and detail["stopwords_count"] == 33
    assert detail["stopwords_source"] == "bm25s.stopwords.STOPWORDS_EN"


def test_stemming_is_pystemmer_snowball_english():
    snowball = Stemmer.Stemmer("english")
    words = ["dissolution", "dissolved", "dissolve", "dissolving", "landlords", "tenancy", "tenants", "children",
             "deposited", "negligence", "negligent", "garnishment", "alimony", "termination", "terminated"]
    for word in words:
        assert bm25.analyze(word) == [snowball.stemWord(word)], word
    # What that means for questions: the verb forms meet, the noun stays apart.
    assert bm25.analyze("dissolved dissolving dissolve dissolution") == ["dissolv", "dissolv", "dissolv", "dissolut"]
    assert bm25.analyze("dissolved", Bm25Config(stemmer="none")) == ["dissolved"]


def test_tokenizer_splits_citations_and_drops_one_letter_words():
    assert bm25.analyze("NRS 432B.220 and HRS § 521-44: a 5-day notice") == [
        "nrs", "432b", "220", "hrs", "521", "44", "day", "notic"]


def test_a_query_with_no_known_word_is_a_disclosed_no_hit():
    index = bm25.build_index([Document("a", "Security deposits", "The landlord returns the deposit.", "1")])
    outcome = index.search("xyzzy plugh", 30)
    assert outcome.hits == () and outcome.status == bm25.NO_HIT
    assert outcome.unknown_tokens == ("xyzzi", "plugh") and outcome.matched_count == 0
    assert outcome.method == "disjunctive BM25" and outcome.fallback_used is False and outcome.fallback == "none"
    assert "no query word" in outcome.reason
    empty = index.search("the of and, a!", 30)
    assert empty.hits == () and empty.status == bm25.NO_TERMS and empty.query_tokens == ()
    assert "no searchable words" in empty.reason
    short = index.search("deposit xyzzy", 30)
    assert short.status == bm25.SHORT and [h.doc_id for h in short.hits] == ["a"]
    assert short.unknown_tokens == ("xyzzi",) and short.expression == "deposit OR xyzzi"
    assert json.loads(json.dumps(short.disclosure()))["matched_count"] == 1
    full = index.search("deposit", 1)
    assert full.status == bm25.OK and full.reason == ""


def test_documents_without_any_token_index_and_never_match():
    index = bm25.build_index([Document("a", "", "", "1"), Document("b", "the", "of a", "2")])
    assert index.search("deposit", 5).status == bm25.NO_HIT


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="twice"):
        bm25.build_index([Document("a", "", "x y", "1"), Document("a", "", "z w", "2")])
    with pytest.raises(ValueError, match="empty"):
        bm25.build_index([])
    with pytest.raises(ValueError, match="k must"):
        bm25.build_index([Document("a", "", "deposit", "1")]).search("deposit", 0)
    for bad in ({"variant": "okapi"}, {"stopwords": "legal"}, {"stemmer": "porter2"}, {"b": 1.5},
                {"heading_repeat": -1}, {"heading_repeat": 1.5}, {"dtype": "float16"}):
        with pytest.raises(ValueError):
            Bm25Config(**bad)


def test_heading_repeat_weights_the_heading():
    docs = [Document("h", "deposit", "alpha beta gamma", "1"), Document("b", "alpha", "deposit beta gamma", "2"),
            Document("c", "court", "other words here", "3")]
    assert [h.doc_id for h in bm25.build_index(docs).search("deposit", 2).hits] == ["h", "b"]
    # Repeat 0 leaves the heading out entirely.
    assert [h.doc_id for h in bm25.build_index(docs, Bm25Config(heading_repeat=0)).search("deposit", 2).hits] == ["b"]


def test_repeated_query_words_count_again_unless_binary():
    docs = [Document("a", "", "deposit landlord", "1"), Document("b", "", "tenant court", "2")]
    once = bm25.build_index(docs).search("deposit", 1).hits[0].score
    assert bm25.build_index(docs).search("deposit deposit", 1).hits[0].score == 2 * once
    binary = bm25.build_index(docs, Bm25Config(query_term_frequency="binary"))
    assert binary.search("deposit deposits", 1).hits[0].score == once


def _other_value(name: str, value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value / 2
    return {"variant": "atire", "stopwords": "english_plus", "stemmer": "none", "query_term_frequency": "binary",
            "dtype": "float64"}.get(name, value + "x")


def test_config_hash_changes_with_every_parameter():
    base = Bm25Config()
    assert base.config_hash() == Bm25Config().config_hash()
    assert Bm25Config(k1=1, b=1).config_hash() == Bm25Config(k1=1.0, b=1.0).config_hash()
    seen = {base.config_hash()}
    for field in dataclasses.fields(Bm25Config):
        changed = dataclasses.replace(base, **{field.name: _other_value(field.name, getattr(base, field.name))})
        seen.add(changed.config_hash())
    assert len(seen) == len(dataclasses.fields(Bm25Config)) + 1
    detail = base.detail()
    assert json.loads(json.dumps(detail)) == detail
    assert set(detail["libraries"]) == {"bm25s", "PyStemmer", "numpy"}
    expected = bm25.hashlib.sha256(json.dumps(detail, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert base.config_hash() == expected


def test_single_word_queries_rank_as_rank_bm25_okapi_does():
    """What is compared with rank_bm25: BM25Okapi's idf is ln((N - n + 0.5)/(n + 0.5)) (floored when
    negative) and its tf part keeps (k1 + 1), so multi-word scores differ from Lucene's. For one query
    word held by fewer than half the documents both are idf x the same tf saturation: the scores are
    proportional (one constant per word) and the rankings identical. Multi-word agreement is measured
    in perf/scoring/bench_bm25.py, not asserted."""
    rng = random.Random(3)
    config = Bm25Config()
    docs = sorted(_random_documents(rng, 120), key=lambda d: (d.sort_key, d.doc_id))
    corpus = [bm25.document_tokens(bm25.analyze(d.heading), bm25.analyze(d.body), config) for d in docs]
    okapi = BM25Okapi(corpus, k1=config.k1, b=config.b)
    index = bm25.build_index(docs, config)
    position = {d.doc_id: i for i, d in enumerate(docs)}
    compared = 0
    for word in sorted({t for doc in corpus for t in doc}):
        holders = sum(word in doc for doc in corpus)
        # A stem is not always its own stem ("employe" -> "employ"): query only stems that are.
        if not 2 <= holders < len(docs) / 2 or bm25.analyze(word) != [word]:
            continue
        hits = index.search(word, len(docs)).hits
        theirs = okapi.get_scores([word])
        ratios = np.array([theirs[position[h.doc_id]] / h.score for h in hits])
        np.testing.assert_allclose(ratios, ratios[0], rtol=1e-5)
        assert abs(ratios[0] - 1) > 0.01  # proportional, not equal: (k1 + 1) and another idf
        compared += 1
    assert compared >= 5


def _documents(n: int = 30) -> list:
    return _random_documents(random.Random(13), n)


def test_cache_returns_the_same_index_and_evicts_the_least_recently_used():
    cache = IndexCache(max_entries=2)
    calls = []

    def loader(docs):
        def load():
            calls.append(1)
            return docs
        return load

    docs = _documents()
    first = cache.get_or_build(Bm25Config(), "set-1", loader(docs))
    assert cache.get_or_build(Bm25Config(), "set-1", loader(docs)) is first and len(calls) == 1
    # Another configuration is another entry, with its own statistics.
    other = cache.get_or_build(Bm25Config(k1=0.9), "set-1", loader(docs))
    assert other is not first and len(calls) == 2
    assert cache.get_or_build(Bm25Config(), "set-1", loader(docs)) is first  # now the most recently used
    cache.get_or_build(Bm25Config(), "set-2", loader(docs[:10]))  # evicts the k1=0.9 entry
    assert len(cache) == 2 and cache.get_or_build(Bm25Config(), "set-1", loader(docs)) is first
    cache.get_or_build(Bm25Config(k1=0.9), "set-1", loader(docs))
    assert len(calls) == 4 and (cache.hits, cache.builds) == (3, 4)


def test_cache_directory_round_trip_gives_the_same_bits(tmp_path):
    docs = _documents(50)
    queries = _random_queries(random.Random(17), 20)
    key = bm25.snapshot_set_key(["b" * 64, "a" * 64], rule="heading+body v1")
    assert key == bm25.snapshot_set_key(["a" * 64, "b" * 64], rule="heading+body v1")
    built = IndexCache(directory=tmp_path).get_or_build(Bm25Config(), key, lambda: docs)
    fresh = IndexCache(directory=tmp_path)

    def no_documents():
        raise AssertionError("a stored index must load without reading the documents")

    loaded = fresh.get_or_build(Bm25Config(), key, no_documents)
    assert fresh.loads == 1 and loaded is not built
    assert _outcomes(loaded, queries, k=50) == _outcomes(built, queries, k=50)
    assert loaded.detail() == built.detail()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".staging")] == []
    # A damaged entry is rebuilt, not trusted.
    (entry,) = list(tmp_path.iterdir())
    (entry / "data.csc.index.npy").write_bytes(b"not numpy")
    again = IndexCache(directory=tmp_path)
    rebuilt = again.get_or_build(Bm25Config(), key, lambda: docs)
    assert again.builds == 1 and _outcomes(rebuilt, queries, k=50) == _outcomes(built, queries, k=50)
    assert IndexCache(directory=tmp_path).get_or_build(Bm25Config(), key, no_documents).detail() == built.detail()


# Texts where the analyzer's edges show: case, digits, underscores, apostrophes, citations, accented and
# non-Latin word characters, one-letter words, stop words in either case, line breaks and empty fields.
_EDGE_TEXTS = ("", "a", "The THE the", "432B.220(1)(a) §346-1", "tenant's_deposit x1 1x __ _a a_", "Ünïcødé naïve café",
               "Αθήνα и Москва 東京 ab", "landlord\nTenant\tdeposits", "  of-the-people's  ", "ß ǅ ǈ ÅÅ", "  ")


@pytest.mark.parametrize("config", [
    Bm25Config(), Bm25Config(heading_repeat=0), Bm25Config(heading_repeat=3), Bm25Config(stopwords="english_plus"),
    Bm25Config(stopwords="none", stemmer="none"), Bm25Config(stemmer="snowball-porter", lowercase=False),
], ids=lambda c: f"{c.stopwords}-{c.stemmer}-h{c.heading_repeat}-{'lower' if c.lowercase else 'case'}")
def test_index_tokens_are_the_analyzers_document_tokens(config):
    # build_index analyzes in one pass of its own; what it indexes must be, token for token, document_tokens of
    # bm25s.tokenize's analysis of the heading and of the body (what queries go through).
    rng = random.Random(7)
    docs = _random_documents(rng, 40)
    docs += [Document(f"e{i:02d}", rng.choice(_EDGE_TEXTS), " ".join(rng.choices([*_EDGE_TEXTS, *WORDS], k=12)), "e")
             for i in range(40)]
    ordered = bm25._ordered(docs)
    ids, vocabulary = bm25._document_token_ids(ordered, config)
    assert list(vocabulary) == sorted(vocabulary) and list(vocabulary.values()) == list(range(len(vocabulary)))
    words = {i: token for token, i in vocabulary.items()}
    for doc, doc_ids in zip(ordered, ids, strict=True):
        expected = bm25.document_tokens(bm25.analyze(doc.heading, config), bm25.analyze(doc.body, config), config)
        assert [words[i] for i in doc_ids] == expected, doc
    # The vocabulary is the documents' tokens, no more (with heading_repeat=0 a heading's words are not in it).
    assert any(ids) and set(vocabulary) == {words[i] for doc_ids in ids for i in doc_ids}


def test_the_faster_token_pattern_finds_the_same_tokens():
    rng = random.Random(3)
    pieces = [*_EDGE_TEXTS, *WORDS, "x", "ab", "_", "-", "'", "9", "é", "\u0301", "\u00a0", "z\u0301z"]
    texts = [*_EDGE_TEXTS, *("".join(rng.choices(pieces, k=rng.randint(1, 30))) for _ in range(500))]
    for original, faster in bm25._SAME_TOKENS_FASTER.items():
        for text in texts:
            assert bm25.re.findall(faster, text) == bm25.re.findall(original, text), text


def test_document_set_hash_is_the_sha256_of_one_json_line_per_document():
    # The formula runs record (document_set_sha256): computed faster, it must keep its bytes.
    docs = [Document("b", "Ünïcødé \"quoted\"", "line\nbreak \\ tab\t", "2"), Document("a", "", "", "1"),
            Document("c\u2028", "東京", "\x00\x1f", "1")]
    digest = hashlib.sha256()
    for doc in sorted(docs, key=lambda d: (d.sort_key, d.doc_id)):
        digest.update(json.dumps([doc.doc_id, doc.sort_key, doc.heading, doc.body], separators=(",", ":"))
                      .encode("utf-8") + b"\n")
    assert bm25.document_set_hash(docs) == digest.hexdigest()
    assert bm25.build_index(docs).document_set_hash == digest.hexdigest()


def test_document_set_hash_fed_in_batches_keeps_the_bytes_past_a_batch():
    docs = [Document(f"d{n:05d}", f"Heading {n}", f"Body {n} ü \"q\"", f"{n:05d}") for n in range(2_345)]
    digest = hashlib.sha256()
    for doc in docs:
        digest.update(json.dumps([doc.doc_id, doc.sort_key, doc.heading, doc.body], separators=(",", ":"))
                      .encode("utf-8") + b"\n")
    assert bm25.document_set_hash(docs) == digest.hexdigest()


def test_the_build_reads_a_heading_only_when_it_is_counted():
    # With no copy of the heading, its words are in no document: not in the vocabulary either.
    docs = [Document("a", "Zebra crossing", "tenant deposit", "1"), Document("b", "", "deposit returned", "2")]
    without = bm25.build_index(docs, bm25.Bm25Config(heading_repeat=0))
    assert "zebra" not in without.vocabulary and "tenant" in without.vocabulary
    assert "zebra" in bm25.build_index(docs).vocabulary



def test_the_build_runs_with_the_cycle_collector_paused(monkeypatch):
    # What the pause itself promises (restored as found, an error included) is tests/scoring/test_collector.py's.
    import gc

    seen = []
    real = bm25._document_token_ids
    monkeypatch.setattr(bm25, "_document_token_ids",
                        lambda docs, config: seen.append(gc.isenabled()) or real(docs, config))
    docs = [Document("a", "Deposit", "landlord deposit returned", "1"), Document("b", "", "tenant court", "2")]
    assert gc.isenabled()
    index = bm25.build_index(docs)
    assert seen == [False] and gc.isenabled()
    assert [h.doc_id for h in index.search("deposit").hits] == ["a"]
