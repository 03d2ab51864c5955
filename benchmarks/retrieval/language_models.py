"""Two first-stage systems beside BM25, over the same documents and analyzer as ``bm25-v1``. Pure (no Django).

Both read the documents exactly as ``bm25.py`` indexes them (bm25s analyzer, Snowball stemmer, the
heading's tokens twice then the body's), so the three configurations differ only in their ranking
function. Term statistics are a scipy.sparse term-frequency matrix built from those tokens.

``qld-v1``: query likelihood with Dirichlet smoothing (Zhai & Lafferty 2001, "A Study of Smoothing
Methods for Language Models Applied to Ad Hoc Information Retrieval", SIGIR '01), mu = 2000::

    score(d) = sum over query tokens t of log((tf(t, d) + mu * P(t|C)) / (|d| + mu))
    P(t|C)   = cf(t) / (total tokens of the collection)

the full log query likelihood (no clamping as Lucene's LMDirichletSimilarity does). A query token
that occurs in no document has P(t|C) = 0 and would give every document log 0; it is left out and
named, as bm25-v1 does. Like bm25-v1 the search is disjunctive: the matches are the documents
holding at least one query token.

``rm3-v1``: RM3 pseudo-relevance feedback over BM25 (Lavrenko & Croft 2001, "Relevance-Based
Language Models", SIGIR '01; RM3 as Abdul-Jaleel et al. 2004, UMass at TREC 2004), with Anserini's
defaults and steps (its ``Rm3Reranker``): fb_docs = 10, fb_terms = 10, original query weight 0.5.

1. First pass: bm25-v1's top fb_docs documents with their BM25 scores.
2. Each feedback document's term vector: raw term frequencies, leaving out tokens in more than
   10% of the documents (Anserini's filter), pruned to its fb_terms most frequent tokens.
3. Relevance model: weight(t) = sum over feedback documents of tf(t, d) / |vector of d|_1 * score(d);
   keep the fb_terms heaviest tokens, normalise to sum 1.
4. Expanded query: 0.5 * (query token counts normalised to sum 1) + 0.5 * relevance model.
5. Second pass: score(d) = sum over expanded tokens of weight(t) * w(t, d), w the BM25 weight
   bm25s stored for (t, d); matches are documents holding any expanded token.

Ties everywhere: score descending, then the index order (sort_key, doc_id), as bm25-v1. Token ties in
steps 2 and 3 go to the token string, so the expansion is a pure function of the documents.
Scores are summed in float64 in sorted token order: the same inputs give the same bits.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from benchmarks.retrieval import bm25

QLD_MU = 2000.0
RM3_FB_DOCS = 10
RM3_FB_TERMS = 10
RM3_ORIGINAL_WEIGHT = 0.5
RM3_MAX_DF_RATIO = 0.1

QLD_METHOD = "query likelihood, Dirichlet smoothing"
QLD_CITATION = ("Zhai & Lafferty 2001, A Study of Smoothing Methods for Language Models Applied to Ad Hoc "
                "Information Retrieval, SIGIR '01")
RM3_METHOD = "RM3 pseudo-relevance feedback over BM25"
RM3_CITATION = ("Lavrenko & Croft 2001, Relevance-Based Language Models, SIGIR '01; RM3 as Abdul-Jaleel et al. "
                "2004 (UMass at TREC 2004); defaults and steps of Anserini's Rm3Reranker")


class TermStats:
    """Term frequencies of an exact document set: ``tf`` is (documents x tokens), documents in index order."""

    def __init__(self, *, doc_ids: tuple[str, ...], vocabulary: dict[str, int], tf: sparse.csc_matrix,
                 lengths: np.ndarray, build_seconds: float = 0.0) -> None:
        self.doc_ids = doc_ids
        self.vocabulary = vocabulary
        self.tf = tf
        self.tf_rows = tf.tocsr()
        self.lengths = lengths
        self.collection_frequency = np.asarray(tf.sum(axis=0)).ravel().astype(np.float64)
        self.document_frequency = np.diff(tf.indptr).astype(np.int64)
        self.total_tokens = float(lengths.sum())
        self.tokens = tuple(sorted(vocabulary, key=vocabulary.__getitem__))
        self.build_seconds = build_seconds

    def __len__(self) -> int:
        return len(self.doc_ids)

    def column(self, token_id: int) -> tuple[np.ndarray, np.ndarray]:
        """(document positions, term frequencies) of one token."""
        start, end = self.tf.indptr[token_id], self.tf.indptr[token_id + 1]
        return self.tf.indices[start:end], self.tf.data[start:end]

    def row(self, position: int) -> dict[str, float]:
        """token -> term frequency of one document."""
        start, end = self.tf_rows.indptr[position], self.tf_rows.indptr[position + 1]
        return {self.tokens[t]: float(f) for t, f in zip(self.tf_rows.indices[start:end].tolist(),
                                                         self.tf_rows.data[start:end].tolist(), strict=True)}


def term_stats_build(documents: Iterable[bm25.Document], config: bm25.Bm25Config = bm25.DEFAULT_CONFIG) -> TermStats:
    """Term frequencies of exactly these documents under ``config``'s analyzer (input order does not matter)."""
    started = time.perf_counter()
    docs = bm25._ordered(documents)
    if not docs:
        raise ValueError("cannot index an empty document set")
    analyzed = bm25.analyze_many([d.heading for d in docs] + [d.body for d in docs], config)
    tokens = [bm25.document_tokens(analyzed[i], analyzed[len(docs) + i], config) for i in range(len(docs))]
    vocabulary = {token: i for i, token in enumerate(sorted({t for doc in tokens for t in doc}))}
    rows, cols, data = [], [], []
    for position, doc in enumerate(tokens):
        counts: dict[int, int] = {}
        for token in doc:
            counts[vocabulary[token]] = counts.get(vocabulary[token], 0) + 1
        for token_id in sorted(counts):
            rows.append(position)
            cols.append(token_id)
            data.append(counts[token_id])
    tf = sparse.csc_matrix((np.asarray(data, dtype=np.float64), (rows, cols)),
                           shape=(len(docs), max(len(vocabulary), 1)))
    tf.sort_indices()
    return TermStats(doc_ids=tuple(d.doc_id for d in docs), vocabulary=vocabulary, tf=tf,
                     lengths=np.asarray([len(t) for t in tokens], dtype=np.float64),
                     build_seconds=time.perf_counter() - started)


