"""Stage 1 of CUAD grading: the pair scores of one contract's extractions, computed once per run.

For each extraction: its grounding in the contract and, for each matcher, the CUAD span of the same category
it is assigned to within its (contract, category) cell and that pair's token F1 (``tokens.py`` defines both
axes). Stage 2 (``grading.py``) classifies and counts these stored numbers at any thresholds.

Two ways to the same numbers:

- the coded path (the usual one): every token of the contract, its extractions and its spans as an exact
  integer id (``coding.code_texts``); grounding as sorted integer n-gram codes, and every cell's F1 matrix
  from one sparse join of the (text, token) counts, as array work over the whole contract;
- the string path (the definitions, on Python strings): for the rare contract whose tokens cannot be coded
  (a hash collision, or a vocabulary too large for integer trigram codes). It is also the reference the
  coded path is tested against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, count

import numpy as np

from scoring.cuad.coding import CodedTexts, code_texts
from scoring.cuad.matching import MATCHERS, match
from scoring.cuad.tokens import SourceIndex, groundings, tokenize

# Trigram codes are three ids as digits in base ``vocabulary``; they fit int64 below this vocabulary size.
_CODED_VOCABULARY = 2**21
# How many (extraction token, span token) pairs of a join are materialised at once (bounds its memory).
_JOIN_PAIRS = 2_000_000

# One (contract, category) cell: its extraction indices, its span indices and their F1 matrix. The coded path
# gives the indices as arrays, the token path as lists.
_Cell = tuple[Sequence[int] | np.ndarray, Sequence[int] | np.ndarray, np.ndarray]


@dataclass(frozen=True)
class ContractScores:
    """Per-extraction pair scores for one contract (indices into its own span list; -1 = none)."""

    grounding: np.ndarray  # (E,) float
    best_f1: np.ndarray  # (E,) float, best F1 against any span of the same category
    best_span: np.ndarray  # (E,) int
    matched_span: dict[str, np.ndarray]  # matcher -> (E,) int
    matched_f1: dict[str, np.ndarray]  # matcher -> (E,) float


def score_contract(
    text: str,
    extractions: Sequence[tuple[int, str]],
    spans: Sequence[tuple[int, str]],
    *,
    matchers: Sequence[str] = MATCHERS,
) -> ContractScores:
    """Pair scores of a contract's extractions ``(category, text)`` against its CUAD spans ``(category, text)``.

    Matching is one-to-one within each (contract, category) cell; grounding is
    against the whole contract text.
    """
    claims = [t for _, t in extractions]
    coded = code_texts([text, *claims, *(t for _, t in spans)])
    cells: Mapping[int, _Cell]
    if coded is not None and coded.vocabulary < _CODED_VOCABULARY:
        ground = _coded_groundings(claims, coded)
        cells = _coded_cells(coded, [c for c, _ in extractions], [c for c, _ in spans])
    else:
        source = SourceIndex(text)
        ext_tokens = [tokenize(t) for t in claims]
        span_tokens = [tokenize(t) for _, t in spans]
        ext_ids, span_ids = token_ids([ext_tokens, span_tokens])
        ground = np.array(groundings(claims, source, claim_tokens=ext_tokens), dtype=float)
        cells = {
            cat: (rows, cols, f1_matrix_ids([ext_ids[i] for i in rows], [span_ids[j] for j in cols]))
            for cat, (rows, cols) in _cells([c for c, _ in extractions], [c for c, _ in spans]).items()
        }
    return _assemble(len(extractions), ground, cells, matchers)


def _cells(ext_categories: Sequence[int], span_categories: Sequence[int]) -> dict[int, tuple[list[int], list[int]]]:
    """Category -> (extraction indices, span indices), for the categories that have both."""
    ext_by_cat: dict[int, list[int]] = {}
    for i, cat in enumerate(ext_categories):
        ext_by_cat.setdefault(cat, []).append(i)
    span_by_cat: dict[int, list[int]] = {}
    for j, cat in enumerate(span_categories):
        span_by_cat.setdefault(cat, []).append(j)
    return {cat: (rows, span_by_cat[cat]) for cat, rows in ext_by_cat.items() if cat in span_by_cat}


def _assemble(
    n: int,
    ground: np.ndarray,
    cells: Mapping[int, _Cell],
    matchers: Sequence[str],
) -> ContractScores:
    """Best span and each matcher's assignment, cell by cell, from the cells' F1 matrices."""
    best_f1 = np.zeros(n)
    best_span = np.full(n, -1, dtype=np.int64)
    matched_span = {m: np.full(n, -1, dtype=np.int64) for m in matchers}
    matched_f1 = {m: np.zeros(n) for m in matchers}
    for rows, cols, matrix in cells.values():
        rows_arr = np.asarray(rows)
        cols_arr = np.asarray(cols)
        arg = matrix.argmax(axis=1)
        best = matrix[np.arange(len(rows_arr)), arg]
        best_f1[rows_arr] = best
        best_span[rows_arr] = np.where(best > 0, cols_arr[arg], -1)
        for m in matchers:
            r, c = match(matrix, matcher=m)
            matched_span[m][rows_arr[r]] = cols_arr[c]
            matched_f1[m][rows_arr[r]] = matrix[r, c]
    return ContractScores(ground, best_f1, best_span, matched_span, matched_f1)


# ---------------------------------------------------------------------------
# The coded path


def _gather(coded: CodedTexts, texts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ids of ``texts`` (indices into ``coded``) concatenated, and the position in ``texts`` owning each."""
    lengths = coded.bounds[texts + 1] - coded.bounds[texts]
    owner = np.repeat(np.arange(len(texts)), lengths)
    starts = np.repeat(coded.bounds[texts] - (np.cumsum(lengths) - lengths), lengths)
    return coded.ids[starts + np.arange(len(owner))], owner


