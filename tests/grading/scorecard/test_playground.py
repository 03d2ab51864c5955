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
        data = stakeholder_client.get("/api/v1/cuad/playground/", {"a": a, "b": b, "claim": a, "source": b}).json()
        ta, tb = tokenize(a), tokenize(b)
        # Where neither text has a token the grader's 1.0 is a convention, not a match: the playground says null.
        assert data["f1"] == (token_f1(ta, tb) if ta or tb else None)
        verbatim = bool(a.strip()) and a.strip().lower() in b.lower()
        assert data["grounding"] == (grounding(a, SourceIndex(b)) if ta or verbatim else None)
        overlap = playground_overlap(a=a, b=b)
        assert sum(len(tokenize(p.text)) for p in overlap.a_pieces if p.marked) == overlap.shared
        assert "".join(p.text for p in overlap.a_pieces) == a


def test_the_playground_page_recomputes_a_fragment_as_you_type(db, stakeholder_client):
    response = stakeholder_client.get(
        "/cuad/scorecard/playground/", {"part": "overlap", "a": "governed by Nevada law", "b": "Nevada law governs"},
        HTTP_HX_REQUEST="true",
    )
    page = response.content.decode()
    assert page.lstrip().startswith('<div id="overlap"') and "<mark>Nevada</mark>" in page
    assert "0.571" in page  # 2·2/(4+3)


def _contract(n_chars: int) -> str:
    """A long contract-like text: numbered clauses until ``n_chars`` characters."""
    clauses, i = [], 0
    while sum(len(c) + 1 for c in clauses) < n_chars:
        i += 1
        clauses.append(f"{i}. The Licensee shall pay the royalty of clause {i} within {i % 90 + 1} days of invoice.")
    return " ".join(clauses)[:n_chars]


def test_the_playground_takes_a_70000_character_contract_by_post(db, stakeholder_client):
    source = _contract(70_000)
    claim = "The Licensee shall pay the royalty of clause 800 within"
    response = stakeholder_client.post(
        "/cuad/scorecard/playground/?part=grounding", {"claim": claim, "source": source}, HTTP_HX_REQUEST="true"
    )
    page = response.content.decode()
    assert response.status_code == 200 and page.lstrip().startswith('<div id="grounding"')
    assert "verbatim in the source" in page and '<span class="score" data-testid="grounding-value">1.000' in page
    # the full page and the API take the same POST
    full = stakeholder_client.post("/cuad/scorecard/playground/",
                                   {"a": source, "b": source, "claim": claim, "source": source})
    assert full.status_code == 200 and full.context["overlap"].f1 == 1.0
    api = stakeholder_client.post(
        "/api/v1/cuad/playground/", {"a": claim, "b": source, "claim": claim, "source": source})
    assert api.status_code == 200 and api.json()["grounding"] == 1.0


def test_the_page_posts_its_texts(db, stakeholder_client):
    page = stakeholder_client.get("/cuad/scorecard/playground/").content.decode()
    assert 'method="post"' in page and "csrfmiddlewaretoken" in page
    assert "hx-post=" in page and "hx-get=" not in page


def test_two_empty_boxes_show_no_tokens_instead_of_a_perfect_f1(db, stakeholder_client):
    fragment = stakeholder_client.post(
        "/cuad/scorecard/playground/?part=overlap", {"a": "", "b": "  "}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert '<span class="score" data-testid="f1">no tokens</span>' in fragment
    assert "1.000" not in fragment and "0/0" not in fragment
    empty_claim = stakeholder_client.post(
        "/cuad/scorecard/playground/?part=grounding", {"claim": "", "source": "some text"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert '<span class="score" data-testid="grounding-value">no tokens</span>' in empty_claim
    assert "hallucinated at" not in empty_claim
    api = stakeholder_client.post("/api/v1/cuad/playground/", {"a": "", "b": ""}).json()
    assert (api["f1"], api["precision"], api["recall"]) == (None, None, None)
    one_side = stakeholder_client.post("/api/v1/cuad/playground/", {"a": "", "b": "Nevada law"}).json()
    assert (one_side["f1"], one_side["precision"], one_side["recall"]) == (0.0, None, 0.0)


def test_an_oversized_box_is_refused_by_name_and_replaces_the_result(db, stakeholder_client):
    from grading.scorecard.playground import MAX_CHARS

    fragment = stakeholder_client.post(
        "/cuad/scorecard/playground/?part=grounding", {"claim": "x", "source": "y" * (MAX_CHARS + 1)},
        HTTP_HX_REQUEST="true")
    text = fragment.content.decode()
    assert fragment.status_code == 200 and text.lstrip().startswith('<div id="grounding"')
    assert f"source: {MAX_CHARS + 1:,} characters is over the {MAX_CHARS:,}-character limit" in text
    assert 'data-testid="grounding-value"' not in text  # no figure of any text is left showing
    api = stakeholder_client.post("/api/v1/cuad/playground/", {"a": "a" * (MAX_CHARS + 1), "b": "b"})
    assert api.status_code == 400 and api.json()["errors"][0].startswith("a: ")
