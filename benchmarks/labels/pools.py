"""Review pools declared from a rerank run, pushed into the blinded review core.

A pool is the set of (query, passage) items lawyers grade blind. For each
ranking query of a rerank run it is, by default, the union of the top k
(default 5) of the keyword order and the top k of the reranked order (the
same two orders the benchmark report compares; see ``benchmarks.reports.inputs``), or
an explicit list of (query id, doc id) pairs. The pool records the rule as
declared, because pooled nDCG@5 is defined against that pool and nothing else.

Items carry what a reviewer needs and nothing about the model: the query text,
the complete section (citation and heading, body) and the exact passage with
the caption the model saw; the review core hashes each text, so a judgment is
bound to them. ``external_ref`` carries ids and content hashes to map a label
back, and for a pool of several runs which systems put the item in their top k
(for metrics and admins); never a rank or score. The review core never renders it.

A pool of several rerank runs of one retrieval run (``review_pool_declare_runs``)
is depth-k pooling over keyword order and each run's reranked order. Every
top-k pool gets a work order (``benchmarks.labels.pooling``): item tiers that
counts what every system's judged P@5 and pooled nDCG@5 still need, counting
judgments of the same texts that exist already (judge once). The queue order is
blind: one tier per query, queries in a keyed shuffle, each reviewer's own
shuffle within a query (``pooling.query_tiers``); nothing in it follows a rank,
a top-k membership or the size of a query's pool.

Declaring is idempotent and hash-bound: the declaration hash covers the rule,
its parameters and every member with its three hashes; declaring the same
thing again returns the existing pool, and anything that changes a member (a
new k, another list, a changed text) is a new declaration, hence a new pool.

Provisional, source-derived section labels (the suite's nominated targets)
can be imported as their own label source. They are section-level and
provisional: nothing in ``benchmarks.labels.metrics`` ever reads them as
passage labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.contrib.auth.models import User
from django.db import transaction

from benchmarks.labels.pooling import (
    SystemRanking,
    depth_k_pool,
    figure_needs,
    judgments_needed,
    order_cost,
    query_tiers,
    reachable,
)
from benchmarks.labels.selectors import JOB, POOL_KIND
from benchmarks.reports.inputs import rerank_apply, reranked_order
from benchmarks.reports.selectors import rerank_scores_from_run, retrieval_queries_load
from benchmarks.rerank.models import RerankRun, RerankStatus
from benchmarks.retrieval.models import RetrievalCandidate
from benchmarks.suites.models import NominatedTarget, QueryKind, Suite
from reviewapp.core.records.hashing import sha256_json
from reviewapp.review.assignment.reuse import completed_judges
from reviewapp.review.assignment.selectors import reviewer_candidates
from reviewapp.review.assignment.services import pool_assign_detail
from reviewapp.review.errors import ReviewError
from reviewapp.review.exchange.selectors import LabelSourceSummary, label_source_find, label_source_get
from reviewapp.review.exchange.services import label_source_import
from reviewapp.review.judgments.hashes import passage_hash_of, query_hash_of, source_hash_of
from reviewapp.review.pools.selectors import pool_find, pool_item_keys
from reviewapp.review.pools.services import pool_create

if TYPE_CHECKING:  # types only: reads of the review engine go through its selectors
    from reviewapp.review.pools.refs import PoolRef

DEFAULT_K = 5
MAX_K = 30
DEFAULT_REVIEWERS = 2
DECLARABLE = (RerankStatus.DONE, RerankStatus.STOPPED)
RULE_UNION = "union-top-k"
RULE_EXPLICIT = "explicit"
RULE_DEPTH_K = "depth-k-pool"
MAX_POOL_RUNS = 12
REVIEWER_TITLE = "Statute passages"
INSTRUCTIONS = (
    "Read the question, then the complete section, then the passage exactly as it was shown. Grade the section "
    "and the passage separately: 0 unrelated, 1 topical but not useful, 2 useful support, definition, exception "
    "or procedure, 3 directly addresses the issue. Answer 'unknown' when you cannot tell; it stays unknown."
)
PROVISIONAL_GRADE = 2


class ReviewPoolError(ValueError):
    """Bad input to a pool declaration; the message names the problem and where."""


# --------------------------------------------------------------------------- the two orders


@dataclass(frozen=True)
class QueryRanking:
    """One ranking query of a rerank run: its keyword and reranked orders (doc ids), split and family."""

    qid: str
    text: str
    split: str
    family: str
    keyword: tuple[str, ...]
    reranked: tuple[str, ...]
    rerank_status: str
    provision_of: dict[str, int]  # docid -> provision id


def run_rankings(*, rerank_run: RerankRun) -> list[QueryRanking]:
    """Keyword and reranked orders of every ranking query, through the report's own adapter (one definition)."""
    scores = rerank_scores_from_run(run=rerank_run)
    queries = rerank_apply(retrieval_queries_load(run=rerank_run.retrieval_run), scores)
    out = []
    for q in queries:
        if q.kind != QueryKind.RANKING:
            continue
        keyword = sorted(q.candidates, key=lambda c: c.keyword_rank)
        out.append(QueryRanking(
            qid=q.qid, text=q.text, split=q.split, family=q.family,
            keyword=tuple(c.docid for c in keyword),
            reranked=tuple(c.docid for c in reranked_order(keyword)),
            rerank_status=q.rerank_status,
            provision_of={c.docid: c.provision_id for c in q.candidates},
        ))
    return out


