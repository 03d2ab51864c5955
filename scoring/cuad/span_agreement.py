"""Agreement of two labellers' span sets for one (contract, category), with the CUAD grader's own arithmetic.

One figure per pair of span sets, in [0, 1]:

- both absent: 1 (they agree there is nothing to highlight); one absent and the other present: 0;
- both present: every span of A is paired with at most one span of B by the maximum-total-token-F1
  one-to-one assignment (``matching.hungarian``; token F1 as ``tokens.token_f1``: lowercased ``\\w+`` bags), and
  the figure is the mean, over all the spans of both sets, of each span's matched F1 (0 for a span left
  unmatched): ``2 x (sum of matched F1) / (|A| + |B|)``. That is the F1 of the soft precision
  ``sum / |A|`` and soft recall ``sum / |B|`` the CUAD grader credits an extraction run with, made symmetric, so
  the figure does not depend on which lawyer is "A". Two identical sets score exactly 1.

With more than two labellers, ``pairwise_span_agreement`` is the mean over every pair of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from scoring.cuad.matching import assignment_total, hungarian
from scoring.cuad.pair_scores import f1_matrix
from scoring.cuad.tokens import tokenize


@dataclass(frozen=True)
class SpanAnswer:
    """One labeller's answer: present or not, and the texts of the spans highlighted (empty when absent)."""

    present: bool
    texts: tuple[str, ...] = ()


def span_set_f1(a: Sequence[str], b: Sequence[str]) -> float:
    """``2 x total matched token F1 / (|A| + |B|)`` over the optimal one-to-one matching; 1.0 for two empty sets."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    scores = f1_matrix([tokenize(t) for t in a], [tokenize(t) for t in b])
    rows, cols = hungarian(scores)
    return 2.0 * assignment_total(scores, rows, cols) / (len(a) + len(b))


def span_agreement(a: SpanAnswer, b: SpanAnswer) -> float:
    """The pair's figure (module docstring): presence first, then the span sets' matched token F1."""
    if a.present != b.present:
        return 0.0
    if not a.present:
        return 1.0
    return span_set_f1(a.texts, b.texts)


def pairwise_span_agreement(answers: Sequence[SpanAnswer]) -> float | None:
    """Mean of ``span_agreement`` over every pair of labellers; None with fewer than two answers."""
    pairs = list(itertools.combinations(answers, 2))
    if not pairs:
        return None
    return sum(span_agreement(a, b) for a, b in pairs) / len(pairs)