def _ranked(doc_ids: tuple[str, ...], positions: np.ndarray, scores: np.ndarray, k: int) -> tuple[bm25.Hit, ...]:
    # lexsort: last key first; positions ascend in (sort_key, doc_id) order, so they break score ties.
    order = np.lexsort((positions, -scores))[:k]
    return tuple(bm25.Hit(doc_ids[int(positions[i])], float(scores[i]), rank)
                 for rank, i in enumerate(order.tolist(), start=1))


def _no_terms() -> bm25.SearchOutcome:
    return bm25.SearchOutcome(hits=(), status=bm25.NO_TERMS, query_tokens=(), unknown_tokens=(), matched_count=0,
                              reason="the question has no searchable words (only stop words, one-letter words "
                                     "or punctuation)")


def _outcome(hits: tuple[bm25.Hit, ...], *, k: int, tokens: list[str], unknown: tuple[str, ...], matched: int,
             method: str) -> bm25.SearchOutcome:
    status, reason = bm25.OK, ""
    if len(hits) < k:
        status = bm25.SHORT
        reason = f"only {len(hits)} document{'s' if len(hits) != 1 else ''} contain a query word"
    return bm25.SearchOutcome(hits=hits, status=status, query_tokens=tuple(tokens), unknown_tokens=unknown,
                              matched_count=matched, reason=reason, method=method)