def _window_codes(ids: np.ndarray, n: int, vocabulary: int) -> np.ndarray:
    """Every window of ``n`` consecutive ids as one integer (the ids as digits in base ``vocabulary``)."""
    windows = len(ids) - n + 1
    code = np.zeros(max(windows, 0), dtype=np.int64)
    for k in range(n):
        code = code * vocabulary + ids[k : k + windows]
    return code


def _coded_groundings(claims: Sequence[str], coded: CodedTexts) -> np.ndarray:
    """``tokens.grounding`` of every claim (text ``1 + i`` of ``coded``; text 0 is the source).

    A claim's distinct n-grams (n = min(3, its length)) and how many of them the source has, as sorted codes.
    The verbatim test (a claim found in the source, case-insensitively, is 1.0) is a search of the whole
    source, so it runs only where it can change the answer: not for a claim whose n-grams are all in the
    source (1.0 already), and not for one missing an interior n-gram (one of neither its first nor its last
    token, which may be cut inside a word): a claim found verbatim has every interior n-gram in the source.
    """
    out = np.zeros(len(claims))
    maybe_verbatim = np.zeros(len(claims), dtype=bool)
    lengths = coded.lengths()[1 : 1 + len(claims)]
    sizes = np.minimum(lengths, 3)
    maybe_verbatim[sizes == 0] = True
    source = coded.text(0)
    vocabulary = max(coded.vocabulary, 1)
    for n in (1, 2, 3):
        members = np.flatnonzero(sizes == n)
        if not len(members):
            continue
        ids, owner = _gather(coded, members + 1)
        code = _window_codes(ids, n, vocabulary)
        inside = np.flatnonzero(owner[: len(code)] == owner[n - 1 :])  # windows lying inside one claim
        code, owner = code[inside], owner[inside]
        member_lengths = lengths[members]
        window = inside - (np.cumsum(member_lengths) - member_lengths)[owner]  # its position in its claim
        known = np.sort(_window_codes(source, n, vocabulary))  # duplicates are harmless to searchsorted
        if len(known):
            present = known[np.minimum(np.searchsorted(known, code), len(known) - 1)] == code
        else:
            present = np.zeros(len(code), dtype=bool)
        interior = (window >= 1) & (window <= member_lengths[owner] - n - 1)
        interior_missing = np.bincount(owner[interior & ~present], minlength=len(members))
        # Each (claim, n-gram) once: sorted by claim then code, keep the first of each run.
        order = np.lexsort((code, owner))
        code, owner, present = code[order], owner[order], present[order]
        first = np.ones(len(code), dtype=bool)
        first[1:] = (code[1:] != code[:-1]) | (owner[1:] != owner[:-1])
        distinct = np.bincount(owner[first], minlength=len(members))
        hits = np.bincount(owner[first & present], minlength=len(members))
        out[members] = hits / distinct
        maybe_verbatim[members] = (hits < distinct) & (interior_missing == 0)
    candidates = np.flatnonzero(maybe_verbatim).tolist()
    if candidates:
        lower_source = coded.lowered_text(0)
        for i in candidates:
            stripped = claims[i].strip()
            if stripped and stripped.lower() in lower_source:
                out[i] = 1.0
    return out