# --------------------------------------------------------------------------- declaring


@dataclass(frozen=True)
class PoolPlan:
    rule: str
    k: int | None
    declared_rule: str
    items: list[dict[str, Any]]
    params: dict[str, Any]
    declaration_sha256: str
    work: WorkSummary | None = None  # the work order and what each system's figures still need


@dataclass(frozen=True)
class WorkSummary:
    """What the figures of a pool's systems still need, and the order of work (``pooling``)."""

    systems: tuple[tuple[str, str], ...]  # (key, label)
    needed: dict[str, float]  # system key (and "total") -> judgments still needed for all its figures
    needed_p5: dict[str, float]  # the same for its judged P@5 figures only (its own top five)
    items_needing_work: int
    items_judged_enough: int  # judge once: items whose existing judgments already suffice
    tiers: int  # one per query: the queue takes whole queries in a keyed shuffle
    mean_judgments: float  # mean judgments made before a figure completes, in this order (tiers at their end)
    mean_judgments_shuffled: float  # the same for one tier of everything (no order: a plain shuffle)
    figures_out_of_reach: int = 0  # figures needing items outside the pool (k below 5): never complete from it

    def rows(self) -> list[tuple[str, str, float, float]]:
        return [(key, label, self.needed_p5.get(key, 0), self.needed.get(key, 0)) for key, label in self.systems]


KEYWORD = "keyword"


def system_key(rerank_run: RerankRun) -> str:
    return f"rerank-{rerank_run.pk}"


def _prioritise(items: list[dict[str, Any]], rankings: Sequence[SystemRanking], *, reviewers_per_item: int,
                reviewer_ids: Sequence[int] | None, seed: str, labels: dict[str, str] | None = None) -> WorkSummary:
    """Set each item's ``priority`` to its query's tier and say what every system's figures still need.

    The tiers are whole queries in a keyed shuffle (``pooling.query_tiers``), never the fewest-judgment order:
    that order puts first the passages most systems ranked highest, and a reviewer's queue would say so.
    Judgments still needed per item: ``reviewers_per_item`` minus the completed judgments of the same texts by
    ``reviewer_ids`` (default: every person who may review) anywhere (judge once).
    """
    if reviewer_ids is None:
        reviewer_ids = [user.pk for user in reviewer_candidates()]
    keys = {(i["query_id"], i["doc_id"]): (i["query_hash"], i["source_hash"], i["passage_hash"]) for i in items}
    judges = completed_judges(kind=POOL_KIND, keys=keys.values(), reviewer_ids=reviewer_ids)
    cost = {item: max(0, reviewers_per_item - len(judges.get(key, ()))) for item, key in keys.items()}
    needs, out_of_reach = reachable(figure_needs(rankings, keys), keys)
    tier_of = query_tiers((qid for qid, _ in keys), seed=seed)
    for item in items:
        item["priority"] = tier_of[item["query_id"]]
    tiers: dict[int, list[tuple[str, str]]] = {}
    for pair in keys:
        tiers.setdefault(tier_of[pair[0]], []).append(pair)
    systems = tuple(dict.fromkeys(r.system for r in rankings))
    return WorkSummary(
        systems=tuple((key, (labels or {}).get(key, key)) for key in systems),
        needed=judgments_needed(needs, cost), needed_p5=judgments_needed(needs, cost, metric="P@5"),
        items_needing_work=sum(1 for c in cost.values() if c > 0),
        items_judged_enough=sum(1 for c in cost.values() if c <= 0), tiers=len(tiers),
        mean_judgments=order_cost([tiers[n] for n in sorted(tiers)], needs, cost) / len(needs) if needs else 0.0,
        mean_judgments_shuffled=(order_cost([tuple(cost)], needs, cost) / len(needs)) if needs else 0.0,
        figures_out_of_reach=out_of_reach,
    )


