"""Who holds what: each reviewer's work per pool (assigned, not started, draft, complete, skipped), their last
activity and a median time per judgment. Admin reads only.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model

from reviewapp.review.assignment.models import Assignment
from reviewapp.review.day.openings import reviewer_openings
from reviewapp.review.day.timing import Estimate, TimedSave, duration_words, estimate_left, save_seconds
from reviewapp.review.judgments.hashes import hashes_match
from reviewapp.review.judgments.models import Judgment, JudgmentRevision
from reviewapp.review.pools.models import ReviewPool

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
    # Time spent on the pool from the reviewer's saves (idle capped, reviewapp/review/day/timing.py), and the
    # time to finish its open items at the reviewer's pace (None until 3 items are complete).
    spent_seconds: float = 0.0
    estimate: Estimate | None = None

    @property
    def open(self) -> int:
        return self.assigned - self.complete

    @property
    def spent_words(self) -> str:
        return duration_words(self.spent_seconds) if self.spent_seconds else "none yet"

    @property
    def left_words(self) -> str:
        if not self.open:
            return "done"
        seconds = self.estimate.seconds_left if self.estimate else None
        return f"about {duration_words(seconds)}" if seconds is not None else "not yet known"


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

    @property
    def spent_words(self) -> str:
        seconds = sum(p.spent_seconds for p in self.pools)
        return duration_words(seconds) if seconds else "none yet"


TIME_CSV_FIELDS = ("reviewer", "pool", "pool_name", "assigned", "complete", "open", "seconds_spent", "hours_spent",
                   "estimated_seconds_left", "pace_from", "items_timed", "idle_cap_seconds")


def workload_time_rows(*, pool: ReviewPool | None = None) -> list[dict[str, object]]:
    """Time spent per reviewer and pool, one row each, for billing (the CSV export of the workload page)."""
    rows = []
    for reviewer in reviewer_workload(pool=pool):
        for p in reviewer.pools:
            estimate = p.estimate
            left = estimate.seconds_left if estimate and p.open else (0.0 if not p.open else None)
            rows.append({
                "reviewer": reviewer.username, "pool": p.pool_id, "pool_name": p.pool_name, "assigned": p.assigned,
                "complete": p.complete, "open": p.open, "seconds_spent": round(p.spent_seconds),
                "hours_spent": f"{p.spent_seconds / 3600:.2f}",
                "estimated_seconds_left": "" if left is None else round(left),
                "pace_from": estimate.pace_from if estimate else "", "items_timed": estimate.items_timed if estimate
                else 0, "idle_cap_seconds": settings.REVIEW_IDLE_CAP_SECONDS,
            })
    return rows


def _skipped_pks() -> set[int]:
    """Assignments a reviewer skipped for later (the workspace's ``AssignmentSkip``), if that feature exists."""
    relation = {f.name for f in Assignment._meta.get_fields()}
    if "skip" not in relation:
        return set()
    return set(Assignment.objects.filter(skip__isnull=False).values_list("pk", flat=True))


def _median_seconds(timed: list[TimedSave], completions: set[tuple[datetime, int]]) -> tuple[float | None, int]:
    """Median over completing saves of the time on their item before them (``timing.save_seconds``: from the
    item's opening or previous save), breaks (> BREAK) left out."""
    spans = [save.seconds for save in timed if (save.at, save.item) in completions and save.seconds is not None
             and save.seconds <= BREAK.total_seconds()]
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
                 .values_list("judgment__reviewer_id", "judgment__item__pool_id", "judgment__item_id", "status",
                              "created_at"))
    last: dict[tuple[int, int], datetime] = {}
    saves_in: dict[int, list[tuple[datetime, int, int]]] = defaultdict(list)
    completions: dict[int, set[tuple[datetime, int]]] = defaultdict(set)
    for reviewer_id, pool_pk, item_pk, status, created_at in revisions:
        key = (reviewer_id, pool_pk)
        if key in counts and (key not in last or created_at > last[key]):
            last[key] = created_at
        saves_in[reviewer_id].append((created_at, pool_pk, item_pk))
        if status == JudgmentRevision.COMPLETE:
            completions[reviewer_id].add((created_at, item_pk))
    opens = reviewer_openings(reviewer_ids=reviewer_ids)
    User = get_user_model()
    users = {u.pk: u for u in User.objects.filter(pk__in=reviewer_ids)}
    out = []
    for reviewer_id in sorted(reviewer_ids, key=lambda pk: users[pk].get_username()):
        # Time per item, from its opening (never across items or pools); the pace over the pools listed here.
        timed = save_seconds(saves_in[reviewer_id], idle_cap_seconds=settings.REVIEW_IDLE_CAP_SECONDS,
                             opens=opens.get(reviewer_id, []))
        every: dict[Hashable, float] = defaultdict(float)
        for save in timed:
            every[save.pool] += save.seconds or 0.0
        mine = {pool_pk: row for (rid, pool_pk), row in counts.items() if rid == reviewer_id}
        spent = {pool_pk: every.get(pool_pk, 0.0) for pool_pk in mine}
        completed = {pool_pk: row["complete"] for pool_pk, row in mine.items()}
        pools = [
            PoolWorkload(pool_id=names[pool_pk][0], pool_name=names[pool_pk][1], assigned=row["assigned"],
                         not_started=row["not_started"], draft=row["draft"], complete=row["complete"],
                         skipped=row["skipped"], stale=row["stale"], last_activity=last.get((reviewer_id, pool_pk)),
                         spent_seconds=spent[pool_pk],
                         estimate=estimate_left(pool=pool_pk, left=row["assigned"] - row["complete"], spent=spent,
                                                completed=completed))
            for pool_pk, row in sorted(mine.items(), key=lambda kv: names[kv[0]][1])
        ]
        median, timed_judgments = _median_seconds(timed, completions[reviewer_id])
        user = users[reviewer_id]
        out.append(ReviewerWorkload(reviewer_id=reviewer_id, username=user.get_username(), active=user.is_active,
                                    pools=pools, median_seconds=median, timed_judgments=timed_judgments))
    return out
