"""Lawyers confirm a suite's targets, blind, through the review engine; confirmations make a new suite version.

Every provisional target of a frozen suite becomes an item of the ``target`` review kind: the query and the
provision (citation, heading, body), nothing about who nominated it and nothing from any model. Lawyers answer
yes or no with the same workspace, revisions and completion as passage grading. The review engine resolves
each item by the pool's rule (``reviewers_per_item`` agreeing complete judgments, or an admin's adjudication
after a disagreement); ``confirmation_state`` reads those labels back.

A lawyer may propose a missing target while confirming (a citation of the suite's corpus, in any form the
citation parser reads). A proposal never confirms itself: the next declaration puts it in a pool of its own,
assigned to the other lawyers only.

``suite_confirmed_version`` freezes the next version of the suite through ``suite_import`` (the same canonical
JSON and sha256 as importing the file): confirmed targets carry ``confirmed_by`` ({lawyers, agreement}) and
are no longer provisional, rejected ones are left out, confirmed proposals are added.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from benchmarks.corpus.models import Provision
from benchmarks.corpus.selectors import corpus_citation_pattern
from benchmarks.suites.citations import citation_parse
from benchmarks.suites.models import (
    NominatedTarget,
    QueryKind,
    Suite,
    SuiteQuery,
    TargetProposal,
    TargetProposalSupport,
)
from benchmarks.suites.services import _next_version, suite_import
from reviewapp.core.models import ADMIN_HELD, SigninMethod
from reviewapp.core.records.hashing import canonical_json
from reviewapp.core.records.provenance import LabelOrigin, Procedure
from reviewapp.review.agreement.judgments import pool_completed_judgments, pool_judgments
from reviewapp.review.agreement.selectors import pool_labels
from reviewapp.review.agreement.spans import pool_span_rulings
from reviewapp.review.assignment.selectors import reviewer_candidates
from reviewapp.review.assignment.services import pool_assign
from reviewapp.review.errors import ReviewError
from reviewapp.review.pools.refs import PoolRef
from reviewapp.review.pools.selectors import pool_find, pool_item_keys
from reviewapp.review.pools.services import pool_create
from reviewapp.review.workspace.selectors import reviewer_assigned_item

JOB = "benchmarks"
KIND = "target"
DEFAULT_REVIEWERS = 2
REVIEWER_TITLE = "Suite targets"
INSTRUCTIONS = (
    "Read the question, then the provision. Answer yes when the provision is a correct target for the question "
    "(a section a lawyer answering it should find), no when it is not; 'unknown' when you cannot tell. If a "
    "provision the question needs is missing, propose it by its citation below the grade."
)
PROPOSAL_NOTE = "proposed by a lawyer while confirming; confirmed by other lawyers"


class ConfirmationError(ValueError):
    """Bad input to a confirmation; the message names the problem and where."""


def _heading(provision: Provision) -> str:
    return f"{provision.citation}. {provision.heading}".strip()


def _item(*, suite: Suite, query: SuiteQuery, citation: str, provision: Provision,
          proposal: TargetProposal | None) -> dict[str, Any]:
    # What the lawyer reads is the query and the provision; the ref maps the label back and is never rendered.
    # It holds no nominator: nothing about who put the target there reaches the review engine at all.
    return {
        "query_id": query.qid, "doc_id": citation, "query_text": query.text,
        "source_heading": _heading(provision), "source_text": provision.body,
        "external_ref": {"job": JOB, "confirmation": suite.pk, "qid": query.qid, "citation": citation,
                         "provision": provision.pk, "proposal": proposal.pk if proposal else None},
    }


def confirmation_pools(*, suite: Suite) -> list[PoolRef]:
    """The confirmation pools of a suite, newest first."""
    return pool_find(external_ref={"job": JOB, "confirmation": suite.pk}, kind=KIND)


def _declared(suite: Suite) -> set[tuple[str, str]]:
    return {(item.query_id, item.doc_id) for pool in confirmation_pools(suite=suite)
            for item in pool_item_keys(pool=pool)}


@transaction.atomic
def confirmation_pool_declare(
    *,
    suite: Suite,
    reviewers: Sequence[User] = (),
    reviewers_per_item: int = DEFAULT_REVIEWERS,
    created_by: User | None = None,
) -> list[PoolRef]:
    """Declare pools for every provisional target and every proposal of ``suite`` not in a pool yet; assign them.

    Targets go in one pool; each lawyer's proposals in a pool of their own, assigned to ``reviewers`` minus
    that lawyer. Returns the pools made (none when everything is declared already).
    """
    Suite.objects.select_for_update().filter(pk=suite.pk).first()  # one declaration of a suite at a time
    declared = _declared(suite)
    targets = [t for t in NominatedTarget.objects.filter(query__suite=suite, provisional=True,
                                                         confirmed_by__isnull=True)
               .select_related("query", "provision").order_by("query__position", "id")
               if (t.query.qid, t.citation) not in declared]
    proposals: dict[frozenset[int], list[TargetProposal]] = {}
    proposers = proposal_proposers(suite=suite)
    for proposal in (TargetProposal.objects.filter(suite=suite).select_related("query", "provision", "proposed_by")
                     .order_by("id")):
        if (proposal.query.qid, proposal.citation) not in declared:
            proposals.setdefault(proposers[proposal.pk], []).append(proposal)
    batches: list[tuple[str, list[dict[str, Any]], list[User]]] = []
    if targets:
        batches.append((
            f"{len(targets)} provisional targets",
            [_item(suite=suite, query=t.query, citation=t.citation, provision=t.provision, proposal=None)
             for t in targets],
            list(reviewers)))
    for proposer_ids, own in proposals.items():
        batches.append((
            f"{len(own)} proposed targets (proposers excluded)",
            [_item(suite=suite, query=p.query, citation=p.citation, provision=p.provision, proposal=p) for p in own],
            [r for r in reviewers if r.pk not in proposer_ids]))
    pools = []
    for label, items, assignees in batches:
        try:
            pool = pool_create(
                name=f"Confirm targets of {suite}: {label}", kind=KIND, items=items,
                declared_rule=(f"Every {label} of suite {suite} (sha256 {suite.sha256[:12]}…) not declared before, "
                               f"one item per (query, provision); {reviewers_per_item} lawyers must agree."),
                declared_params={"suite": str(suite), "suite_sha256": suite.sha256, "items": len(items)},
                reviewers_per_item=reviewers_per_item, reviewer_title=REVIEWER_TITLE, instructions=INSTRUCTIONS,
                external_ref={"job": JOB, "confirmation": suite.pk}, created_by=created_by,
            )
            if assignees:
                pool_assign(pool=pool, reviewers=assignees)
        except ReviewError as error:
            raise ConfirmationError(f"{label}: {error}") from None
        pools.append(pool)
    return pools


# --------------------------------------------------------------------------- reading the labels back


@dataclass(frozen=True)
class TargetConfirmation:
    """Where one (query, provision) stands in the confirmation of a suite (admin side)."""

    qid: str
    citation: str
    proposal: int | None  # the TargetProposal id, for a proposed target
    state: str  # "confirmed" | "rejected" | "disagreed" | "pending"
    lawyers: int  # complete, current judgments counted
    agreement: str  # "unanimous" | "adjudicated" | ""
    reason: str  # for pending or disagreed: why

    @property
    def confirmed_by(self) -> dict[str, Any]:
        return {"lawyers": self.lawyers, "agreement": self.agreement}


def confirmation_state(*, suite: Suite) -> list[TargetConfirmation]:
    """Every item of the suite's confirmation pools, resolved by the review engine's label rule."""
    out: dict[tuple[str, str], TargetConfirmation] = {}
    proposers = proposal_proposers(suite=suite)
    for pool in reversed(confirmation_pools(suite=suite)):  # oldest first: a later pool's item wins
        # A proposal never confirms itself: should an admin assign its proposer after all, the item waits.
        self_judged = {r.item_id for r in pool_judgments(pool)
                       if r.external_ref.get("proposal")
                       and r.reviewer_id in proposers.get(r.external_ref["proposal"], frozenset())}
        for label in pool_labels(pool=pool, grade_type=KIND):
            lawyers = sum(isinstance(g, int) for g in label.grades)
            if label.item_id in self_judged and label.state != "adjudicated":
                out[(label.query_id, label.doc_id)] = TargetConfirmation(
                    qid=label.query_id, citation=label.doc_id, proposal=label.external_ref.get("proposal"),
                    state="pending", lawyers=lawyers, agreement="",
                    reason="its proposer judged it: only other lawyers may confirm a proposal (unassign the proposer)")
                continue
            if label.state == "unresolved":
                state = "disagreed" if label.reason == "reviewers disagree" else "pending"
                agreement = ""
            else:
                state = "confirmed" if label.value == 1 else ("rejected" if label.value == 0 else "pending")
                agreement = "adjudicated" if label.state == "adjudicated" else "unanimous"
            out[(label.query_id, label.doc_id)] = TargetConfirmation(
                qid=label.query_id, citation=label.doc_id, proposal=label.external_ref.get("proposal"),
                state=state, lawyers=lawyers, agreement=agreement,
                reason=label.reason or ("adjudicated as unknown" if state == "pending" else ""))
    return sorted(out.values(), key=lambda c: (c.qid, c.citation))


@dataclass(frozen=True)
class ConfirmationSummary:
    """The suite page's confirmation box (admin side): counts by state and the pools to adjudicate in."""

    provisional: int  # provisional targets of this version, not yet confirmed
    counts: dict[str, int]  # state -> items
    proposals: int
    pools: list[PoolRef]
    reviewers: list[User]