def _members_union(rankings: Sequence[QueryRanking], k: int) -> list[tuple[str, str]]:
    members = []
    for r in rankings:
        seen: set[str] = set()
        for docid in list(r.keyword[:k]) + list(r.reranked[:k]):
            if docid not in seen:
                seen.add(docid)
                members.append((r.qid, docid))
    return members


def _members_explicit(rankings: Sequence[QueryRanking], pairs: Sequence[Sequence[str]]) -> list[tuple[str, str]]:
    by_qid = {r.qid: r for r in rankings}
    members, seen = [], set()
    for index, pair in enumerate(pairs):
        if len(pair) != 2:
            raise ReviewPoolError(f"explicit[{index}]: expected (query id, doc id), got {pair!r}")
        qid, docid = str(pair[0]).strip(), str(pair[1]).strip()
        ranking = by_qid.get(qid)
        if ranking is None:
            raise ReviewPoolError(f"explicit[{index}]: {qid!r} is not a ranking query of this run")
        if docid not in ranking.provision_of:
            raise ReviewPoolError(f"explicit[{index}]: {docid!r} is not among the candidates of query {qid!r}")
        if (qid, docid) in seen:
            raise ReviewPoolError(f"explicit[{index}]: ({qid}, {docid}) is listed twice")
        seen.add((qid, docid))
        members.append((qid, docid))
    if not members:
        raise ReviewPoolError("explicit: the list is empty")
    return members


def _pool_items(rankings: Sequence[QueryRanking], members: Sequence[tuple[str, str]], *, retrieval_run_id: int,
                ref: dict[str, Any]) -> list[dict[str, Any]]:
    """The review items of ``members``: the texts the model saw, their hashes, and ids in ``external_ref``."""
    by_qid = {r.qid: r for r in rankings}
    wanted = {(qid, by_qid[qid].provision_of[docid]) for qid, docid in members}
    rows = {
        (c.result.query.qid, c.provision_id): c
        for c in RetrievalCandidate.objects.filter(result__run_id=retrieval_run_id,
                                                   result__query__kind=QueryKind.RANKING)
        .select_related("result__query", "provision", "passage")
        if (c.result.query.qid, c.provision_id) in wanted
    }
    items = []
    for qid, docid in members:
        c = rows[(qid, by_qid[qid].provision_of[docid])]
        query, provision, passage = c.result.query, c.provision, c.passage
        heading = f"{provision.citation}. {provision.heading}".strip()
        item: dict[str, Any] = {
            "query_id": qid, "doc_id": docid,
            "query_text": query.text,
            "source_heading": heading, "source_text": provision.body,
            "passage_caption": passage.caption, "passage_text": passage.text,
            # Ids and content hashes (and, for a pool of several runs, which systems put the item in their top
            # k): job side only, never rendered to reviewers. Never a rank or a score.
            "external_ref": {
                **ref, "query": query.pk, "candidate": c.pk, "provision": provision.pk,
                "passage": passage.pk, "query_sha256": query.text_sha256,
                "provision_sha256": provision.content_sha256, "passage_sha256": passage.sha256,
            },
        }
        item["query_hash"] = query_hash_of(item["query_text"])
        item["source_hash"] = source_hash_of(heading, provision.body)
        item["passage_hash"] = passage_hash_of(passage.caption, passage.text)
        items.append(item)
    return items


