"""When a clause item's lawyers agree, and what its answer is: the rule every gold-set read shares.

An item (one contract, one category) is

- **adjudicated** when its latest ruling on ``presence`` is still bound to the item's texts, says present
  (with at least one span) or absent, and resolves a real dispute: at least two lawyers completed the item and
  their answers differ (``disputed``). The ruling's presence and spans are the answer;
- **an admin's own label** (``ADMIN_OWN``) when such a ruling stands on an item no two lawyers disputed (fewer
  than two complete answers, or answers that agree): the ruling is still the answer, but it is the admin's
  label, never counted or shown as adjudicated or lawyer-made. New rulings of this kind are refused
  (``adjudication.clause_ruling_record``, and the review engine's ``adjudication_record`` under every page); the
  state names those recorded before that rule;
- **agreed** when, with no such ruling, it has as many counted judgments as the pool asks for
  (``reviewers_per_item``) and all of them give the same presence and, when present, the same span set.
  "The same span set" is equality of the normal form (``reviewapp.review.spans.offsets``: trimmed, sorted,
  overlaps merged), i.e. the same characters highlighted; near misses that tokenise alike are still a
  disagreement, because a gold set stores offsets and two offsets are two different golds;
- **open** (it goes to adjudication) when the counted lawyers differ in presence or spans, one answered
  unknown, or a ruling said unknown or present without a span;
- **incomplete** while fewer lawyers than asked have completed it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grading.contracts.kinds import ABSENT, PRESENCE, PRESENT
from reviewapp.core.records.provenance import Procedure
from reviewapp.review.agreement.selectors import answers_disputed
from reviewapp.review.agreement.spans import SpanRuling, pool_span_judgments, pool_span_rulings
from reviewapp.review.pools.refs import PoolRef
from reviewapp.review.pools.selectors import pool_label_items, pool_source_texts
from reviewapp.review.spans.offsets import SpanError, spans_clean

AGREED = "agreed"
ADJUDICATED = "adjudicated"
ADMIN_OWN = "admin_own"
OPEN = "open"
INCOMPLETE = "incomplete"
RESOLVED = (AGREED, ADJUDICATED, ADMIN_OWN)
# By which procedure a resolved item's answer was made (``reviewapp.core.records.provenance``).
PROCEDURE = {AGREED: Procedure.LAWYER_BLIND, ADJUDICATED: Procedure.ADJUDICATED, ADMIN_OWN: Procedure.ADMIN_OWN}


@dataclass(frozen=True)
class LawyerAnswer:
    reviewer_id: int
    username: str
    presence: Any  # 1 present, 0 absent, "unknown"
    spans: list[list[int]]  # normal form; [] when absent


@dataclass(frozen=True)
class ClauseResolution:
    """One clause item, its lawyers' counted answers and what they come to."""

    pool_id: str
    item_id: str
    category: str
    title: str
    set_contract: int
    text_sha256: str
    source_hash: str  # the item's (title and text): the key of ``PoolResolutions.texts``
    taxonomy_sha256: str
    state: str  # AGREED | ADJUDICATED | ADMIN_OWN | OPEN | INCOMPLETE
    reason: str  # why open or incomplete; "" when resolved
    presence: int | None  # the answer when resolved
    spans: list[list[int]]  # the answer's spans when resolved and present
    answers: list[LawyerAnswer]
    ruling: SpanRuling | None
    required: int

    @property
    def resolved(self) -> bool:
        return self.state in RESOLVED


def _normal(text: str, spans: Any) -> list[list[int]]:
    try:
        return spans_clean(text=text, spans=spans)
    except SpanError:
        return [[-1, -1]]  # stored spans that are not offsets into this text never equal a real answer


def disputed(answers: list[LawyerAnswer]) -> bool:
    """A real dispute: at least two complete lawyer answers, not all the same presence and span set (the review
    engine's one rule, ``answers_disputed``, over answers of grade and spans as its ``item_dispute`` reads them)."""
    return answers_disputed([[a.presence, [list(span) for span in a.spans]] for a in answers])


def _decide(answers: list[LawyerAnswer], ruling: SpanRuling | None, required: int,
            ) -> tuple[str, str, int | None, list[list[int]]]:
    if ruling is not None:
        ruled = ADJUDICATED if disputed(answers) else ADMIN_OWN
        if ruling.value == PRESENT and ruling.spans:
            return ruled, "", PRESENT, ruling.spans
        if ruling.value == ABSENT:
            return ruled, "", ABSENT, []
        return OPEN, ("the ruling says present but highlights no span" if ruling.value == PRESENT
                      else f"the ruling says {ruling.value}"), None, []
    if len(answers) < required:
        return INCOMPLETE, f"{len(answers)} of {required} lawyers have completed it", None, []
    values = {a.presence for a in answers}
    if any(v not in (ABSENT, PRESENT) for v in values):
        return OPEN, "a lawyer answered unknown", None, []
    if len(values) > 1:
        return OPEN, "the lawyers disagree on presence", None, []
    if values == {ABSENT}:
        return AGREED, "", ABSENT, []
    span_sets = {tuple(map(tuple, a.spans)) for a in answers}
    if len(span_sets) > 1:
        return OPEN, "the lawyers highlight different spans", None, []
    if not answers[0].spans:
        return OPEN, "present, but no span is highlighted", None, []
    return AGREED, "", PRESENT, answers[0].spans


@dataclass(frozen=True)
class PoolResolutions:
    pool: PoolRef
    rows: list[ClauseResolution]
    texts: dict[str, str]  # source hash -> the contract text the spans are offsets into

    def text_of(self, row: ClauseResolution) -> str:
        return self.texts[row.source_hash]


def clause_pool_resolutions(*, pool: PoolRef) -> PoolResolutions:
    """Every labelled item of a clause pool, resolved by the rule above, in (category, text hash) order."""
    by_item: dict[str, list[Any]] = {}
    for judgment in pool_span_judgments(pool=pool):
        by_item.setdefault(judgment.record.item_id, []).append(judgment)
    rulings = pool_span_rulings(pool=pool, grade_type=PRESENCE)
    required = max(int(pool.reviewers_per_item), 1)
    texts = pool_source_texts(pool=pool)
    out = []
    for item in pool_label_items(pool=pool):
        text = texts[item.source_hash]
        answers = [
            LawyerAnswer(
                reviewer_id=j.record.reviewer_id, username=j.record.reviewer_username,
                presence=j.record.grades.get(PRESENCE),
                spans=_normal(text, j.spans) if j.record.grades.get(PRESENCE) == PRESENT else [],
            )
            for j in by_item.get(item.item_id, [])
        ]
        ruling = rulings.get(item.item_id)
        state, reason, presence, spans = _decide(answers, ruling, required)
        ref = item.external_ref
        out.append(ClauseResolution(
            pool_id=pool.public_id, item_id=item.item_id, category=item.query_id, title=item.source_heading,
            set_contract=int(ref.get("set_contract", 0)), text_sha256=item.doc_id, source_hash=item.source_hash,
            taxonomy_sha256=str(ref.get("taxonomy_sha256", "")), state=state, reason=reason, presence=presence,
            spans=spans, answers=answers, ruling=ruling, required=required,
        ))
    return PoolResolutions(pool=pool, rows=out, texts=texts)
