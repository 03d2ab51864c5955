"""Reads of the human labels of rerank runs: which review pools a run has, and what each pool holds.

The read side of ``benchmarks.labels.pools`` (which declares pools) for every page, API and report that shows
labels; it reads the review engine through its selectors and nothing of the reports, so the leaderboard
(``benchmarks.reports.selectors``) can read labels while pools read the reports' inputs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reviewapp.review.agreement.judgments import pool_completed_judgments, pool_stale_judgments
from reviewapp.review.agreement.selectors import ResolvedLabel, pool_labels
from reviewapp.review.kinds import UNKNOWN
from reviewapp.review.pools.selectors import pool_find

if TYPE_CHECKING:  # types only (the review engine's models are read through its selectors)
    from benchmarks.rerank.models import RerankRun
    from reviewapp.review.pools.refs import PoolRef

JOB = "benchmarks"
POOL_KIND = "passage"
GRADE_TYPE = "passage"


def run_pools(*, rerank_run: RerankRun) -> list[PoolRef]:
    """Review pools declared from this rerank run, alone or with others, newest first."""
    return [pool for pool in pool_find(external_ref={"job": JOB}, kind=POOL_KIND)
            if pool.external_ref.get("rerank_run") == rerank_run.pk
            or rerank_run.pk in (pool.external_ref.get("rerank_runs") or ())]


def is_synthetic(pool: PoolRef) -> bool:
    """A demo pool whose judgments were generated, not made by people (marked in its declared parameters)."""
    return bool((pool.declared_params or {}).get("synthetic"))


@dataclass(frozen=True)
class PoolInfo:
    public_id: str
    name: str
    declared_rule: str
    declared_params: dict[str, Any]
    reviewers_per_item: int
    items: int
    labelled: int
    label_states: dict[str, int]  # labelled / unjudged / incomplete / disagree / unknown
    stale_judgments: int
    complete_judgments: int
    synthetic: bool
    created_at: str

    @property
    def complete(self) -> bool:
        return self.items > 0 and self.labelled == self.items

    @property
    def selected(self) -> bool:
        # Every rule a run can declare (top-k union, explicit list) selects items; none is a random sample.
        return self.declared_params.get("rule") != "random-sample"


def _label_state(label: ResolvedLabel) -> str:
    if label.is_grade:
        return "labelled"
    if label.value == UNKNOWN or any(g == UNKNOWN for g in label.grades):
        return "unknown"
    if label.reason == "reviewers disagree":
        return "disagree"
    return "unjudged" if not label.grades else "incomplete"


def pool_info_load(*, pool: PoolRef) -> tuple[PoolInfo, dict[tuple[str, str], int], dict[str, frozenset[str]]]:
    """The pool's description, its labels (grades only) and its members per query."""
    resolved = pool_labels(pool=pool, grade_type=GRADE_TYPE)
    # A grade's value is an int (is_grade checks it; the isinstance tells the type checker).
    labels = {(x.query_id, x.doc_id): x.value for x in resolved if x.is_grade and isinstance(x.value, int)}
    members: dict[str, set[str]] = {}
    for x in resolved:
        members.setdefault(x.query_id, set()).add(x.doc_id)
    states = Counter(_label_state(x) for x in resolved)
    info = PoolInfo(
        public_id=pool.public_id, name=pool.name, declared_rule=pool.declared_rule,
        declared_params=dict(pool.declared_params or {}), reviewers_per_item=pool.reviewers_per_item,
        items=len(resolved), labelled=len(labels),
        label_states={s: states.get(s, 0) for s in ("labelled", "unjudged", "incomplete", "disagree", "unknown")},
        stale_judgments=len(pool_stale_judgments(pool=pool)),
        complete_judgments=len(pool_completed_judgments(pool=pool)),
        synthetic=is_synthetic(pool), created_at=pool.created_at.isoformat(),
    )
    return info, labels, {qid: frozenset(d) for qid, d in members.items()}