def _token_counts(coded: CodedTexts, texts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bags of ``texts``: one entry per (text, distinct token) as (position in ``texts``, token id, count)."""
    ids, owner = _gather(coded, texts)
    vocabulary = max(coded.vocabulary, 1)
    keys, counts = np.unique(owner * vocabulary + ids, return_counts=True)
    return keys // vocabulary, keys % vocabulary, counts


def _coded_cells(
    coded: CodedTexts, ext_categories: Sequence[int], span_categories: Sequence[int]
) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every cell's F1 matrix (the numbers of ``f1_matrix_ids``), all cells of the contract at once.

    Overlaps are summed over the tokens each (extraction, span) pair shares: the (text, token) counts of both
    sides joined on (category, token), min(count, count) per joined entry, added into the cells laid end to
    end. Only pairs that share a token are touched, where a dense count matrix per cell is extractions x spans
    x the cell's vocabulary.
    """
    n_ext, n_span = len(ext_categories), len(span_categories)
    if not n_ext or not n_span:
        return {}
    labels, dense = np.unique(np.asarray([*ext_categories, *span_categories]), return_inverse=True)
    ext_cat, span_cat = dense[:n_ext], dense[n_ext:]
    ext_per = np.bincount(ext_cat, minlength=len(labels))
    m = np.bincount(span_cat, minlength=len(labels))
    k = np.where(m > 0, ext_per, 0)  # a category without spans has no cell
    offsets = np.concatenate(([0], np.cumsum(k * m)))
    # Each text's row (extractions) or column (spans) within its cell: its rank among its category's texts.
    ext_order, ext_first = np.argsort(ext_cat, kind="stable"), np.cumsum(ext_per) - ext_per
    span_order, span_first = np.argsort(span_cat, kind="stable"), np.cumsum(m) - m
    ext_rank = np.empty(n_ext, dtype=np.int64)
    ext_rank[ext_order] = np.arange(n_ext) - np.repeat(ext_first, ext_per)
    span_rank = np.empty(n_span, dtype=np.int64)
    span_rank[span_order] = np.arange(n_span) - np.repeat(span_first, m)

    vocabulary = max(coded.vocabulary, 1)
    a_text, a_token, a_count = _token_counts(coded, np.arange(1, 1 + n_ext))
    b_text, b_token, b_count = _token_counts(coded, np.arange(1 + n_ext, 1 + n_ext + n_span))
    a_group = ext_cat[a_text] * vocabulary + a_token
    b_group = span_cat[b_text] * vocabulary + b_token
    b_order = np.argsort(b_group, kind="stable")
    b_sorted = b_group[b_order]
    lo = np.searchsorted(b_sorted, a_group, side="left")
    pairs = np.searchsorted(b_sorted, a_group, side="right") - lo
    overlap = np.zeros(int(offsets[-1]))
    ends = np.cumsum(pairs)
    start = 0
    while start < len(pairs):
        # A chunk of extraction entries whose joined pairs fit the bound (at least one entry).
        stop = max(int(np.searchsorted(ends, (ends[start - 1] if start else 0) + _JOIN_PAIRS, side="right")),
                   start + 1)
        chunk = slice(start, stop)
        take = pairs[chunk]
        a = np.repeat(np.arange(start, stop), take)
        b = b_order[np.repeat(lo[chunk], take) + np.arange(len(a)) - np.repeat(np.cumsum(take) - take, take)]
        i, j = a_text[a], b_text[b]
        cat = ext_cat[i]
        flat = offsets[cat] + ext_rank[i] * m[cat] + span_rank[j]
        overlap += np.bincount(flat, weights=np.minimum(a_count[a], b_count[b]), minlength=len(overlap))
        start = stop

    lengths = coded.lengths()
    ext_len = lengths[1 : 1 + n_ext].astype(float)
    span_len = lengths[1 + n_ext : 1 + n_ext + n_span].astype(float)
    cells = {}
    for c in np.flatnonzero(k * m).tolist():
        rows = ext_order[ext_first[c] : ext_first[c] + k[c]]
        cols = span_order[span_first[c] : span_first[c] + m[c]]
        shared = overlap[offsets[c] : offsets[c + 1]].reshape(k[c], m[c])
        cells[labels[c].item()] = (rows, cols, _f1_from_overlap(shared, ext_len[rows], span_len[cols]))
    return cells


# ---------------------------------------------------------------------------
# The string path


def f1_matrix(claims: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> np.ndarray:
    """Token F1 of every claim (rows) against every reference (columns); same numbers as ``token_f1`` per pair."""
    return f1_matrix_ids(*token_ids([claims, references]))


def token_ids(groups: Sequence[Sequence[Sequence[str]]]) -> list[list[np.ndarray]]:
    """Each token list of each group as an integer array, one id per distinct token across all groups.

    The ids are built in C (``dict.setdefault`` mapped over every token: an id is the count of tokens before
    its first occurrence), once for all the texts of a contract rather than once per (contract, category) cell.
    """
    lists = [tokens for group in groups for tokens in group]
    vocab: dict[str, int] = {}
    total = sum(len(tokens) for tokens in lists)
    ids = np.fromiter(map(vocab.setdefault, chain.from_iterable(lists), count()), dtype=np.int64, count=total)
    arrays = np.split(ids, np.cumsum([len(tokens) for tokens in lists])[:-1]) if lists else []
    out, at = [], 0
    for group in groups:
        out.append(arrays[at : at + len(group)])
        at += len(group)
    return out


def f1_matrix_ids(claims: Sequence[np.ndarray], references: Sequence[np.ndarray]) -> np.ndarray:
    """``f1_matrix`` of texts given as token id arrays (``token_ids``).

    Vectorised over a cell's vocabulary: multiset overlap = sum of elementwise
    minima of the two count vectors, F1 = 2·overlap/(|A|+|B|).
    """
    k, m = len(claims), len(references)
    if k == 0 or m == 0:
        return np.zeros((k, m), dtype=float)
    texts = [*claims, *references]
    lengths = [len(t) for t in texts]
    # The cell's own dense vocabulary, so the count vectors are as short as the cell's distinct tokens.
    _, dense = np.unique(np.concatenate(texts), return_inverse=True)
    size = max(int(dense.max()) + 1 if len(dense) else 0, 1)
    owner = np.repeat(np.arange(k + m), lengths)
    counts = np.bincount(owner * size + dense.reshape(-1), minlength=(k + m) * size).reshape(k + m, size)
    a, b = counts[:k].astype(float), counts[k:].astype(float)
    overlap = np.empty((k, m))
    # Bound the k x m x vocabulary temporary to a few million cells.
    step = max(1, 4_000_000 // (m * size))
    for lo in range(0, k, step):
        overlap[lo : lo + step] = np.minimum(a[lo : lo + step, None, :], b[None, :, :]).sum(axis=2)
    return _f1_from_overlap(overlap, a.sum(axis=1), b.sum(axis=1))


def _f1_from_overlap(overlap: np.ndarray, len_a: np.ndarray, len_b: np.ndarray) -> np.ndarray:
    """Token F1 = 2·overlap/(|A|+|B|) of a claims x references overlap matrix; two empty bags are 1.0."""
    denom = len_a[:, None] + len_b[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        matrix = np.where(overlap > 0, 2.0 * overlap / denom, 0.0)
    matrix[(len_a[:, None] == 0) & (len_b[None, :] == 0)] = 1.0
    return matrix
