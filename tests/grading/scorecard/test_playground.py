"""The playground: exactly the grader's code path, with what it matched marked."""

from __future__ import annotations

import numpy as np

from grading.scorecard.playground import playground_overlap
from scoring.cuad.tokens import SourceIndex, grounding, token_f1, tokenize


def _random_text(rng: np.random.Generator) -> str:
    vocab = ["the", "The", "party", "Party", "shall", "not", "assign", "law", "of", "Nevada", "—", "é", "x1", "A.B"]
    seps = [" ", "  ", ", ", ". ", "\n", "-", ""]
    n = int(rng.integers(0, 14))
    return "".join(vocab[int(rng.integers(len(vocab)))] + seps[int(rng.integers(len(seps)))] for _ in range(n))


def test_the_playground_endpoint_returns_the_graders_figures_on_random_strings(db, stakeholder_client):
    rng = np.random.default_rng(11)
    for _ in range(60):
        a, b = _random_text(rng), _random_text(rng)
        data = stakeholder_client.get("/api/cuad/playground/", {"a": a, "b": b, "claim": a, "source": b}).json()
        assert data["f1"] == token_f1(tokenize(a), tokenize(b))
        assert data["grounding"] == grounding(a, SourceIndex(b))
        overlap = playground_overlap(a=a, b=b)
        assert sum(len(tokenize(p.text)) for p in overlap.a_pieces if p.marked) == overlap.shared
        assert "".join(p.text for p in overlap.a_pieces) == a


def test_the_playground_page_recomputes_a_fragment_as_you_type(db, stakeholder_client):
    response = stakeholder_client.get(
        "/cuad/playground/", {"part": "overlap", "a": "governed by Nevada law", "b": "Nevada law governs"},
        HTTP_HX_REQUEST="true",
    )
    page = response.content.decode()
    assert page.lstrip().startswith('<div id="overlap"') and "<mark>Nevada</mark>" in page
    assert "0.571" in page  # 2·2/(4+3)
