"""Judge once: a reviewer's judgment of some texts serves every pool that contains the same texts.

The key of "the same item" is (pool kind, query hash, source hash, passage hash): the kind fixes the grade
scale and grade types, the hashes fix every text the reviewer read. When a pool is assigned, a reviewer who
already holds an item with that key in another pool (an assignment they have not been taken off) gets no second
assignment: a ``JudgmentReuse`` row links the new pool's item to the item they hold, and their judgment there
is read as their judgment here (``selectors.pool_judgments``, with its provenance in ``reused_from``).

What this never does:
- serve another reviewer: a link names one reviewer, and only that reviewer's judgment of the source item is
  read through it;
- serve other texts: the link is made only when the four keys are equal, and at every read the source
  judgment's current hashes are compared with the new item's current hashes again (a re-bound item or a
  judgment made on older texts is stale here, as it would be natively);
- copy or rewrite a label: the judgment and its revisions stay where they were made (append-only);
- count twice: one link per (item, reviewer), none where the reviewer holds the item natively, and a native
  judgment wins over a link if both ever exist.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from reviewapp.review.models import Assignment, Judgment, JudgmentReuse, JudgmentRevision, ReviewItem, ReviewPool

ItemKey = tuple[str, str, str, str]  # kind, query hash, source hash, passage hash


def item_key(*, kind: str, query_hash: str, source_hash: str, passage_hash: str) -> ItemKey:
    return (kind, query_hash, source_hash, passage_hash)


def reuse_sources(*, pool: ReviewPool, reviewer_ids: Iterable[int]) -> dict[tuple[int, int], int]:
    """(item pk of ``pool``, reviewer id) -> the pk of an item with the same key the reviewer holds elsewhere.

    "Holds" means an assignment in another pool of the same kind. When a reviewer holds the key in several
    pools, the one where they completed a judgment on those very texts wins, else the oldest assignment.
    """
    reviewer_ids = list(reviewer_ids)
    if not reviewer_ids:
        return {}
    wanted: dict[ItemKey, list[int]] = defaultdict(list)
    for pk, q, s, p in pool.items.values_list("pk", "query_hash", "source_hash", "passage_hash"):
        wanted[item_key(kind=pool.kind, query_hash=q, source_hash=s, passage_hash=p)].append(pk)
    held = (Assignment.objects.filter(reviewer_id__in=reviewer_ids, pool__kind=pool.kind)
            .exclude(pool=pool)
            .filter(item__query_hash__in={k[1] for k in wanted})
            .values_list("reviewer_id", "item_id", "item__query_hash", "item__source_hash", "item__passage_hash")
            .order_by("id"))
    rows = [(r, i, item_key(kind=pool.kind, query_hash=q, source_hash=s, passage_hash=p)) for r, i, q, s, p in held]
    rows = [row for row in rows if row[2] in wanted]
    completed = set(
        Judgment.objects.filter(item_id__in={i for _, i, _ in rows}, reviewer_id__in=reviewer_ids,
                                current__status=JudgmentRevision.COMPLETE)
        .values_list("item_id", "reviewer_id", "current__query_hash", "current__source_hash",
                     "current__passage_hash"))
    done = {(i, r) for i, r, q, s, p in completed
            if item_key(kind=pool.kind, query_hash=q, source_hash=s, passage_hash=p) in wanted}
    out: dict[tuple[int, int], int] = {}
    for reviewer_id, source_pk, key in sorted(rows, key=lambda row: (row[1], row[0]) not in done):
        for item_pk in wanted[key]:
            out.setdefault((item_pk, reviewer_id), source_pk)
    return out


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


def reuse_completed(*, sources: dict[tuple[int, int], int]) -> set[tuple[int, int]]:
    """The (item pk, reviewer id) pairs of ``sources`` whose source judgment is complete already."""
    pairs = {(source, reviewer) for (_, reviewer), source in sources.items()}
    complete = set(Judgment.objects.filter(item_id__in={s for s, _ in pairs}, current__status=JudgmentRevision.COMPLETE)
                   .values_list("item_id", "reviewer_id"))
    return {key for key, source in sources.items() if (source, key[1]) in complete}


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

    A link whose source pool now has another kind serves nothing (another scale is another question).
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
    out = []
    for link in links:
        judgment = judgments.get((link.source_item_id, link.reviewer_id))
        if judgment is None or link.source_item.pool.kind != pool.kind:
            continue
        out.append(ReusedJudgment(item=link.item, judgment=judgment, link=link))
    return out


def pool_reuse_counts(*, pool: ReviewPool) -> dict[str, int]:
    """How many items of ``pool`` are served by a reviewer's judgment elsewhere: links, and those complete now."""
    links = JudgmentReuse.objects.filter(item__pool=pool)
    served = pool_reused_judgments(pool=pool)
    return {"links": links.count(), "items": links.values("item_id").distinct().count(),
            "complete": sum(1 for r in served if r.judgment.current.status == JudgmentRevision.COMPLETE)}


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