def review_pool_plan(
    *, rerank_run: RerankRun, k: int = DEFAULT_K, explicit: Sequence[Sequence[str]] | None = None,
    reviewers_per_item: int = DEFAULT_REVIEWERS, reviewer_ids: Sequence[int] | None = None,
) -> PoolPlan:
    """What a declaration would push into the review core (no writes).

    A top-k union gets a work order (``_prioritise``); an explicit list is one tier.
    """
    if rerank_run.status not in DECLARABLE:
        raise ReviewPoolError(
            f"rerank run #{rerank_run.pk} is {rerank_run.status}; declare a pool from a run that is done "
            "(or stopped by its budget)")
    if explicit is None and not (isinstance(k, int) and 1 <= k <= MAX_K):
        raise ReviewPoolError(f"k must be a whole number from 1 to {MAX_K}, got {k!r}")
    rankings = run_rankings(rerank_run=rerank_run)
    if not rankings:
        raise ReviewPoolError(f"rerank run #{rerank_run.pk} has no ranking queries")
    members = _members_union(rankings, k) if explicit is None else _members_explicit(rankings, explicit)
    items = _pool_items(rankings, members, retrieval_run_id=rerank_run.retrieval_run_id,
                        ref={"job": JOB, "rerank_run": rerank_run.pk, "retrieval_run": rerank_run.retrieval_run_id,
                             "suite": rerank_run.suite_id})
    work = None
    if explicit is None:
        systems = [SystemRanking(KEYWORD, r.qid, r.split, r.keyword) for r in rankings]
        systems += [SystemRanking(system_key(rerank_run), r.qid, r.split, r.reranked) for r in rankings]
        work = _prioritise(items, systems, reviewers_per_item=reviewers_per_item, reviewer_ids=reviewer_ids,
                           seed=f"{RULE_UNION}:{k}:{rerank_run.pk}",
                           labels={KEYWORD: "keyword order", system_key(rerank_run): "reranked order"})

    suite = rerank_run.suite
    per_query = [sum(1 for m in members if m[0] == r.qid) for r in rankings]
    covered = [n for n in per_query if n]
    if explicit is None:
        declared_rule = (
            f"For each of the {len(rankings)} ranking queries of suite {suite.name} v{suite.version}: the union of "
            f"the top {k} of the keyword order (retrieval run #{rerank_run.retrieval_run_id}) and the top {k} of "
            f"the reranked order (rerank run #{rerank_run.pk}, {rerank_run.provider}:{rerank_run.model_id}; "
            "P(useful) descending, ties by keyword rank, ungraded candidates after the graded in keyword order). "
            f"{len(items)} items, {min(covered)} to {max(covered)} per query. A selected pool: the model's own "
            "top results are over-represented, so it cannot establish population calibration."
        )
    else:
        declared_rule = (
            f"Explicit list of {len(items)} (query, section) pairs over {len(covered)} of the {len(rankings)} "
            f"ranking queries of suite {suite.name} v{suite.version}, candidates of retrieval run "
            f"#{rerank_run.retrieval_run_id} graded by rerank run #{rerank_run.pk}. A selected pool: it cannot "
            "establish population calibration."
        )
    rule = RULE_UNION if explicit is None else RULE_EXPLICIT
    depth = k if explicit is None else None
    declaration = {
        "rule": rule,
        "k": depth,
        "rerank_run": rerank_run.pk,
        "members": sorted([i["query_id"], i["doc_id"], i["query_hash"], i["source_hash"], i["passage_hash"]]
                          for i in items),
    }
    digest = sha256_json(declaration)
    params = {
        "rule": rule, "k": depth, "rerank_run": rerank_run.pk,
        "retrieval_run": rerank_run.retrieval_run_id, "suite": f"{suite.name} v{suite.version}",
        "suite_sha256": suite.sha256, "queries": len(rankings), "queries_in_pool": len(covered),
        "items": len(items), "declaration_sha256": digest,
    }
    return PoolPlan(rule=rule, k=depth, declared_rule=declared_rule, items=items,
                    params=params, declaration_sha256=digest, work=work)


