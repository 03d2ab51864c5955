"""Token overlap (axis 1) and source grounding (axis 2) for clause extractions.

Definitions (the CUAD grading rules):

- Tokens: the text lowercased, then Unicode word tokens (``\\w+``).
- Token F1: bag-of-tokens (multiset) overlap, p = |A∩B|/|A|, r = |A∩B|/|B|,
  F1 = 2pr/(p+r), 0 when nothing overlaps.
- Grounding: distinct word trigrams of the claim found among the source's word
  trigrams, divided by the claim's distinct trigrams; a claim of one or two
  tokens uses n-grams of its own length.

Two edge rules, both needed so that a perfect run (every CUAD span extracted
verbatim) scores 1.0:

- Two empty bags (a span such as "[●]" or "." has no word token) have F1 1.0,
  the SQuAD convention for identical empty answers; empty against non-empty is 0.
- A claim that occurs verbatim (case-insensitively) in the source is grounded
  (1.0). CUAD cuts about a hundred spans inside a word ("JOINT VENTURE
  AGREEMEN", "9/24/2018" out of "09/24/2018"); the fragment at the edge is not a
  source token, so its trigram would otherwise count as absent although every
  character of the claim is in the document.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

WORD = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """Lowercased Unicode word tokens (``\\w+``) of ``text``, in order."""
    return WORD.findall(text.lower())


def token_f1(a: Sequence[str], b: Sequence[str]) -> float:
    """Bag-of-tokens F1 between token sequences ``a`` (claim) and ``b`` (reference)."""
    if not a or not b:
        return 1.0 if not a and not b else 0.0
    return bag_f1(Counter(a), len(a), Counter(b), len(b))


def bag_f1(a: Counter, len_a: int, b: Counter, len_b: int) -> float:
    """Token F1 from precomputed bags (so a matrix of pairs counts each text once)."""
    if len_a == 0 or len_b == 0:
        return 1.0 if len_a == 0 and len_b == 0 else 0.0
    if len(a) > len(b):
        a, b = b, a
    overlap = sum(min(count, b[token]) for token, count in a.items() if token in b)
    if overlap == 0:
        return 0.0
    # 2pr/(p+r) with p = o/|A|, r = o/|B| simplifies to 2o/(|A|+|B|).
    return 2.0 * overlap / (len_a + len_b)


def ngrams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    """Distinct contiguous n-grams of ``tokens`` (empty when there are fewer than n tokens)."""
    if n <= 0:
        raise ValueError("n must be positive")
    return set(zip(*(tokens[i:] for i in range(n)), strict=False))


class SourceIndex:
    """A source document prepared once for grounding many claims against it.

    Tokens and n-gram sets are built only when a claim that is not verbatim needs them.
    """

    def __init__(self, text: str) -> None:
        self.lower = text.lower()
        self._tokens: list[str] | None = None
        self._grams: dict[int, set[tuple[str, ...]]] = {}

    @property
    def tokens(self) -> list[str]:
        # Built on first need: when every claim is verbatim, the contract is never tokenized.
        if self._tokens is None:
            self._tokens = WORD.findall(self.lower)
        return self._tokens

    def grams(self, n: int) -> set[tuple[str, ...]]:
        found = self._grams.get(n)
        if found is None:
            found = self._grams[n] = ngrams(self.tokens, n)
        return found


def grounding(claim: str, source: SourceIndex, *, claim_tokens: Sequence[str] | None = None) -> float:
    """Share of the claim's distinct word trigrams found in the source, in [0, 1].

    Claims of one or two tokens use n-grams of their own length; a claim found
    verbatim in the source is 1.0; a claim without word tokens that is not
    verbatim in the source is 0.0.
    """
    stripped = claim.strip()
    if stripped and stripped.lower() in source.lower:
        return 1.0
    tokens = tokenize(claim) if claim_tokens is None else claim_tokens
    if not tokens:
        return 0.0
    n = min(3, len(tokens))
    grams = ngrams(tokens, n)
    found = source.grams(n)
    return sum(1 for g in grams if g in found) / len(grams)