def confirmation_reviewers() -> list[User]:
    """Who may be asked to confirm: the review engine's own rule for blind reviewers."""
    return reviewer_candidates()


def confirmation_summary(*, suite: Suite) -> ConfirmationSummary:
    states = confirmation_state(suite=suite)
    counts = {state: sum(c.state == state for c in states) for state in ("confirmed", "rejected", "disagreed",
                                                                          "pending")}
    return ConfirmationSummary(
        provisional=NominatedTarget.objects.filter(query__suite=suite, provisional=True).count(), counts=counts,
        proposals=TargetProposal.objects.filter(suite=suite).count(), pools=confirmation_pools(suite=suite),
        reviewers=confirmation_reviewers())


def _confirmed_document(suite: Suite, states: list[TargetConfirmation]) -> dict[str, Any]:
    decided = {(c.qid, c.citation): c for c in states if c.state in ("confirmed", "rejected")}
    proposals = {p.pk: p for p in TargetProposal.objects.filter(suite=suite).select_related("proposed_by")}
    document = json.loads(suite.definition)
    for query in document["queries"]:
        targets = []
        for target in query.get("targets", []):
            decision = decided.get((query["id"], target["citation"]))
            if decision is None:
                targets.append(target)
            elif decision.state == "confirmed":
                targets.append({**target, "provisional": False, "confirmed_by": decision.confirmed_by})
        for decision in decided.values():
            if decision.qid == query["id"] and decision.proposal and decision.state == "confirmed":
                proposal = proposals[decision.proposal]
                targets.append({"citation": decision.citation, "provisional": False,
                                "nominated_by": proposal.proposed_by.get_username(), "note": PROPOSAL_NOTE,
                                "confirmed_by": decision.confirmed_by})
        if query["kind"] == QueryKind.RANKING and not targets:
            raise ConfirmationError(f"{query['id']}: lawyers rejected every target of this query; propose a "
                                    "correct target (or leave the query out in a new draft) before a new version")
        query["targets"] = targets
    return document