def qld_search(stats: TermStats, query: str, *, k: int = 30, mu: float = QLD_MU,
               config: bm25.Bm25Config = bm25.DEFAULT_CONFIG) -> bm25.SearchOutcome:
    """The top k documents by Dirichlet-smoothed query likelihood (see the module docstring)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    if mu <= 0:
        raise ValueError("mu must be positive")
    tokens = bm25.analyze(query, config)
    if not tokens:
        return _no_terms()
    unknown = tuple(t for t in dict.fromkeys(tokens) if t not in stats.vocabulary)
    counts: dict[str, int] = {}
    for token in tokens:
        if token in stats.vocabulary:
            counts[token] = counts.get(token, 0) + 1
    if not counts:
        return bm25.SearchOutcome(hits=(), status=bm25.NO_HIT, query_tokens=tuple(tokens), unknown_tokens=unknown,
                                  matched_count=0, reason="no query word occurs in the indexed documents",
                                  method=QLD_METHOD)
    matched = np.zeros(len(stats), dtype=bool)
    for token in counts:
        matched[stats.column(stats.vocabulary[token])[0]] = True
    positions = np.flatnonzero(matched)
    slot = np.full(len(stats), -1, dtype=np.int64)
    slot[positions] = np.arange(positions.size)
    denominator = stats.lengths[positions] + mu
    scores = np.zeros(positions.size, dtype=np.float64)
    for token in sorted(counts):
        token_id = stats.vocabulary[token]
        p_collection = stats.collection_frequency[token_id] / stats.total_tokens
        tf = np.zeros(positions.size, dtype=np.float64)
        docs, freqs = stats.column(token_id)
        tf[slot[docs]] = freqs
        scores += counts[token] * np.log((tf + mu * p_collection) / denominator)
    return _outcome(_ranked(stats.doc_ids, positions, scores, k), k=k, tokens=tokens, unknown=unknown,
                    matched=int(positions.size), method=QLD_METHOD)


@dataclass(frozen=True)
class Expansion:
    """The RM3 query: token -> weight (sums to 1), and what fed it."""

    weights: Mapping[str, float]
    feedback_docs: tuple[str, ...]

    def as_text(self) -> str:
        return " ".join(f"{t}^{w:.4f}" for t, w in sorted(self.weights.items(), key=lambda x: (-x[1], x[0])))


def rm3_expansion(stats: TermStats, first_pass: tuple[bm25.Hit, ...], query_tokens: list[str], *,
                  fb_docs: int = RM3_FB_DOCS, fb_terms: int = RM3_FB_TERMS,
                  original_weight: float = RM3_ORIGINAL_WEIGHT,
                  max_df_ratio: float = RM3_MAX_DF_RATIO) -> Expansion:
    """Steps 2-4 of the module docstring: the expanded query from the first pass's top ``fb_docs`` hits."""
    if not 0 <= original_weight <= 1:
        raise ValueError("the original query weight must be between 0 and 1")
    position = {doc_id: i for i, doc_id in enumerate(stats.doc_ids)}
    feedback = first_pass[:fb_docs]
    max_df = max_df_ratio * len(stats)
    model: dict[str, float] = {}
    for hit in feedback:
        vector = {t: f for t, f in stats.row(position[hit.doc_id]).items()
                  if stats.document_frequency[stats.vocabulary[t]] <= max_df}
        vector = dict(sorted(vector.items(), key=lambda x: (-x[1], x[0]))[:fb_terms])
        norm = sum(vector.values())
        if norm <= 0:
            continue
        for token, f in vector.items():
            model[token] = model.get(token, 0.0) + f / norm * hit.score
    kept = sorted(model.items(), key=lambda x: (-x[1], x[0]))[:fb_terms]
    total = sum(w for _, w in kept)
    relevance = {t: w / total for t, w in kept} if total > 0 else {}
    counts: dict[str, float] = {}
    for token in query_tokens:
        counts[token] = counts.get(token, 0.0) + 1.0
    query_total = sum(counts.values())
    weights: dict[str, float] = {}
    for token, c in counts.items():
        weights[token] = original_weight * c / query_total
    for token, w in relevance.items():
        weights[token] = weights.get(token, 0.0) + (1 - original_weight) * w
    return Expansion(weights=weights, feedback_docs=tuple(h.doc_id for h in feedback))


