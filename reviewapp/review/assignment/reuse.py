"""Judge once: a reviewer's judgment serves every pool that asks the same question of the same texts.

The judge-once key (``item_key``, the one place it is computed) holds everything that defines what a grade
means: the kind, the grade scale and grade types as the kind defines them (hashed), the three text hashes, the
source context the reviewer is shown beside the texts, the pool's instructions (hashed) and the guidelines in
force (the ``text_hash`` of the pool's latest published version). When a pool is assigned, a reviewer who
already holds an item with the same texts gets no second assignment: with the same key a ``JudgmentReuse`` row
links the new pool's item to the item they hold, and their judgment there is read as their judgment here
(``agreement.judgments.pool_judgments``, with its provenance in ``reused_from``); with another key (other instructions,
guidelines, scale or context) the item goes to someone else (``services.assignments_place`` decides both).

What this never does:
- serve another reviewer: a link names one reviewer, and only that reviewer's judgment of the source item is
  read through it;
- serve other texts or other rules: the link is made only when the keys are equal, and at every read both keys
  are computed again (``pool_reused_judgments``) and the source judgment's hashes are compared with the new
  item's current hashes (a re-bound item, changed instructions or new guidelines on one side: the link serves
  nothing until both sides agree again);
- copy or rewrite a label: the judgment and its revisions stay where they were made (append-only);
- count twice: one link per (item, reviewer), none where the reviewer holds the item natively, and a native
  judgment wins over a link if both ever exist.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reviewapp.core.records.hashing import canonical_json, sha256_json
from reviewapp.review.assignment.models import Assignment, JudgmentReuse
from reviewapp.review.judgments.models import Judgment, JudgmentRevision, ReviewItem
from reviewapp.review.kinds import kind_get
from reviewapp.review.pools.models import PoolGuidelines, ReviewPool


@dataclass(frozen=True)
class PoolRules:
    """What, beside the texts and the source context, decides what a grade in a pool means."""

    kind: str
    scale_sha256: str  # the kind's grade types, scale and the labels of the texts, as the reviewer reads them
    instructions_sha256: str
    guidelines_sha256: str  # '' when no guidelines are published


def kind_scale_sha256(kind_key: str) -> str:
    kind = kind_get(kind_key)
    return sha256_json({
        "grade_types": [[g.key, g.label, g.help_text] for g in kind.grade_types],
        "scale": [list(step) for step in kind.scale],
        "labels": [kind.query_label, kind.source_label, kind.passage_label],
    })


def pool_rules(*, pool: ReviewPool) -> PoolRules:
    """The rules of ``pool`` now: its kind's scale, its instructions and its latest published guidelines."""
    guidelines = (PoolGuidelines.objects.filter(pool_id=pool.pk).order_by("-version")
                  .values_list("text_hash", flat=True).first()) if pool.pk else None
    return PoolRules(kind=pool.kind, scale_sha256=kind_scale_sha256(pool.kind),
                     instructions_sha256=sha256_json(pool.instructions or ""), guidelines_sha256=guidelines or "")


def _context_shown(kind_key: str, external_ref: Mapping[str, Any], cache: dict[bytes, str] | None) -> str:
    """A digest of the source context the reviewer's page shows beside the texts (the kind's citation header)."""
    kind = kind_get(kind_key)
    if kind.source_context is None:
        return ""
    memo = canonical_json([kind_key, external_ref]) if cache is not None else b""
    if cache is not None and memo in cache:
        return cache[memo]
    context = kind.source_context(external_ref or {})
    digest = "" if context is None else sha256_json({
        "facts": [list(fact) for fact in context.facts], "url": context.url,
        "retrieved_at": context.retrieved_at.isoformat() if context.retrieved_at else None})
    if cache is not None:
        cache[memo] = digest
    return digest


def item_key(*, rules: PoolRules, item: ReviewItem, texts: ReviewItem | None = None,
             cache: dict[bytes, str] | None = None) -> str:
    """The judge-once key of ``item`` under ``rules``: equal keys, and only those, may share a judgment.

    ``texts``: take the three text hashes from this item instead (a read asking "same question, were the texts
    the same?", where differing texts make a judgment stale rather than absent).
    """
    texts = item if texts is None else texts
    return sha256_json({
        "kind": rules.kind, "scale": rules.scale_sha256, "instructions": rules.instructions_sha256,
        "guidelines": rules.guidelines_sha256, "query": texts.query_hash, "source": texts.source_hash,
        "passage": texts.passage_hash, "context": _context_shown(rules.kind, item.external_ref or {}, cache),
    })


@dataclass(frozen=True)
class Held:
    """An item a reviewer holds (an assignment), found by its texts now or by the texts it was assigned with."""

    item: ReviewItem  # with ``pool`` loaded
    assignment_id: int
    completed: bool  # the reviewer completed a judgment of it on its current texts


