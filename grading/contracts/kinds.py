"""The review kind of the firm's gold labels: per contract and clause category, present (with its spans) or absent.

One item is one (contract, category) pair, CUAD's own question form ("Highlight the parts related to Governing
Law"): the item's query is the category and its description, its source the whole contract text, and it has no
passage. The answer is the ``presence`` grade (1 present, 0 absent; "unknown" is not an answer a gold set can
use) and, when present, the spans of the contract text that answer it (``JudgmentRevision.spans``: half-open
character offsets into the item's ``source_text``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from grading.contracts.selectors import clause_item_locations
from reviewapp.review.kinds import GradeType, PoolKind, SpanLocations

CONTRACT_CLAUSE_KIND_KEY = "contract_clause"
PRESENCE = "presence"
ABSENT = 0
PRESENT = 1


def _span_locations(external_ref: Mapping[str, Any]) -> SpanLocations | None:
    # Read when a reviewer opens an item, long after apps are ready: the selectors import models.

    return clause_item_locations(external_ref)


CONTRACT_CLAUSE_KIND = PoolKind(
    key=CONTRACT_CLAUSE_KIND_KEY,
    label="Contract clause spans (one category over the whole contract)",
    grade_types=[
        GradeType(PRESENCE, "Clause", "Does the contract have a clause of this category? If so, highlight every "
                                      "part of the text that answers it; if not, mark the category absent."),
    ],
    scale=[(ABSENT, "a", "absent"), (PRESENT, "p", "present")],
    query_label="Clause category and its description",
    source_label="Contract",
    passage_label="Highlighted spans",
    qrels_grade_type=PRESENCE,
    answers_spans=True,
    workspace_template="cuad/contracts/label_item.html",
    span_locations=_span_locations,
)
