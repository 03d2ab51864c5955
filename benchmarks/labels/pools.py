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
bound to them. ``external_ref`` carries only ids and content hashes to map a
label back (never a rank, score or system); the review core never renders it.

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
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from benchmarks.reports.inputs import rerank_apply, reranked_order
from benchmarks.reports.selectors import rerank_scores_from_run, retrieval_queries_load
from benchmarks.rerank.models import RerankRun, RerankStatus
from benchmarks.retrieval.models import RetrievalCandidate
from benchmarks.suites.models import NominatedTarget, QueryKind, Suite
from reviewapp.core.hashing import sha256_json
from reviewapp.review.models import LabelSource, ReviewPool
from reviewapp.review.selectors import pool_find
from reviewapp.review.services import (
    ReviewError,
    label_source_import,
    passage_hash_of,
    pool_assign,
    pool_create,
    query_hash_of,
    source_hash_of,
)

DEFAULT_K = 5
MAX_K = 30
DEFAULT_REVIEWERS = 2
POOL_KIND = "passage"
JOB = "benchmarks"
DECLARABLE = (RerankStatus.DONE, RerankStatus.STOPPED)
RULE_UNION = "union-top-k"
RULE_EXPLICIT = "explicit"
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


def review_pool_plan(
    *, rerank_run: RerankRun, k: int = DEFAULT_K, explicit: Sequence[Sequence[str]] | None = None
) -> PoolPlan:
    """What a declaration would push into the review core (no writes)."""
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
    by_qid = {r.qid: r for r in rankings}

    wanted = {(qid, by_qid[qid].provision_of[docid]) for qid, docid in members}
    rows = {
        (c.result.query.qid, c.provision_id): c
        for c in RetrievalCandidate.objects.filter(result__run_id=rerank_run.retrieval_run_id,
                                                   result__query__kind=QueryKind.RANKING)
        .select_related("result__query", "provision", "passage")
        if (c.result.query.qid, c.provision_id) in wanted
    }
    items = []
    for qid, docid in members:
        c = rows[(qid, by_qid[qid].provision_of[docid])]
        query, provision, passage = c.result.query, c.provision, c.passage
        heading = f"{provision.citation}. {provision.heading}".strip()
        item = {
            "query_id": qid, "doc_id": docid,
            "query_text": query.text,
            "source_heading": heading, "source_text": provision.body,
            "passage_caption": passage.caption, "passage_text": passage.text,
            # Ids and content hashes only: never a rank, a score or which order surfaced the passage.
            "external_ref": {
                "job": JOB, "rerank_run": rerank_run.pk, "retrieval_run": rerank_run.retrieval_run_id,
                "suite": rerank_run.suite_id, "query": query.pk, "candidate": c.pk, "provision": provision.pk,
                "passage": passage.pk, "query_sha256": query.text_sha256,
                "provision_sha256": provision.content_sha256, "passage_sha256": passage.sha256,
            },
        }
        item["query_hash"] = query_hash_of(item["query_text"])
        item["source_hash"] = source_hash_of(heading, provision.body)
        item["passage_hash"] = passage_hash_of(passage.caption, passage.text)
        items.append(item)

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
    declaration = {
        "rule": RULE_UNION if explicit is None else RULE_EXPLICIT,
        "k": k if explicit is None else None,
        "rerank_run": rerank_run.pk,
        "members": sorted([i["query_id"], i["doc_id"], i["query_hash"], i["source_hash"], i["passage_hash"]]
                          for i in items),
    }
    digest = sha256_json(declaration)
    params = {
        "rule": declaration["rule"], "k": declaration["k"], "rerank_run": rerank_run.pk,
        "retrieval_run": rerank_run.retrieval_run_id, "suite": f"{suite.name} v{suite.version}",
        "suite_sha256": suite.sha256, "queries": len(rankings), "queries_in_pool": len(covered),
        "items": len(items), "declaration_sha256": digest,
    }
    return PoolPlan(rule=declaration["rule"], k=declaration["k"], declared_rule=declared_rule, items=items,
                    params=params, declaration_sha256=digest)


@dataclass(frozen=True)
class DeclareResult:
    pool: ReviewPool
    created: bool
    assigned: int


@transaction.atomic
def review_pool_declare(
    *,
    rerank_run: RerankRun,
    k: int = DEFAULT_K,
    explicit: Sequence[Sequence[str]] | None = None,
    reviewers_per_item: int = DEFAULT_REVIEWERS,
    reviewers: Sequence[AbstractBaseUser] = (),
    name: str = "",
    extra_params: dict[str, Any] | None = None,
    created_by: AbstractBaseUser | None = None,
) -> DeclareResult:
    """Declare (or find, when the same declaration exists) the review pool of a rerank run; assign if asked.

    ``extra_params`` is merged into the pool's declared parameters and the
    declaration hash (the demo marks its synthetic pool this way).
    """
    # Serialise declarations of one run so two clicks cannot make two identical pools.
    rerank_run = RerankRun.objects.select_for_update().select_related("suite").get(pk=rerank_run.pk)
    plan = review_pool_plan(rerank_run=rerank_run, k=k, explicit=explicit)
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
    assigned = 0
    if reviewers:
        try:
            assigned = pool_assign(pool=pool, reviewers=reviewers)
        except ReviewError as error:
            raise ReviewPoolError(str(error)) from None
    return DeclareResult(pool=pool, created=created, assigned=assigned)


def run_pools(*, rerank_run: RerankRun) -> list[ReviewPool]:
    """Review pools declared from this rerank run, newest first."""
    return pool_find(external_ref={"job": JOB, "rerank_run": rerank_run.pk}, kind=POOL_KIND)


def is_synthetic(pool: ReviewPool) -> bool:
    """A demo pool whose judgments were generated, not made by people (marked in its declared parameters)."""
    return bool((pool.declared_params or {}).get("synthetic"))


# --------------------------------------------------------------------------- provisional section labels


def provisional_source_name(suite: Suite) -> str:
    return f"{suite.name} v{suite.version}: nominated targets (provisional, source-derived, section-level)"


@transaction.atomic
def provisional_labels_import(*, suite: Suite, created_by: AbstractBaseUser | None = None) -> tuple[LabelSource, bool]:
    """Import the suite's nominated targets as a provisional, section-level label source (once per suite).

    Each target becomes a "section" label of grade 2 (a nomination says the
    section is useful; it does not tell 2 from 3). They are not passage labels
    and no metric here reads them.
    """
    name = provisional_source_name(suite)
    source = LabelSource.objects.filter(name=name).first()
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
    source = label_source_import(
        name=name, labels=labels, provisional=True, created_by=created_by,
        description=(f"{len(labels)} nominated targets of suite {suite} (nominated by "
                     f"{', '.join(sorted({t.nominated_by for t in targets}))}), recorded as section grade "
                     f"{PROVISIONAL_GRADE}. Provisional and source-derived: section-level only, never counted as "
                     "passage labels."),
    )
    return source, True