def reviewer_holdings(*, reviewer_id: int, items: Iterable[ReviewItem]) -> dict[str, list[Held]]:
    """texts key -> the items ``reviewer_id`` holds with the texts of ``items``, in any pool, oldest first.

    An assignment counts under the texts it was made with (``Assignment.texts_key``) and under its item's texts
    now: a reviewer who was shown some texts has seen them, even if the item was re-bound since.
    """
    items = list(items)
    keys = {item.texts_key for item in items}
    if not keys:
        return {}
    rows = list(Assignment.objects.filter(reviewer_id=reviewer_id, texts_key__in=keys)
                .select_related("item__pool").order_by("id"))
    seen = {row.pk for row in rows}
    # Legacy rows (made before texts keys were stored) and re-bound items: found by their current hashes.
    for row in (Assignment.objects.filter(reviewer_id=reviewer_id, item__query_hash__in={i.query_hash for i in items})
                .exclude(pk__in=seen)
                .select_related("item__pool").order_by("id")):
        if row.item.texts_key in keys:
            rows.append(row)
    complete = set(Judgment.objects.filter(reviewer_id=reviewer_id, item_id__in={r.item_id for r in rows},
                                           current__status=JudgmentRevision.COMPLETE)
                   .values_list("item_id", "current__query_hash", "current__source_hash", "current__passage_hash"))
    out: dict[str, list[Held]] = defaultdict(list)
    for row in rows:
        item = row.item
        held = Held(item=item, assignment_id=row.pk,
                    completed=(item.pk, item.query_hash, item.source_hash, item.passage_hash) in complete)
        for key in {row.texts_key, item.texts_key} & keys:
            out[key].append(held)
    return dict(out)


def reuse_links_prune(*, pool: ReviewPool) -> int:
    """Remove the links of ``pool`` that can no longer serve: the reviewer was taken off the source item and never
    judged it. A link is a reference, not a label: nothing judged is lost, and the item gets a reviewer again."""
    links = list(JudgmentReuse.objects.filter(item__pool=pool).values_list("pk", "source_item_id", "reviewer_id"))
    if not links:
        return 0
    sources = {source for _, source, _ in links}
    held = set(Assignment.objects.filter(item_id__in=sources).values_list("item_id", "reviewer_id"))
    judged = set(Judgment.objects.filter(item_id__in=sources).values_list("item_id", "reviewer_id"))
    dead = [pk for pk, source, reviewer in links if (source, reviewer) not in held | judged]
    JudgmentReuse.objects.filter(pk__in=dead).delete()
    return len(dead)


@dataclass(frozen=True)
class ReusedJudgment:
    """A judgment made in another pool, read through a link as the same reviewer's judgment of ``item``."""

    item: ReviewItem
    judgment: Judgment  # with ``current`` and ``reviewer`` loaded
    link: JudgmentReuse

    @property
    def provenance(self) -> dict[str, object]:
        source = self.link.source_item
        return {"pool": source.pool.public_id, "item": source.public_id, "judgment": self.judgment.pk,
                "revision": self.judgment.current.number if self.judgment.current else None,
                "linked_at": self.link.created_at.isoformat()}


def pool_reused_judgments(*, pool: ReviewPool) -> list[ReusedJudgment]:
    """Every linked judgment of ``pool``'s items (any status; the caller decides what counts).

    A link serves only while both items have the same judge-once key now (``item_key``): another kind, scale,
    instructions, guidelines or context shown on either side is another question, and the link serves nothing.
    """
    links = list(JudgmentReuse.objects.filter(item__pool=pool)
                 .select_related("item", "source_item__pool", "reviewer"))
    if not links:
        return []
    judgments = {
        (j.item_id, j.reviewer_id): j
        for j in Judgment.objects.filter(item_id__in={link.source_item_id for link in links}, current__isnull=False)
        .select_related("current", "reviewer")
    }
    rules = {pool.pk: pool_rules(pool=pool)}
    cache: dict[bytes, str] = {}
    out = []
    for link in links:
        judgment = judgments.get((link.source_item_id, link.reviewer_id))
        if judgment is None:
            continue
        source = link.source_item
        if source.pool_id not in rules:
            rules[source.pool_id] = pool_rules(pool=source.pool)
        # Same question asked of the texts the source was judged on; texts changed since are stale, as natively.
        if (item_key(rules=rules[source.pool_id], item=source, cache=cache)
                != item_key(rules=rules[pool.pk], item=link.item, texts=source, cache=cache)):
            continue
        out.append(ReusedJudgment(item=link.item, judgment=judgment, link=link))
    return out


def pool_reuse_counts(*, pool: ReviewPool) -> dict[str, int]:
    """How many items of ``pool`` are served by a reviewer's judgment elsewhere: links, and those complete now."""
    links = JudgmentReuse.objects.filter(item__pool=pool)
    served = pool_reused_judgments(pool=pool)
    return {"links": links.count(), "items": links.values("item_id").distinct().count(),
            "complete": sum(1 for r in served if _complete(r.judgment.current))}


def _complete(revision: JudgmentRevision | None) -> bool:
    return revision is not None and revision.status == JudgmentRevision.COMPLETE


def completed_judges(*, kind: str, keys: Iterable[tuple[str, str, str]],
                     reviewer_ids: Iterable[int] | None = None) -> dict[tuple[str, str, str], set[int]]:
    """(query hash, source hash, passage hash) -> reviewers with a completed, non-stale judgment of those texts.

    Any pool of ``kind`` counts (judge once); ``reviewer_ids`` limits it to the people who could serve a new
    pool with it (a judgment only ever serves its own reviewer).
    """
    wanted = set(keys)
    rows = Judgment.objects.filter(current__status=JudgmentRevision.COMPLETE, item__pool__kind=kind,
                                   item__query_hash__in={k[0] for k in wanted})
    if reviewer_ids is not None:
        rows = rows.filter(reviewer_id__in=list(reviewer_ids))
    out: dict[tuple[str, str, str], set[int]] = defaultdict(set)
    for reviewer_id, *hashes in rows.values_list(
            "reviewer_id", "item__query_hash", "item__source_hash", "item__passage_hash",
            "current__query_hash", "current__source_hash", "current__passage_hash"):
        shown, now = tuple(hashes[:3]), tuple(hashes[3:])
        if shown == now and shown in wanted:
            out[shown].add(reviewer_id)
    return dict(out)