@dataclass(frozen=True)
class DeclareResult:
    pool: PoolRef
    created: bool
    assigned: int
    reused: int = 0  # judge once: items reviewers already held in another pool, linked instead of assigned
    reused_complete: int = 0  # of those, already completed (they count in this pool at once)

    @property
    def message(self) -> str:
        verb = "Declared" if self.created else "This declaration exists already:"
        return (f"{verb} pool {self.pool.name!r} ({len(pool_item_keys(pool=self.pool))} items); "
                f"{self.assigned} assignments added; {self.reused} reused from reviewers' judgments of the same "
                f"texts in other pools ({self.reused_complete} of them complete already).")


@transaction.atomic
def review_pool_declare(
    *,
    rerank_run: RerankRun,
    k: int = DEFAULT_K,
    explicit: Sequence[Sequence[str]] | None = None,
    reviewers_per_item: int = DEFAULT_REVIEWERS,
    reviewers: Sequence[User] = (),
    name: str = "",
    extra_params: dict[str, Any] | None = None,
    created_by: User | None = None,
) -> DeclareResult:
    """Declare (or find, when the same declaration exists) the review pool of a rerank run; assign if asked.

    ``extra_params`` is merged into the pool's declared parameters and the
    declaration hash (the demo marks its synthetic pool this way).
    """
    # Serialise declarations of one run so two clicks cannot make two identical pools.
    rerank_run = RerankRun.objects.select_for_update().select_related("suite").get(pk=rerank_run.pk)
    plan = review_pool_plan(rerank_run=rerank_run, k=k, explicit=explicit, reviewers_per_item=reviewers_per_item,
                            reviewer_ids=[user.pk for user in reviewers] or None)
    digest = plan.declaration_sha256
    if extra_params:
        digest = sha256_json({"declaration": digest, "extra": extra_params})
    existing = pool_find(
        external_ref={"job": JOB, "rerank_run": rerank_run.pk, "declaration_sha256": digest}, kind=POOL_KIND)
    if existing:
        pool, created = existing[0], False
    else:
        label = f"top-{plan.k} keyword ∪ reranked" if plan.rule == RULE_UNION else "explicit list"
        try:
            pool = pool_create(
                name=name or f"Rerank run #{rerank_run.pk} ({rerank_run.suite}): {label}",
                kind=POOL_KIND, items=plan.items, declared_rule=plan.declared_rule,
                declared_params={**plan.params, **(extra_params or {}), "declaration_sha256": digest},
                reviewers_per_item=reviewers_per_item, reviewer_title=REVIEWER_TITLE, instructions=INSTRUCTIONS,
                external_ref={"job": JOB, "rerank_run": rerank_run.pk, "retrieval_run": rerank_run.retrieval_run_id,
                              "suite": rerank_run.suite_id, "declaration_sha256": digest},
                created_by=created_by,
            )
        except ReviewError as error:
            raise ReviewPoolError(str(error)) from None
        created = True
    return _assigned(pool, created, reviewers)


def _assigned(pool: PoolRef, created: bool, reviewers: Sequence[User]) -> DeclareResult:
    if not reviewers:
        return DeclareResult(pool=pool, created=created, assigned=0)
    try:
        result = pool_assign_detail(pool=pool, reviewers=reviewers)
    except ReviewError as error:
        raise ReviewPoolError(str(error)) from None
    return DeclareResult(pool=pool, created=created, assigned=result.assigned, reused=result.reused,
                         reused_complete=result.reused_complete)


# --------------------------------------------------------------------------- a pool of several runs


def _runs_checked(rerank_runs: Sequence[RerankRun]) -> list[RerankRun]:
    """The runs in pk order, refused unless they are finished and rank one candidate set."""
    runs = sorted({run.pk: run for run in rerank_runs}.values(), key=lambda run: run.pk)
    if not runs:
        raise ReviewPoolError("rerank runs: choose at least one")
    if len(runs) > MAX_POOL_RUNS:
        raise ReviewPoolError(f"rerank runs: at most {MAX_POOL_RUNS} in one pool, got {len(runs)}")
    first = runs[0]
    for run in runs:
        if run.status not in DECLARABLE:
            raise ReviewPoolError(f"rerank run #{run.pk} is {run.status}; pool only runs that are done (or "
                                  "stopped by their budget)")
        if run.retrieval_run_id != first.retrieval_run_id:
            raise ReviewPoolError(
                f"rerank run #{run.pk} reranks the candidates of retrieval run #{run.retrieval_run_id}, rerank run "
                f"#{first.pk} those of retrieval run #{first.retrieval_run_id}: different candidate sets cannot "
                "share one pool (their orders rank different passages). Choose runs of one retrieval run.")
    return runs