def _same_but_version(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return {**a, "version": 0} == {**b, "version": 0}


@transaction.atomic
def suite_confirmed_version(*, suite: Suite, user: User) -> tuple[Suite, bool]:
    """Freeze the next version of ``suite`` with what lawyers decided so far (through ``suite_import``).

    Asking again with nothing new decided returns the version made before (created False).
    """
    Suite.objects.select_for_update().filter(pk=suite.pk).first()
    states = confirmation_state(suite=suite)
    if not any(c.state in ("confirmed", "rejected") for c in states):
        raise ConfirmationError(f"suite {suite}: no target is confirmed or rejected yet "
                                f"({len(states)} in confirmation pools); nothing to make a new version of")
    document = _confirmed_document(suite, states)
    for later in Suite.objects.filter(name=suite.name, version__gt=suite.version).order_by("version"):
        if _same_but_version(json.loads(later.definition), document):
            return later, False
    document["version"] = _next_version(suite.name)
    return suite_import(raw=canonical_json(document), filename=f"{suite.name}-v{document['version']}-confirmed.json",
                        frozen_by=user.get_username(), confirmations_made_here=True)


# --------------------------------------------------------------------------- proposals


def _suite_of(pool: PoolRef) -> Suite:
    ref = pool.external_ref or {}
    if pool.kind != KIND or ref.get("job") != JOB or "confirmation" not in ref:
        raise ConfirmationError("this item is not a target confirmation; proposals are made while confirming")
    return Suite.objects.get(pk=ref["confirmation"])


def target_propose(*, reviewer: User, item_id: str, citation: str) -> TargetProposal:
    """Record a lawyer's proposal of a missing target for the query of a confirmation item they are assigned.

    Raises NotAssigned (callers answer 404) or ConfirmationError naming the problem.
    """
    assigned = reviewer_assigned_item(reviewer=reviewer, item_id=item_id)
    suite = _suite_of(assigned.pool)
    text = (citation or "").strip()
    if not text:
        raise ConfirmationError("citation: required (e.g. a section citation of the suite's corpus)")
    parsed = citation_parse(text, default_corpus=suite.corpus, code=corpus_citation_pattern(corpus=suite.corpus))
    if parsed is None or parsed.corpus != suite.corpus:
        raise ConfirmationError(f"citation: {text!r} is not a citation of the {suite.corpus.upper()} corpus")
    provision = (Provision.objects.filter(snapshot__in=suite.snapshots.all(), citation=parsed.citation)
                 .order_by("variant", "id").first())
    if provision is None:
        raise ConfirmationError(f"citation: {parsed.citation} is not in the corpus snapshot this suite is pinned to")
    query = SuiteQuery.objects.get(suite=suite, qid=assigned.query_id)
    if query.targets.filter(citation=parsed.citation).exists():
        raise ConfirmationError(f"citation: {parsed.citation} is already a target of this query")
    # The same citation suggested again (by anyone) is the same proposal: answered alike, so a lawyer learns
    # nothing of what other lawyers did.
    proposal = TargetProposal.objects.filter(query=query, citation=parsed.citation).first()
    if proposal is None:
        try:
            with transaction.atomic():
                proposal = TargetProposal.objects.create(suite=suite, query=query, citation=parsed.citation,
                                                         provision=provision, proposed_by=reviewer,
                                                         while_grading=item_id)
        except IntegrityError:  # a concurrent identical proposal won the race
            proposal = TargetProposal.objects.get(query=query, citation=parsed.citation)
    # Every lawyer who suggested it is recorded, so none of them can confirm it later.
    try:
        with transaction.atomic():
            TargetProposalSupport.objects.create(proposal=proposal, lawyer=reviewer)
    except IntegrityError:  # this lawyer suggested it before
        pass
    return proposal


def proposal_proposers(*, suite: Suite) -> dict[int, frozenset[int]]:
    """Each proposal's lawyers: the first proposer and everyone who suggested the same citation since."""
    out: dict[int, set[int]] = {pk: {by} for pk, by in
                                TargetProposal.objects.filter(suite=suite).values_list("pk", "proposed_by_id")}
    for pk, lawyer in TargetProposalSupport.objects.filter(proposal__suite=suite).values_list("proposal_id",
                                                                                              "lawyer_id"):
        out.setdefault(pk, set()).add(lawyer)
    return {pk: frozenset(lawyers) for pk, lawyers in out.items()}


# --------------------------------------------------------------------------- provenance of a version's targets


_AGREEMENT_PROCEDURE = {"unanimous": Procedure.LAWYER_BLIND, "adjudicated": Procedure.ADJUDICATED}


def _target_procedure(target: NominatedTarget) -> Procedure:
    if target.confirmed_by:
        return _AGREEMENT_PROCEDURE.get(target.confirmed_by.get("agreement", ""), Procedure.LAWYER_BLIND)
    if target.claimed_confirmed_by:
        return Procedure.IMPORTED
    return Procedure.NOMINATED


def suite_target_origin(*, suite: Suite) -> LabelOrigin:
    """How every target of this suite version was made: confirmed blind by lawyers (unanimously or after an
    admin's ruling on their disagreement), claimed confirmed by an imported file, or nominated only.

    The lawyers are those of the confirmation that produced this version (the confirmation pools of the earlier
    versions that decided its confirmed targets) and of this version's own confirmation so far; their answers
    are counted on exactly those targets, with how their authors signed in.
    """
    targets = list(NominatedTarget.objects.filter(query__suite=suite).select_related("query").order_by("id"))
    procedures: dict[str, int] = {}
    for target in targets:
        procedure = _target_procedure(target)
        procedures[procedure] = procedures.get(procedure, 0) + 1
    confirmed = {(t.query.qid, t.citation) for t in targets if t.confirmed_by}
    adjudicated = {(t.query.qid, t.citation) for t in targets
                   if t.confirmed_by and t.confirmed_by.get("agreement") == "adjudicated"}
    earlier = Suite.objects.filter(name=suite.name, version__lt=suite.version).order_by("-version")
    answered: list[Any] = []
    produced_by: list[int] = []
    adjudicators: set[str] = set()

    def _read(pool: PoolRef, wanted: set[tuple[str, str]] | None) -> list[Any]:
        records = [r for r in pool_completed_judgments(pool=pool) if wanted is None or (r.query_id, r.doc_id) in wanted]
        rulings = pool_span_rulings(pool=pool, grade_type=KIND)
        adjudicators.update(rulings[label.item_id].adjudicator for label in pool_labels(pool=pool, grade_type=KIND)
                            if label.state == "adjudicated" and label.item_id in rulings
                            and wanted is not None and (label.query_id, label.doc_id) in adjudicated)
        return records

    for other in earlier:
        records = [r for pool in confirmation_pools(suite=other) for r in _read(pool, confirmed)]
        if records:
            produced_by.append(other.version)
            answered.extend(records)
    answered.extend(r for pool in confirmation_pools(suite=suite) for r in _read(pool, None))
    states = confirmation_state(suite=suite)
    nominators = json.loads(suite.definition).get("nominated_by", "")
    names = dict.fromkeys([nominators, *(t.nominated_by for t in targets)])
    source = f"suite {suite.name} v{suite.version}"
    if produced_by:
        source += f", confirmed in the blind confirmation of v{', v'.join(map(str, sorted(produced_by)))}"
    return LabelOrigin(
        role="targets", source=source, unit="target",
        procedures=tuple((str(p), n) for p, n in procedures.items()),
        lawyers=tuple(sorted({r.reviewer_username for r in answered})), adjudicators=tuple(sorted(adjudicators)),
        nominated_by=" and ".join(n for n in names if n),
        rejected=sum(c.state == "rejected" for c in states),
        undecided=sum(c.state in ("disagreed", "pending") for c in states),
        answers=len(answered), admin_held=sum(r.signin_method in ADMIN_HELD for r in answered),
        through_idp=sum(r.signin_method == SigninMethod.OIDC for r in answered),
    )
