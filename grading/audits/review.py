"""Humans settle it: the audit's candidates as a blinded review pool of kind "clause", and the labels it resolves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grading.audits.judging.excerpts import excerpt_of
from grading.audits.models import Audit
from grading.audits.services import AuditError
from grading.dataset.models import Contract
from reviewapp.review.agreement.selectors import pool_labels
from reviewapp.review.assignment.services import pool_assign
from reviewapp.review.errors import ReviewError
from reviewapp.review.pools.refs import PoolRef
from reviewapp.review.pools.selectors import pool_find
from reviewapp.review.pools.services import pool_create

AUDIT_JOB = "cuad-audit"  # external_ref tag of the review pools this module declares
REVIEW_TITLE = "Contract clauses: is the text a clause of the stated type?"
REVIEW_INSTRUCTIONS = (
    "Read the clause type and its description, then the contract excerpt. Answer yes if the text in question "
    "is a real clause of that type as the description defines it, no if it is not, unknown if you cannot tell."
)


def audit_pool(*, audit: Audit) -> PoolRef | None:
    """The review pool declared for this audit, or None."""
    found = pool_find(external_ref={"job": AUDIT_JOB, "audit": audit.pk}, kind="clause")
    return found[0] if found else None


def review_items(*, audit: Audit) -> list[dict]:
    """The reviewer-facing items: clause type + CUAD description, contract excerpt, text in question.

    Nothing else: no model, no judge, no verdict, no score, no grounding.
    The candidate id rides in ``external_ref`` (admin/job side only).
    """
    candidates = list(audit.candidates.select_related("category").order_by("position"))
    texts = dict(Contract.objects.filter(pk__in={c.contract_id for c in candidates}).values_list("id", "text"))
    return [
        {
            "query_id": c.category.name,
            "doc_id": f"candidate-{c.pk}",
            "query_text": f"{c.category.name}\n\n{c.category.description}".strip(),
            "source_heading": "",
            "source_text": excerpt_of(texts[c.contract_id], c.text),
            "passage_caption": "",
            "passage_text": c.text,
            "external_ref": {"candidate": c.pk},
        }
        for c in candidates
    ]


def audit_review_send(*, audit: Audit, user=None, reviewers: Sequence = (), per_item: int = 2):
    """Declare (once) the blinded review pool of the audit's candidates; assign it to ``reviewers`` if given.

    Returns (pool, created).
    """
    if not audit.flagged:
        raise AuditError(f"audit {audit.pk} has no candidates yet (its run is not flagged)")
    if audit.n_candidates == 0:
        raise AuditError(f"audit {audit.pk} has no candidates to review")
    pool = audit_pool(audit=audit)
    created = pool is None
    try:
        if pool is None:
            pool = pool_create(
                name=f"CUAD label audit #{audit.pk} (run {audit.run_id})",
                kind="clause",
                items=review_items(audit=audit),
                declared_rule=(
                    f"Every candidate of CUAD label audit #{audit.pk}: extractions of run {audit.run_id} grounded "
                    f"at >= {audit.grounding} in a clause type CUAD marks absent for that contract."
                ),
                declared_params={"audit": audit.pk, "grounding": audit.grounding, "candidates": audit.n_candidates},
                reviewers_per_item=per_item,
                reviewer_title=REVIEW_TITLE,
                instructions=REVIEW_INSTRUCTIONS,
                external_ref={"job": AUDIT_JOB, "audit": audit.pk},
                created_by=user if getattr(user, "is_authenticated", False) else None,
            )
        if reviewers:
            pool_assign(pool=pool, reviewers=reviewers, per_item=min(pool.reviewers_per_item, len(reviewers)))
    except ReviewError as exc:
        raise AuditError(str(exc)) from exc
    return pool, created


# ---------------------------------------------------------------------------
# The labels the reviewers resolved


@dataclass(frozen=True)
class HumanLabel:
    state: str  # "agreed" | "adjudicated" | "unresolved"
    value: str | None  # "yes" | "no" | "unknown" | None
    reason: str
    completed: int  # complete, non-stale judgments counted


def _verdict_word(value: int | str | None) -> str | None:
    """The pool's label in the audit's words: grades 0 and 1 are "no" and "yes"; "unknown" stays."""
    if value is None or isinstance(value, str):
        return value
    return {0: "no", 1: "yes"}.get(value, str(value))


def audit_human_labels(*, audit: Audit) -> dict[int, HumanLabel]:
    """Candidate id -> the review pool's resolved label (completed judgments only)."""
    pool = audit_pool(audit=audit)
    if pool is None:
        return {}
    out = {}
    for label in pool_labels(pool=pool):
        value = _verdict_word(label.value)
        out[int(label.external_ref["candidate"])] = HumanLabel(
            label.state, value, label.reason, sum(1 for g in label.grades if g is not None)
        )
    return out
