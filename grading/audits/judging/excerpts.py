"""What a judge or a reviewer is shown of a candidate: the contract around it, CUAD's own examples of its type."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from grading.audits.judging.judges import EXCERPT_CHARS, EXEMPLARS, CandidateContext
from grading.audits.models import Audit, AuditCandidate
from grading.dataset.models import Contract, Span
from reviewapp.core.records.hashing import sha256_hex
from scoring.cuad.quotes import locate


def excerpt_of(text: str, quote: str, *, chars: int = EXCERPT_CHARS) -> str:
    """The contract around the quote (``chars`` each side, cut at white space); the quote alone if not found."""
    where = locate(text, quote)
    if where is None:
        return quote
    start, end = max(0, where.start - chars), min(len(text), where.end + chars)
    if start > 0:
        space = text.find(" ", start, where.start)
        start = space + 1 if space >= 0 else start
    if end < len(text):
        space = text.rfind(" ", where.end, end)
        end = space if space >= 0 else end
    return ("… " if start > 0 else "") + text[start:end].strip() + (" …" if end < len(text) else "")


def _exemplars(dataset_id: int, category_ids: set[int]) -> dict[int, list[tuple[int, str]]]:
    """Per category, CUAD spans as (contract id, text), in a fixed pseudo-random order (sha256 of the span id)."""
    rows = Span.objects.filter(contract__dataset_id=dataset_id, category_id__in=category_ids).values_list(
        "category_id", "contract_id", "qa_id", "answer_index", "text"
    )
    out: dict[int, list[tuple[str, int, str]]] = defaultdict(list)
    for category_id, contract_id, qa_id, index, text in rows:
        out[category_id].append((sha256_hex(f"{qa_id}#{index}"), contract_id, text))
    return {k: [(c, t) for _, c, t in sorted(v)] for k, v in out.items()}


def candidate_contexts(
    *, audit: Audit, candidates: Sequence[AuditCandidate], excerpts: bool, exemplars: bool
) -> list[CandidateContext]:
    """What a judge may see of each candidate: type, description, text, and (per method) excerpt or exemplars."""
    texts = (
        dict(Contract.objects.filter(pk__in={c.contract_id for c in candidates}).values_list("id", "text"))
        if excerpts
        else {}
    )
    pool = _exemplars(audit.sample.dataset_id, {c.category_id for c in candidates}) if exemplars else {}
    out = []
    for c in candidates:
        picked: tuple[str, ...] = ()
        if exemplars:
            others = [t for contract_id, t in pool.get(c.category_id, []) if contract_id != c.contract_id]
            picked = tuple(others[:EXEMPLARS])
        out.append(
            CandidateContext(
                category=c.category.name,
                description=c.category.description,
                text=c.text,
                excerpt=excerpt_of(texts[c.contract_id], c.text) if excerpts else "",
                exemplars=picked,
            )
        )
    return out