def weighted_bm25(index: bm25.Bm25Index, weights: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """(matched positions, scores): sum of weight(t) * the BM25 weight bm25s stored for (t, d), in float64."""
    stored = index.retriever.scores
    data, indices, indptr = stored["data"], stored["indices"], stored["indptr"]
    totals = np.zeros(len(index), dtype=np.float64)
    matched = np.zeros(len(index), dtype=bool)
    for token in sorted(weights):
        token_id = index.vocabulary.get(token)
        if token_id is None:
            continue
        docs = indices[indptr[token_id]:indptr[token_id + 1]]
        totals[docs] += weights[token] * data[indptr[token_id]:indptr[token_id + 1]].astype(np.float64)
        matched[docs] = True
    positions = np.flatnonzero(matched)
    return positions, totals[positions]


def rm3_search(index: bm25.Bm25Index, stats: TermStats, query: str, *, k: int = 30, fb_docs: int = RM3_FB_DOCS,
               fb_terms: int = RM3_FB_TERMS,
               original_weight: float = RM3_ORIGINAL_WEIGHT) -> tuple[bm25.SearchOutcome, Expansion | None]:
    """The top k documents of the RM3-expanded BM25 query, and the expansion (None when the first pass found none)."""
    if stats.doc_ids != index.doc_ids:
        raise ValueError("the term statistics and the BM25 index are of different document sets")
    if k < 1:
        raise ValueError("k must be at least 1")
    first = index.search(query, k=max(k, fb_docs))
    if not first.hits:
        return bm25.SearchOutcome(hits=(), status=first.status, query_tokens=first.query_tokens,
                                  unknown_tokens=first.unknown_tokens, matched_count=0, reason=first.reason,
                                  method=RM3_METHOD), None
    known = [t for t in first.query_tokens if t in index.vocabulary]
    expansion = rm3_expansion(stats, first.hits, known, fb_docs=fb_docs, fb_terms=fb_terms,
                              original_weight=original_weight)
    positions, scores = weighted_bm25(index, expansion.weights)
    hits = _ranked(index.doc_ids, positions, scores, k)
    return _outcome(hits, k=k, tokens=list(first.query_tokens), unknown=first.unknown_tokens,
                    matched=int(positions.size), method=RM3_METHOD), expansion


def qld_detail(mu: float = QLD_MU) -> dict[str, Any]:
    return {"method": QLD_METHOD, "mu": mu, "citation": QLD_CITATION,
            "formula": "sum over query tokens of log((tf + mu*P(t|C)) / (|d| + mu)); P(t|C) = cf/|C|",
            "matches": "documents holding at least one query token", "unknown_tokens": "left out (P(t|C) = 0)",
            "tie_break": bm25.TIE_BREAK}


def rm3_detail(*, fb_docs: int = RM3_FB_DOCS, fb_terms: int = RM3_FB_TERMS,
               original_weight: float = RM3_ORIGINAL_WEIGHT) -> dict[str, Any]:
    return {"method": RM3_METHOD, "fb_docs": fb_docs, "fb_terms": fb_terms,
            "original_query_weight": original_weight, "max_df_ratio": RM3_MAX_DF_RATIO, "citation": RM3_CITATION,
            "first_pass": "bm25-v1", "second_pass": "sum of weight(t) * BM25 w(t, d) over the expanded tokens",
            "tie_break": bm25.TIE_BREAK}