def review_pool_plan_runs(*, rerank_runs: Sequence[RerankRun], k: int = DEFAULT_K,
                          reviewers_per_item: int = DEFAULT_REVIEWERS,
                          reviewer_ids: Sequence[int] | None = None) -> PoolPlan:
    """Depth-k pooling over keyword order and every run's reranked order of one candidate set (no writes).

    Each item records the systems that put it in their top k (``external_ref.contributed_by``: job side only)
    and gets its query's tier (whole queries in a keyed shuffle: blind to every system's ranks).
    """
    runs = _runs_checked(rerank_runs)
    if not (isinstance(k, int) and 1 <= k <= MAX_K):
        raise ReviewPoolError(f"k must be a whole number from 1 to {MAX_K}, got {k!r}")
    per_run = {run.pk: run_rankings(rerank_run=run) for run in runs}
    base = per_run[runs[0].pk]
    if not base:
        raise ReviewPoolError(f"rerank run #{runs[0].pk} has no ranking queries")
    systems = [SystemRanking(KEYWORD, r.qid, r.split, r.keyword) for r in base]
    for run in runs:
        systems += [SystemRanking(system_key(run), r.qid, r.split, r.reranked) for r in per_run[run.pk]]
    contributed = depth_k_pool(systems, k)
    members = sorted(contributed, key=lambda m: ([r.qid for r in base].index(m[0]), m[1]))
    pks = [run.pk for run in runs]
    retrieval_run_id = runs[0].retrieval_run_id
    items = _pool_items(base, members, retrieval_run_id=retrieval_run_id,
                        ref={"job": JOB, "rerank_runs": pks, "retrieval_run": retrieval_run_id,
                             "suite": runs[0].suite_id})
    for item in items:
        item["external_ref"]["contributed_by"] = list(contributed[(item["query_id"], item["doc_id"])])
    labels = {KEYWORD: f"keyword order (retrieval run #{retrieval_run_id})"}
    labels.update({system_key(run): f"rerank run #{run.pk}: {run.provider}:{run.model_id}" for run in runs})
    work = _prioritise(items, systems, reviewers_per_item=reviewers_per_item, reviewer_ids=reviewer_ids,
                       seed=f"{RULE_DEPTH_K}:{k}:{pks}", labels=labels)
    suite = runs[0].suite
    declared_rule = (
        f"Depth-{k} pooling for each of the {len(base)} ranking queries of suite {suite.name} v{suite.version}: "
        f"the union of the top {k} of {len(labels)} systems over the candidates of retrieval run "
        f"#{retrieval_run_id}: {'; '.join(labels.values())} (reranked orders: P(useful) descending, ties by "
        f"keyword rank, ungraded candidates after the graded in keyword order). {len(items)} items. A selected "
        "pool: the systems' top results are over-represented, so it cannot establish population calibration. "
        f"Work order: {work.tiers} tiers, one per query in a keyed shuffle, each reviewer's own shuffle within a "
        "query (blind: no position follows a rank or a top-k membership)."
    )
    declaration = {"rule": RULE_DEPTH_K, "k": k, "rerank_runs": pks,
                   "members": sorted([i["query_id"], i["doc_id"], i["query_hash"], i["source_hash"],
                                      i["passage_hash"]] for i in items)}
    digest = sha256_json(declaration)
    params = {"rule": RULE_DEPTH_K, "k": k, "rerank_runs": pks, "retrieval_run": retrieval_run_id,
              "systems": [key for key, _ in work.systems], "suite": f"{suite.name} v{suite.version}",
              "suite_sha256": suite.sha256, "queries": len(base), "items": len(items),
              "tiers": work.tiers, "declaration_sha256": digest}
    return PoolPlan(rule=RULE_DEPTH_K, k=k, declared_rule=declared_rule, items=items, params=params,
                    declaration_sha256=digest, work=work)


