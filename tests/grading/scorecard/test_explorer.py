"""The explorer: graded extractions next to the CUAD spans, located in the contract text."""

from __future__ import annotations

from grading.dataset.models import Contract
from tests.grading.console_support import FABRICATED


def test_the_explorer_shows_graded_extractions_next_to_spans_with_offsets(loaded, stakeholder_client):
    alpha = Contract.objects.get(title="ALPHA-DISTRIBUTOR AGREEMENT")
    response = stakeholder_client.get(
        f"/cuad/scorecard/explorer/?run={loaded.noisy.pk}&type=Governing+Law&contract={alpha.pk}")
    ex = response.context["ex"]
    outcomes = {e.text: e.outcome for e in ex.extractions}
    assert outcomes[FABRICATED] == "hallucinated"
    fabricated = next(e for e in ex.extractions if e.text == FABRICATED)
    assert fabricated.located is None
    assert "found nowhere in the contract" in response.content.decode()
    for e in ex.extractions:
        if e.located:
            assert alpha.text[e.located.start:e.located.end].lower() == e.text.lower()
    for s in ex.spans:
        assert alpha.text[s.located.start:s.located.end] == s.text
