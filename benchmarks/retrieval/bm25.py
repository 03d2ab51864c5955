"""Engine-independent BM25 keyword retrieval over an exact set of statute provisions.

Pure Python + numpy, no Django: the caller hands in the provisions of a suite's pinned
snapshots as :class:`Document` values and gets the same ranked candidates on SQLite,
PostgreSQL or no database at all, whatever else has been imported. Term statistics
(N, document frequencies, average length) come from exactly those documents.

Scoring is delegated to the maintained ``bm25s`` library; analysis is ``bm25s.tokenize``
with one of its shipped stop lists and the Snowball English stemmer of ``PyStemmer``.
The default variant is bm25s's "lucene" (Lucene's BM25Similarity, exact document lengths)::

    idf(t)    = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))
    w(t, d)   = idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))
    score(d)  = sum of w(t, d) over the query's tokens (a repeated query word counts again)

N is the number of documents, n(t) the number containing t, tf the count of t in d, dl the
token count of d. Like Lucene since version 8, bm25s leaves out the constant (k1 + 1) of
the classic numerator ``tf * (k1 + 1) / (tf + ...)``: every score is the classic one divided
by k1 + 1, so the ranking is the same. Lucene itself stores document lengths lossily in
one byte; bm25s (and so this module) uses the exact lengths.

A document is its heading's tokens ``heading_repeat`` times, then its body's tokens: the
repeats weight the caption above the body (they count in dl too, as a copied field would).

Search is disjunctive: every document holding at least one query token is a match, ranked
by score descending, then ``sort_key`` ascending, then ``doc_id`` ascending. Scores are the
exact float32 values bm25s computes (widened to Python floats without rounding), so two
documents tie only when their float32 scores are bit-identical, and the tie rule decides.
A query with no token in the vocabulary gets no candidates and says so: there is no
fallback, because disjunctive BM25 already is the widest keyword match, and anything
added after it (say the first provisions in citation order) would be unrelated to the
question yet look like retrieved candidates to the reranker.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import math
import re
import threading
import time
from array import array
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, fields
from importlib import metadata
from itertools import count, filterfalse
from typing import Any

import bm25s
import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_EN_PLUS
from bm25s.tokenization import Tokenized

from scoring.collector import collector_paused

# bm25s pins its logger at DEBUG when imported, which lets a debug line through on every index
# build whatever level the application chose; hand the decision back to the application.
logging.getLogger("bm25s").setLevel(logging.NOTSET)

METHOD = "disjunctive BM25"
TIE_BREAK = "score descending (the exact value in dtype, no rounding), then sort_key ascending, then doc_id ascending"
NO_HIT_POLICY = "no fallback: a query none of whose tokens occurs in the documents gets no candidates"

# Status of a search, for the run's disclosure.
OK = "ok"  # k candidates
SHORT = "short"  # fewer than k documents contain any query token; all of them are returned
NO_HIT = "no_hit"  # the query has tokens, none of them in any document
NO_TERMS = "no_terms"  # the analyzer left nothing: empty, punctuation, stop words, one-letter words

VARIANT_FORMULAS: dict[str, str] = {
    "lucene": "idf = ln(1 + (N - n + 0.5)/(n + 0.5)); w = idf * tf/(tf + k1*(1 - b + b*dl/avgdl))",
    "robertson": "idf = ln(max(1, (N - n + 0.5)/(n + 0.5))); w = idf * tf/(tf + k1*(1 - b + b*dl/avgdl))",
    "atire": "idf = ln(N/n); w = idf * tf*(k1 + 1)/(tf + k1*(1 - b + b*dl/avgdl))",
    "bm25l": "idf = ln((N + 1)/(n + 0.5)); c = tf/(1 - b + b*dl/avgdl); "
             "w = idf * (k1 + 1)*(c + delta)/(k1 + c + delta)",
    "bm25+": "idf = ln((N + 1)/n); w = idf * (tf*(k1 + 1)/(tf + k1*(1 - b + b*dl/avgdl)) + delta)",
}

# Stop lists shipped by bm25s, by the name bm25s gives them. "english" is bm25s's
# STOPWORDS_EN: 33 words, the same set as Lucene's English stop set (bm25s's comment says
# NLTK, but NLTK's 179-word list is its "english_plus"). Neither list holds "shall", "may",
# "must" or place names: words that decide legal meaning stay searchable.
STOPWORD_LISTS: dict[str, tuple[str, ...]] = {
    "english": tuple(STOPWORDS_EN),
    "english_plus": tuple(STOPWORDS_EN_PLUS),
    "none": (),
}
# Our name for a stemmer -> PyStemmer's algorithm name ("english" is Snowball English, Porter2).
STEMMERS: dict[str, str | None] = {"snowball-english": "english", "snowball-porter": "porter", "none": None}
QUERY_TERM_FREQUENCIES = ("linear", "binary")
DTYPES = ("float32", "float64")


@functools.cache
def _versions() -> tuple[tuple[str, str], ...]:
    # Looked up once per process: importlib.metadata scans the installed distributions each time.
    return tuple((name, metadata.version(name)) for name in ("bm25s", "PyStemmer", "numpy"))


def library_versions() -> dict[str, str]:
    """Installed versions of the code that computes the scores (part of every configuration's hash)."""
    return dict(_versions())


def _sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Bm25Config:
    """Every choice that changes a BM25 ranking. ``detail()`` records them; ``config_hash()`` names them.

    variant: a bm25s method ("lucene", "robertson", "atire", "bm25l", "bm25+"); see VARIANT_FORMULAS.
    k1, b: term-frequency saturation and length normalisation. delta: only bm25l and bm25+ use it.
    token_pattern: regex whose matches are the tokens (bm25s's default, scikit-learn's CountVectorizer
    pattern: runs of two or more word characters, so "432B.220" gives "432b" and "220").
    stopwords: a key of STOPWORD_LISTS. stemmer: a key of STEMMERS (stop words are removed before stemming).
    heading_repeat: how many times the heading's tokens are put before the body's.
    query_term_frequency: "linear" scores a query word once per occurrence (Lucene, bm25s, rank_bm25);
    "binary" scores each distinct query token once.
    dtype: bm25s's score type; float32 is its default.
    """

    name: str = "bm25-v1"
    variant: str = "lucene"
    k1: float = 1.2
    b: float = 0.75
    delta: float = 0.5
    token_pattern: str = r"(?u)\b\w\w+\b"  # noqa: S105 -- a regex, not a secret
    lowercase: bool = True
    stopwords: str = "english"
    stemmer: str = "snowball-english"
    heading_repeat: int = 2
    query_term_frequency: str = "linear"
    dtype: str = "float32"

    def __post_init__(self) -> None:
        if self.variant not in VARIANT_FORMULAS:
            raise ValueError(f"variant {self.variant!r}: expected one of {', '.join(VARIANT_FORMULAS)}")
        if self.stopwords not in STOPWORD_LISTS:
            raise ValueError(f"stopwords {self.stopwords!r}: expected one of {', '.join(STOPWORD_LISTS)}")
        if self.stemmer not in STEMMERS:
            raise ValueError(f"stemmer {self.stemmer!r}: expected one of {', '.join(STEMMERS)}")
        if self.query_term_frequency not in QUERY_TERM_FREQUENCIES:
            raise ValueError(f"query_term_frequency {self.query_term_frequency!r}: expected linear or binary")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype {self.dtype!r}: expected float32 or float64")
        if not (self.k1 >= 0 and 0 <= self.b <= 1 and self.delta >= 0):
            raise ValueError("expected k1 >= 0, 0 <= b <= 1, delta >= 0")
        if isinstance(self.heading_repeat, bool) or not isinstance(self.heading_repeat, int) or self.heading_repeat < 0:
            raise ValueError("heading_repeat must be a whole number >= 0")

    def detail(self) -> dict[str, Any]:
        """Every parameter, the stop list itself (by hash), the formula and the library versions; JSON-able."""
        stopwords = STOPWORD_LISTS[self.stopwords]
        detail: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        # 1 and 1.0 are the same parameter: keep the hash from telling them apart.
        detail.update(k1=float(self.k1), b=float(self.b), delta=float(self.delta))
        detail.update(
            method=METHOD,
            formula=VARIANT_FORMULAS[self.variant],
            score="sum of w over the query tokens" + (" (each distinct token once)"
                                                      if self.query_term_frequency == "binary" else ""),
            stopwords_source="none" if self.stopwords == "none" else
            f"bm25s.stopwords.{'STOPWORDS_EN' if self.stopwords == 'english' else 'STOPWORDS_EN_PLUS'}",
            stopwords_count=len(stopwords),
            stopwords_sha256=_sha256_text("\n".join(sorted(stopwords))),
            stemmer_algorithm=f"PyStemmer {STEMMERS[self.stemmer]!r}" if STEMMERS[self.stemmer] else "none",
            analyzer="bm25s.tokenize: lowercase, findall(token_pattern), drop stop words, then stem",
            document="heading tokens x heading_repeat, then body tokens",
            tie_break=TIE_BREAK,
            no_hit=NO_HIT_POLICY,
            libraries=library_versions(),
        )
        return detail

    def config_hash(self) -> str:
        """sha256 of the canonical JSON of ``detail()``: changes with any parameter or library version."""
        return _sha256_text(json.dumps(self.detail(), sort_keys=True, separators=(",", ":")))


DEFAULT_CONFIG = Bm25Config()


@dataclass(frozen=True)
class Document:
    """One provision as the index sees it. ``sort_key`` orders ties (e.g. citation then variant)."""

    doc_id: str
    heading: str
    body: str
    sort_key: str


@dataclass(frozen=True)
class Hit:
    doc_id: str
    score: float  # the float32 score of bm25s, widened exactly
    rank: int  # 1-based


@dataclass(frozen=True)
class SearchOutcome:
    """Ranked candidates plus what a run must disclose about how they were found."""

    hits: tuple[Hit, ...]
    status: str  # OK, SHORT, NO_HIT or NO_TERMS
    query_tokens: tuple[str, ...]  # analyzed query, in order, as scored
    unknown_tokens: tuple[str, ...]  # distinct query tokens that occur in no document
    matched_count: int  # documents holding at least one query token
    reason: str  # a sentence for anything but OK
    method: str = METHOD
    fallback_used: bool = False
    fallback: str = "none"

    @property
    def expression(self) -> str:
        """The disjunction that was searched, in the analyzer's tokens."""
        return " OR ".join(dict.fromkeys(self.query_tokens))

    def disclosure(self) -> dict[str, Any]:
        """What a run records about this search; JSON-able."""
        return {
            "method": self.method, "status": self.status, "expression": self.expression,
            "query_tokens": list(self.query_tokens), "unknown_tokens": list(self.unknown_tokens),
            "matched_count": self.matched_count, "returned": len(self.hits),
            "fallback_used": self.fallback_used, "fallback": self.fallback, "reason": self.reason,
        }


_local = threading.local()


def _stemmer(name: str) -> Stemmer.Stemmer | None:
    # A PyStemmer instance keeps state and must not be shared between threads: one per thread.
    algorithm = STEMMERS[name]
    if algorithm is None:
        return None
    cache: dict[str, Stemmer.Stemmer] = _local.__dict__.setdefault("stemmers", {})
    if algorithm not in cache:
        cache[algorithm] = Stemmer.Stemmer(algorithm)
    return cache[algorithm]


def analyze_many(texts: Iterable[str], config: Bm25Config = DEFAULT_CONFIG) -> list[list[str]]:
    """Tokens of each text under the configuration's analyzer (bm25s.tokenize, strings not ids)."""
    texts = list(texts)
    if not texts:
        return []
    # bm25s numbers its vocabulary in set order (hash-seed dependent); asking for strings keeps
    # the result a pure function of the text.
    return bm25s.tokenize(
        texts, lower=config.lowercase, token_pattern=config.token_pattern,
        stopwords=list(STOPWORD_LISTS[config.stopwords]), stemmer=_stemmer(config.stemmer),
        return_ids=False, show_progress=False,
    )


def analyze(text: str, config: Bm25Config = DEFAULT_CONFIG) -> list[str]:
    """Tokens of one text under the configuration's analyzer."""
    return analyze_many([text], config)[0]


def document_tokens(heading_tokens: list[str], body_tokens: list[str], config: Bm25Config) -> list[str]:
    """What one document is to BM25: the heading's tokens ``heading_repeat`` times, then the body's."""
    return heading_tokens * config.heading_repeat + body_tokens


def _ordered(documents: Iterable[Document]) -> list[Document]:
    docs = sorted(documents, key=lambda d: (d.sort_key, d.doc_id))
    seen: set[str] = set()
    for doc in docs:
        if doc.doc_id in seen:
            raise ValueError(f"document id {doc.doc_id!r} appears twice")
        seen.add(doc.doc_id)
    return docs


def document_set_hash(documents: Iterable[Document]) -> str:
    """sha256 of the documents' ids, sort keys and text, independent of their order."""
    return _set_hash(_ordered(documents))


def _set_hash(docs: list[Document]) -> str:
    # One line per document, in index order: the compact JSON array [doc_id, sort_key, heading, body]. Written
    # with json's own string encoder, the bytes json.dumps(..., separators=(",", ":")) gives (a test holds them
    # equal), without a JSONEncoder made per document: json.dumps with separators builds one each call, which was
    # most of the hash's time.
    quote = json.encoder.encode_basestring_ascii
    digest = hashlib.sha256()
    # Fed a thousand documents at a time: the same bytes, without the whole corpus joined (and encoded) at once.
    for start in range(0, len(docs), 1000):
        digest.update("".join(f"[{quote(d.doc_id)},{quote(d.sort_key)},{quote(d.heading)},{quote(d.body)}]\n"
                              for d in docs[start:start + 1000]).encode("utf-8"))
    return digest.hexdigest()


class Bm25Index:
    """BM25 statistics of one document set under one configuration. Build with :func:`build_index`."""

    def __init__(self, *, config: Bm25Config, doc_ids: tuple[str, ...], sort_keys: tuple[str, ...],
                 retriever: bm25s.BM25, document_set_hash: str, average_length: float,
                 build_seconds: float = 0.0) -> None:
        self.config = config
        self.doc_ids = doc_ids  # in index order: (sort_key, doc_id) ascending, which the tie rule relies on
        self.sort_keys = sort_keys
        self.retriever = retriever
        self.vocabulary: dict[str, int] = retriever.vocab_dict
        self.document_set_hash = document_set_hash
        self.average_length = average_length
        self.build_seconds = build_seconds
        self._config_hash = config.config_hash()
        self._positive = _positive_terms(retriever.scores)

    def __len__(self) -> int:
        return len(self.doc_ids)

    @property
    def config_hash(self) -> str:
        return self._config_hash

    def detail(self) -> dict[str, Any]:
        """The configuration's detail plus what identifies the indexed documents; JSON-able."""
        return {
            **self.config.detail(), "config_hash": self._config_hash,
            "document_set_sha256": self.document_set_hash, "documents": len(self.doc_ids),
            "vocabulary": len(self.vocabulary), "average_length": self.average_length,
        }

    def search(self, query: str, k: int = 30) -> SearchOutcome:
        """The top k documents holding any query token, by BM25 score (disjunctive BM25), ties by the tie rule."""
        if k < 1:
            raise ValueError("k must be at least 1")
        return self.search_tokens(analyze(query, self.config), k)

    def search_tokens(self, tokens: list[str], k: int = 30) -> SearchOutcome:
        """:meth:`search` on a question already analyzed (``analyze``): what the index itself costs per query."""
        if k < 1:
            raise ValueError("k must be at least 1")
        if self.config.query_term_frequency == "binary":
            tokens = list(dict.fromkeys(tokens))
        if not tokens:
            return SearchOutcome(hits=(), status=NO_TERMS, query_tokens=(), unknown_tokens=(), matched_count=0,
                                 reason="the question has no searchable words (only stop words, one-letter "
                                        "words or punctuation)")
        unknown = tuple(t for t in dict.fromkeys(tokens) if t not in self.vocabulary)
        token_ids = [self.vocabulary[t] for t in tokens if t in self.vocabulary]
        if not token_ids:
            return SearchOutcome(hits=(), status=NO_HIT, query_tokens=tuple(tokens), unknown_tokens=unknown,
                                 matched_count=0, reason="no query word occurs in the indexed documents")
        stored = self.retriever.scores
        data, indices, indptr = stored["data"], stored["indices"], stored["indptr"]
        # bm25s's get_scores_from_ids, step for step, but for np.add.at: each query token's stored weights are added
        # in query order into zeros of bm25s's dtype, so every score is the same bits. A token's postings hold each
        # document once, so gathering its documents' sums, adding and putting them back is the same additions;
        # np.add.at was most of bm25s's query time, and take/put beat a fancy-indexed += by a fifth at 100k sections.
        scores = np.zeros(len(self.doc_ids), dtype=np.dtype(self.retriever.dtype))
        for token_id in token_ids:
            start, end = int(indptr[token_id]), int(indptr[token_id + 1])
            docs = indices[start:end]
            summed = scores.take(docs)
            summed += data[start:end]
            scores.put(docs, summed)
        nonoccurrence = self.retriever.nonoccurrence_array
        if nonoccurrence is None and all(self._positive[t] for t in set(token_ids)):
            # Every weight added is above 0, so a document holds a query token exactly when its sum is above 0: the
            # matches need no posting list read again, nor a list of all of them when only the best k are asked for.
            above = scores > 0
            matched_count = int(np.count_nonzero(above))
            floor = _kth_largest_floor(scores, k, matched_count) if matched_count > k else 0.0
            positions = np.flatnonzero(scores >= floor if floor > 0 else above)
        else:
            if nonoccurrence is not None:
                # bm25l and bm25+ give every document the weight of the query tokens it lacks, as bm25s adds it.
                scores += nonoccurrence[np.asarray(token_ids, dtype=self.retriever.int_dtype)].sum()
            # A match is a document in the posting list of some query token, not a non-zero score:
            # variants whose idf can be 0 (robertson, atire) or that shift every score (bm25l, bm25+)
            # would otherwise gain or lose matches.
            matched = np.zeros(len(self.doc_ids), dtype=bool)
            matched[np.concatenate([indices[indptr[t]:indptr[t + 1]] for t in set(token_ids)])] = True
            positions = np.flatnonzero(matched)
            matched_count = int(positions.size)
        negated = -scores[positions]
        if positions.size > k:
            # Only a match scoring at least the k-th best can rank in the top k: sort those (every tie at
            # that score included, for the tie rule), not all matches (3,000+ of 5,473 HRS sections for a
            # common word; the full sort was a third of the search). A NaN bound means fewer than k
            # comparable scores: then nothing is cut. Same hits, same order.
            bound = np.partition(negated, k - 1)[k - 1]
            if not np.isnan(bound):
                keep = negated <= bound
                positions, negated = positions[keep], negated[keep]
        # lexsort: last key first. Positions ascend in (sort_key, doc_id) order, so they break ties.
        order = positions[np.lexsort((positions, negated))][:k]
        # tolist widens each score to a Python float exactly, in one call rather than a numpy scalar per hit.
        hits = tuple(Hit(self.doc_ids[p], score, rank) for rank, (p, score)
                     in enumerate(zip(order.tolist(), scores[order].tolist(), strict=True), start=1))
        status, reason = OK, ""
        if len(hits) < k:
            status = SHORT
            reason = f"only {len(hits)} document{'s' if len(hits) != 1 else ''} contain a query word"
        return SearchOutcome(hits=hits, status=status, query_tokens=tuple(tokens), unknown_tokens=unknown,
                             matched_count=matched_count, reason=reason)


def _positive_terms(scores: dict[str, Any]) -> np.ndarray:
    """Per vocabulary id, whether every weight bm25s stored for the term is above 0 (NaN is not): true of every
    term under lucene, where idf > 0; robertson and atire give a term in half or all of the documents idf 0."""
    data, indptr = scores["data"], np.asarray(scores["indptr"])
    positive = np.ones(len(indptr) - 1, dtype=bool)
    held = np.flatnonzero(indptr[1:] > indptr[:-1])
    if held.size:
        # Consecutive starts of the non-empty posting lists delimit exactly those lists; np.minimum carries a NaN.
        positive[held] = np.minimum.reduceat(data, indptr[held]) > 0
    return positive


def _kth_largest_floor(values: np.ndarray, k: int, matched_count: int) -> float:
    """A value at most the k-th largest of ``values`` (of which ``matched_count`` are above 0), close below it, or 0.

    The k-th largest of any subset is at most the k-th largest of the whole, so that of an evenly strided sample is
    a floor: every document scoring at least the k-th best, ties included, scores at least the floor. A sample of
    about sqrt(n/k)-th of the documents keeps both the sample and the documents above its floor near sqrt(n*k),
    against selecting among all the matches (most of the documents for a common word).
    """
    step = min(math.isqrt(max(values.size // k, 1)), matched_count // (4 * k))
    if step < 2:
        return 0.0
    sample = values[::step]
    if sample.size < k:
        return 0.0
    return float(np.partition(sample, sample.size - k)[sample.size - k])


# A pattern finding exactly the same tokens with less work. Default's: a run of two or more word characters is the
# whole run (the match is greedy, and a scan never starts inside a run it did not match), so the word boundaries
# only cost time (a sixth of the analysis). tests/benchmarks/retrieval holds the two equal.
_SAME_TOKENS_FASTER = {r"(?u)\b\w\w+\b": r"(?u)\w\w+"}


def _document_token_ids(docs: list[Document], config: Bm25Config) -> tuple[list[list[int]], dict[str, int]]:
    """Each document as BM25 sees it (``document_tokens`` of its analyzed heading and body), as ids of a
    vocabulary numbered in sorted-stem order, with that vocabulary.

    The analyzer is ``bm25s.tokenize``'s, step for step: lowercase, ``findall(token_pattern)``, drop stop words
    (before stemming), stem (tests/benchmarks/retrieval hold the two equal). Done here in one pass because
    bm25s.tokenize numbers every word, renumbers the words by stem in set order (which depends on the hash seed),
    and we then numbered its ids a third time in sorted order: here each distinct word is stemmed once and every
    token maps straight to its final id. The heading is analyzed once and its ids repeated ``heading_repeat``
    times (no token pattern spans the boundary between heading and body, nor between two copies).
    """
    split = re.compile(_SAME_TOKENS_FASTER.get(config.token_pattern, config.token_pattern)).findall
    repeat = config.heading_repeat
    # Each word gets a provisional number the first time it is seen, and a document is kept as those numbers
    # (4 bytes a token), never as its list of word strings: holding every document's words at once was most of
    # the build's peak memory (a str object per token). With no copy of the heading its words are in no
    # document, nor in the vocabulary: it is not read at all.
    provisional: defaultdict[str, int] = defaultdict(count().__next__)
    number = provisional.__getitem__
    fold = str.lower if config.lowercase else str
    numbered = [(array("i", map(number, split(fold(d.heading)))) if repeat else array("i"),
                 array("i", map(number, split(fold(d.body))))) for d in docs]
    words = list(provisional)  # by provisional number
    stopwords = frozenset(STOPWORD_LISTS[config.stopwords])
    ordered = sorted(set(words) - stopwords)
    stemmer = _stemmer(config.stemmer)
    stems = stemmer.stemWords(ordered) if stemmer is not None else ordered
    vocabulary = {stem: i for i, stem in enumerate(sorted(set(stems)))}
    word_id = {word: vocabulary[stem] for word, stem in zip(ordered, stems, strict=True)}
    # Stop words are dropped before stemming, as bm25s.tokenize does; the rest map straight to their final id.
    # All C calls (filterfalse, map, bound methods): no bytecode per token.
    final = [word_id.get(word, -1) for word in words]
    is_stop = frozenset(i for i, word in enumerate(words) if word in stopwords).__contains__
    lookup = final.__getitem__
    tokens = []
    for heading, body in numbered:
        head = list(map(lookup, filterfalse(is_stop, heading))) if repeat else []
        tokens.append(head * repeat + list(map(lookup, filterfalse(is_stop, body))))
    return tokens, vocabulary


def build_index(documents: Iterable[Document], config: Bm25Config = DEFAULT_CONFIG) -> Bm25Index:
    """Index exactly these documents: their order in the input does not matter (they are sorted first)."""
    started = time.perf_counter()
    docs = _ordered(documents)
    if not docs:
        raise ValueError("cannot index an empty document set")
    # The build makes a list of ids per document and bm25s's counts from them: hundreds of thousands of containers
    # and no reference cycle, which the cycle collector walked again and again (a sixth of the build's CPU on HRS).
    with collector_paused():
        tokens, vocabulary = _document_token_ids(docs, config)
        retriever = bm25s.BM25(k1=config.k1, b=config.b, delta=config.delta, method=config.variant,
                               dtype=config.dtype, backend="numpy", csc_backend="numpy")
        # No empty token: bm25s would add "" to the vocabulary to score token-less queries as 0 for
        # every document; here such a query is a disclosed no-hit instead. When no document has a
        # token, avgdl is 0 and bm25s divides 0 by 0 for an empty weight array: nothing to warn about.
        quiet = np.errstate(invalid="ignore", divide="ignore") if not any(tokens) else contextlib.nullcontext()
        with quiet:
            retriever.index(Tokenized(ids=tokens, vocab=vocabulary),
                            create_empty_token=False, show_progress=False)
    return Bm25Index(
        config=config, doc_ids=tuple(d.doc_id for d in docs), sort_keys=tuple(d.sort_key for d in docs),
        retriever=retriever, document_set_hash=_set_hash(docs),
        average_length=float(np.mean([len(t) for t in tokens])), build_seconds=time.perf_counter() - started,
    )


def snapshot_set_key(snapshot_hashes: Iterable[str], *, rule: str = "") -> str:
    """A cache key for the documents of a set of snapshots: their sorted sha256s plus the rule that
    turns a snapshot's provisions into documents (change ``rule`` when that code changes)."""
    return _sha256_text(json.dumps({"snapshots": sorted(snapshot_hashes), "rule": rule}, separators=(",", ":")))


__all__ = [
    "DEFAULT_CONFIG",
    "METHOD",
    "NO_HIT",
    "NO_TERMS",
    "OK",
    "SHORT",
    "Bm25Config",
    "Bm25Index",
    "Document",
    "Hit",
    "SearchOutcome",
    "analyze",
    "analyze_many",
    "build_index",
    "document_set_hash",
    "document_tokens",
    "library_versions",
    "snapshot_set_key",
]