@transaction.atomic
def review_pool_declare_runs(
    *,
    rerank_runs: Sequence[RerankRun],
    k: int = DEFAULT_K,
    reviewers_per_item: int = DEFAULT_REVIEWERS,
    reviewers: Sequence[User] = (),
    name: str = "",
    created_by: User | None = None,
) -> DeclareResult:
    """Declare (or find, when the same declaration exists) the depth-k pool of several runs; assign if asked.

    Judge once: assigning links each reviewer's judgments of the same texts in other pools instead of giving
    them again (``DeclareResult.reused``).
    """
    # Lock every run, in pk order (no deadlock between two declarations), so that two clicks make one pool.
    pks = sorted({run.pk for run in rerank_runs})
    runs = list(RerankRun.objects.select_for_update().select_related("suite").filter(pk__in=pks).order_by("pk"))
    plan = review_pool_plan_runs(rerank_runs=runs, k=k, reviewers_per_item=reviewers_per_item,
                                 reviewer_ids=[user.pk for user in reviewers] or None)
    ref = {"job": JOB, "rerank_runs": plan.params["rerank_runs"], "declaration_sha256": plan.declaration_sha256}
    existing = pool_find(external_ref=ref, kind=POOL_KIND)
    if existing:
        return _assigned(existing[0], False, reviewers)
    runs_text = ", ".join(f"#{pk}" for pk in plan.params["rerank_runs"])
    try:
        pool = pool_create(
            name=name or f"Rerank runs {runs_text} ({runs[0].suite}): depth-{plan.k} pool",
            kind=POOL_KIND, items=plan.items, declared_rule=plan.declared_rule, declared_params=plan.params,
            reviewers_per_item=reviewers_per_item, reviewer_title=REVIEWER_TITLE, instructions=INSTRUCTIONS,
            external_ref={**ref, "retrieval_run": plan.params["retrieval_run"], "suite": runs[0].suite_id},
            created_by=created_by,
        )
    except ReviewError as error:
        raise ReviewPoolError(str(error)) from None
    return _assigned(pool, True, reviewers)


# --------------------------------------------------------------------------- provisional section labels


def provisional_source_name(suite: Suite) -> str:
    return f"{suite.name} v{suite.version}: nominated targets (provisional, source-derived, section-level)"


@transaction.atomic
def provisional_labels_import(*, suite: Suite, created_by: User | None = None) -> tuple[LabelSourceSummary, bool]:
    """Import the suite's nominated targets as a provisional, section-level label source (once per suite).

    Each target becomes a "section" label of grade 2 (a nomination says the
    section is useful; it does not tell 2 from 3). They are not passage labels
    and no metric here reads them.
    """
    name = provisional_source_name(suite)
    source = label_source_find(name=name)
    if source is not None:
        return source, False
    targets = (NominatedTarget.objects.filter(query__suite=suite).select_related("query", "provision")
               .order_by("query__position", "id"))
    labels = [
        {"query_id": t.query.qid, "doc_id": t.provision.docid, "grade_type": "section", "value": PROVISIONAL_GRADE,
         "query_hash": query_hash_of(t.query.text),
         "source_hash": source_hash_of(f"{t.provision.citation}. {t.provision.heading}".strip(), t.provision.body),
         "external_ref": {"job": JOB, "suite": suite.pk, "query": t.query_id, "provision": t.provision_id,
                          "nominated_by": t.nominated_by}}
        for t in targets
    ]
    if not labels:
        raise ReviewPoolError(f"suite {suite} has no nominated targets to import")
    label_source_import(
        name=name, labels=labels, provisional=True, created_by=created_by,
        description=(f"{len(labels)} nominated targets of suite {suite} (nominated by "
                     f"{', '.join(sorted({t.nominated_by for t in targets}))}), recorded as section grade "
                     f"{PROVISIONAL_GRADE}. Provisional and source-derived: section-level only, never counted as "
                     "passage labels."),
    )
    return label_source_get(name=name), True
