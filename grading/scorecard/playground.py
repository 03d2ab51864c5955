"""The playground: the grader's own two primitives (token F1, grounding) on any two texts, what they matched marked.

Pure: exactly the functions of ``scoring.cuad.tokens`` the grader uses, so the
figures are the grader's, never a re-implementation.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from scoring.cuad.tokens import SourceIndex, grounding, ngrams, token_f1, tokenize


@dataclass(frozen=True)
class Piece:
    text: str
    marked: bool


def pieces_html(pieces: list[Piece]) -> SafeString:
    """The pieces as escaped HTML, matched ones in ``<mark>``.

    Built here rather than in a template loop: a 70,000-character contract is
    ~25,000 pieces, which a template loop took over a second to render on
    every keystroke.
    """
    return mark_safe(  # noqa: S308 -- every piece is escaped
        "".join(f"<mark>{escape(p.text)}</mark>" if p.marked else escape(p.text) for p in pieces)
    )


def _word_spans(text: str) -> list[tuple[int, int, str]] | None:
    """Positions of the grader's tokens in ``text``; None if lowercasing moves characters (then no marks)."""
    found = [(m.start(), m.end(), m.group().lower()) for m in re.finditer(r"\w+", text)]
    if [t for _, _, t in found] != tokenize(text):
        return None
    return found


def _pieces(text: str, spans: list[tuple[int, int, str]] | None, marked: set[int]) -> list[Piece]:
    if spans is None:
        return [Piece(text, False)]
    out: list[Piece] = []
    pos = 0
    for i, (s, e, _) in enumerate(spans):
        if i in marked:
            if s > pos:
                out.append(Piece(text[pos:s], False))
            out.append(Piece(text[s:e], True))
            pos = e
    out.append(Piece(text[pos:], False))
    return [p for p in out if p.text]


MAX_CHARS = 400_000  # per box: CUAD's longest contract is 338k characters


def playground_check(values: dict[str, str]) -> list[str]:
    """Errors naming each box over the size limit (nothing else is refused: any text has a score)."""
    return [
        f"{name}: {len(text):,} characters is over the {MAX_CHARS:,}-character limit of a box"
        for name, text in values.items()
        if len(text) > MAX_CHARS
    ]


@dataclass(frozen=True)
class OverlapResult:
    f1: float | None  # None when neither text has a token (the grader's 1.0 there is a convention, not a match)
    precision: float | None  # None when A has no token (0/0)
    recall: float | None  # None when B has no token (0/0)
    shared: int
    a_tokens: int
    b_tokens: int
    a_pieces: list[Piece]
    b_pieces: list[Piece]

    @property
    def no_tokens(self) -> bool:
        return self.a_tokens == 0 and self.b_tokens == 0

    @property
    def a_html(self) -> SafeString:
        return pieces_html(self.a_pieces)

    @property
    def b_html(self) -> SafeString:
        return pieces_html(self.b_pieces)


def playground_overlap(*, a: str, b: str) -> OverlapResult:
    """Token F1 exactly as the grader computes it (``scoring.cuad.tokens.token_f1``), shared tokens marked.

    Marks follow the multiset rule: a token occurring twice in A and once in B
    is marked once in each text (its first occurrences).
    """
    ta, tb = tokenize(a), tokenize(b)
    f1 = token_f1(ta, tb)

    shared_bag = Counter(ta) & Counter(tb)
    shared = sum(shared_bag.values())

    def marks(spans):
        if spans is None:
            return set()
        left = dict(shared_bag)
        out = set()
        for i, (_, _, tok) in enumerate(spans):
            if left.get(tok, 0) > 0:
                left[tok] -= 1
                out.add(i)
        return out

    sa, sb = _word_spans(a), _word_spans(b)
    return OverlapResult(
        f1=f1 if ta or tb else None,
        precision=shared / len(ta) if ta else None,
        recall=shared / len(tb) if tb else None,
        shared=shared,
        a_tokens=len(ta),
        b_tokens=len(tb),
        a_pieces=_pieces(a, sa, marks(sa)),
        b_pieces=_pieces(b, sb, marks(sb)),
    )


@dataclass(frozen=True)
class GroundingResult:
    grounding: float | None  # None when the claim has no token and is not verbatim in the source (nothing to find)
    n: int  # n-gram length used (3, or the claim's own length when shorter)
    found: int
    total: int
    verbatim: bool
    claim_pieces: list[Piece]
    source_pieces: list[Piece]

    @property
    def claim_html(self) -> SafeString:
        return pieces_html(self.claim_pieces)

    @property
    def source_html(self) -> SafeString:
        return pieces_html(self.source_pieces)


def playground_grounding(*, claim: str, source: str) -> GroundingResult:
    """Trigram grounding exactly as the grader computes it (``scoring.cuad.tokens.grounding``), matches marked."""
    index = SourceIndex(source)
    value = grounding(claim, index)
    tokens = tokenize(claim)
    n = min(3, len(tokens)) if tokens else 3
    grams = ngrams(tokens, n) if tokens else set()
    source_grams = index.grams(n) if tokens else set()
    hits = {g for g in grams if g in source_grams}
    verbatim = bool(claim.strip()) and claim.strip().lower() in index.lower

    def marked(spans):
        if spans is None:
            return set()
        out = set()
        toks = [t for _, _, t in spans]
        for i in range(len(toks) - n + 1):
            if tuple(toks[i : i + n]) in hits:
                out.update(range(i, i + n))
        return out

    sc, ss = _word_spans(claim), _word_spans(source)
    return GroundingResult(
        grounding=value if tokens or verbatim else None,
        n=n,
        found=len(hits),
        total=len(grams),
        verbatim=verbatim,
        claim_pieces=_pieces(claim, sc, marked(sc)),
        source_pieces=_pieces(source, ss, marked(ss)),
    )
