"""Who holds what: each reviewer's work per pool (assigned, not started, draft, complete, skipped), their last
activity and a median time per judgment. Admin reads only.
"""

from __future__ import annotations

import itertools
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model

from reviewapp.review.models import Assignment, Judgment, JudgmentRevision, ReviewPool
from reviewapp.review.selectors import hashes_match

# A gap longer than this between two saves of one reviewer is a break, not time spent on the later judgment.
BREAK = timedelta(minutes=30)


@dataclass(frozen=True)
class PoolWorkload:
    pool_id: str
    pool_name: str
    assigned: int
    not_started: int
    draft: int
    complete: int
    skipped: int  # open assignments the reviewer set aside for later
    stale: int  # saved on texts that changed since (to grade again)
    last_activity: datetime | None

    @property
    def open(self) -> int:
        return self.assigned - self.complete


@dataclass(frozen=True)
class ReviewerWorkload:
    reviewer_id: int
    username: str
    active: bool
    pools: list[PoolWorkload] = field(default_factory=list)
    median_seconds: float | None = None  # median time per completed judgment (breaks left out)
    timed_judgments: int = 0

    @property
    def assigned(self) -> int:
        return sum(p.assigned for p in self.pools)

    @property
    def complete(self) -> int:
        return sum(p.complete for p in self.pools)

    @property
    def last_activity(self) -> datetime | None:
        times = [p.last_activity for p in self.pools if p.last_activity is not None]
        return max(times) if times else None


def _skipped_pks() -> set[int]:
    """Assignments a reviewer skipped for later (the workspace's ``AssignmentSkip``), if that feature exists."""
    relation = {f.name for f in Assignment._meta.get_fields()}
    if "skip" not in relation:
        return set()
    return set(Assignment.objects.filter(skip__isnull=False).values_list("pk", flat=True))


def _median_seconds(times: list[datetime], completions: list[datetime]) -> tuple[float | None, int]:
    """Median over completing saves of the time since the reviewer's previous save, breaks (> BREAK) left out."""
    ordered = sorted(times)
    previous = {}
    for before, after in itertools.pairwise(ordered):
        previous.setdefault(after, before)
    spans = [(done - previous[done]).total_seconds() for done in completions
             if done in previous and done - previous[done] <= BREAK]
    return (statistics.median(spans) if spans else None), len(spans)


def reviewer_workload(*, pool: ReviewPool | None = None) -> list[ReviewerWorkload]:
    """Every reviewer holding assignments (in ``pool``, or anywhere), with their counts per pool."""
    assignments = Assignment.objects.select_related("pool", "item").only(
        "pk", "reviewer_id", "item_id", "pool__public_id", "pool__name", "item__query_hash", "item__source_hash",
        "item__passage_hash")
    if pool is not None:
        assignments = assignments.filter(pool=pool)
    judgments = {(j.reviewer_id, j.item_id): j
                 for j in Judgment.objects.filter(current__isnull=False).select_related("current")}
    skipped = _skipped_pks()
    counts: dict[tuple[int, int], dict] = {}
    names: dict[int, tuple[str, str]] = {}
    for a in assignments:
        names[a.pool_id] = (a.pool.public_id, a.pool.name)
        row = counts.setdefault((a.reviewer_id, a.pool_id), defaultdict(int))
        row["assigned"] += 1
        judgment = judgments.get((a.reviewer_id, a.item_id))
        revision = judgment.current if judgment else None
        if revision is None:
            row["not_started"] += 1
        elif not hashes_match(revision, a.item):
            row["stale"] += 1
        elif revision.status == JudgmentRevision.COMPLETE:
            row["complete"] += 1
        else:
            row["draft"] += 1
        if a.pk in skipped and (revision is None or revision.status != JudgmentRevision.COMPLETE):
            row["skipped"] += 1
    reviewer_ids = {reviewer_id for reviewer_id, _ in counts}
    revisions = (JudgmentRevision.objects.filter(judgment__reviewer_id__in=reviewer_ids)
                 .values_list("judgment__reviewer_id", "judgment__item__pool_id", "status", "created_at"))
    last: dict[tuple[int, int], datetime] = {}
    saves: dict[int, list[datetime]] = defaultdict(list)
    completions: dict[int, list[datetime]] = defaultdict(list)
    for reviewer_id, pool_pk, status, created_at in revisions:
        key = (reviewer_id, pool_pk)
        if key in counts and (key not in last or created_at > last[key]):
            last[key] = created_at
        saves[reviewer_id].append(created_at)
        if status == JudgmentRevision.COMPLETE:
            completions[reviewer_id].append(created_at)
    User = get_user_model()
    users = {u.pk: u for u in User.objects.filter(pk__in=reviewer_ids)}
    out = []
    for reviewer_id in sorted(reviewer_ids, key=lambda pk: users[pk].get_username()):
        pools = [
            PoolWorkload(pool_id=names[pool_pk][0], pool_name=names[pool_pk][1], assigned=row["assigned"],
                         not_started=row["not_started"], draft=row["draft"], complete=row["complete"],
                         skipped=row["skipped"], stale=row["stale"], last_activity=last.get((reviewer_id, pool_pk)))
            for (rid, pool_pk), row in sorted(counts.items(), key=lambda kv: names[kv[0][1]][1])
            if rid == reviewer_id
        ]
        median, timed = _median_seconds(saves[reviewer_id], completions[reviewer_id])
        user = users[reviewer_id]
        out.append(ReviewerWorkload(reviewer_id=reviewer_id, username=user.get_username(), active=user.is_active,
                                    pools=pools, median_seconds=median, timed_judgments=timed))
    return out
