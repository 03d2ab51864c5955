"""One small world with real objects of every job, shared by the trust tests (access matrix, blindness, secrets).

Built once per test module (see ``tests/trust/conftest.py``): a synthetic statute chapter, a frozen suite, a
keyword retrieval run, a rerank run graded by the real local model, a second rerank run whose job-side data
carries planted markers, review pools assigned to the reviewer, the fixture CUAD with graded runs, an
extraction job and a label audit whose judges' reasons are planted too.

Every marker below is written into job-side data only. None of them may reach a reviewer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

PASSWORD = "trust-long-password-0192837465"

# Distinctive strings planted in job data; a reviewer must never receive any of them.
MODEL_MARKER = "planted-model-XYZ"
PROVIDER_MARKER = "planted-provider-QWV"
JUDGE_MARKER = "planted-judge-reason-JRK"
SYSTEM_MARKER = "planted-system-SYS"
OTHER_NOTE_MARKER = "planted-note-of-rob-R2D2"
P_USEFUL_MARKER = "0.73519"
PROB_MARKERS = ("0.13947", "0.12534", "0.41357", "0.32162", "0.61803")
RANK_MARKER = "rank-marker-8675309"
BLIND_MARKERS = (MODEL_MARKER, PROVIDER_MARKER, JUDGE_MARKER, SYSTEM_MARKER, OTHER_NOTE_MARKER, P_USEFUL_MARKER,
                 *PROB_MARKERS, RANK_MARKER, "8675309")

# A provider key planted in settings.PROVIDER_KEYS (and the environment) by the secrets test.
PLANTED_KEYS = {
    "openrouter": "sk-or-v1-" + "TRUSTPLANTED0openrouter0key0must0never0leak00000",
    "openai_compatible": "sk-" + "TRUSTPLANTED0compatible0key0must0never0leak000000",
    "anthropic": "sk-ant-api03-" + "TRUSTPLANTED0anthropic0key0must0never0leak0",
}

ROLES = ("anonymous", "reviewer", "stakeholder", "admin")


@dataclass
class World:
    users: dict = field(default_factory=dict)
    # statute benchmark
    corpus: str = "nrs"
    chapter: str = ""
    provision_pk: int = 0
    snapshot_pk: int = 0  # the provision's snapshot: the first of its source (nothing earlier to compare with)
    suite_pk: int = 0
    draft_pk: int = 0  # an open suite draft of the workbench
    retrieval_pk: int = 0
    rerank_pk: int = 0  # the local-model run
    planted_rerank_pk: int = 0  # markers in its model id, provider, grades
    ledger_pk: int = 0
    planted_ledger_pk: int = 0
    # review
    pool_id: str = ""  # pool declared from the planted rerank run, assigned to both reviewers
    pool_item_id: str = ""  # an item of it assigned to the reviewer
    marker_pool_id: str = ""  # a pool whose external_ref carries every marker
    multi_pool_id: str = ""  # a depth-k pool of both rerank runs (contributing systems recorded job-side)
    marker_item_id: str = ""
    audit_pool_id: str = ""  # the CUAD label audit's blinded pool
    # CUAD
    cuad_run_pk: int = 0
    cuad_job_pk: int = 0
    audit_pk: int = 0
    contract_set_pk: int = 0  # a firm's contract set with one imported text contract
    set_contract_pk: int = 0
    # Django admin: a content type with objects (for the admin's "view on site" shortcut)
    group_ct: int = 0
    group_pk: int = 0

    def fmt(self, template: str) -> str:
        return template.format(**{k: v for k, v in self.__dict__.items() if k != "users"})


def _user(username: str, role: str, *, staff: bool = False):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from reviewapp.core.auth.roles import ensure_role_groups

    ensure_role_groups()
    user = get_user_model().objects.create_user(username=username, password=PASSWORD, is_staff=staff)
    user.groups.add(Group.objects.get(name=role))
    return user


def _planted_rerank_run(retrieval_run):
    """A finished rerank run written directly, every candidate with the same unusual probabilities."""
    from benchmarks.rerank.models import RerankGrade, RerankRun
    from benchmarks.retrieval.models import RetrievalCandidate
    from benchmarks.suites.models import QueryKind
    from reviewapp.providers.models import Ledger

    ledger = Ledger.objects.create(purpose=f"trust test {PROVIDER_MARKER}", provider="openai_compatible",
                                   model_id=MODEL_MARKER, max_requests=400, max_input_tokens=2_000_000)
    run = RerankRun.objects.create(
        suite=retrieval_run.suite, retrieval_run=retrieval_run, ledger=ledger, provider="openai_compatible",
        model_id=MODEL_MARKER, method="logprobs", question_version="statute-relevance-v1",
        question_sha256="0" * 64, status="done")
    candidates = (RetrievalCandidate.objects.filter(result__run=retrieval_run, result__query__kind__in=[
        QueryKind.RANKING, QueryKind.OUTSIDE_CORPUS]).select_related("result__query").order_by("id"))
    p0, p1, p2, p3 = (float(x) for x in PROB_MARKERS[:4])
    grades = []
    for n, cand in enumerate(candidates):
        grades.append(RerankGrade(
            run=run, query=cand.result.query, candidate=cand, request_index=n // 4, position_in_request=n % 4 + 1,
            request_key=f"{RANK_MARKER}-{n}", status="graded", p0=p0, p1=p1, p2=p2, p3=p3,
            # ties broken by keyword rank; the markers must never reach a reviewer
            p_useful=float(P_USEFUL_MARKER) - n * 1e-9 if n else float(P_USEFUL_MARKER),
            confidence=float(PROB_MARKERS[4])))
    RerankGrade.objects.bulk_create(grades)
    return run


def _marker_items() -> list[dict]:
    """Items listed in rank order, their external_ref full of markers (job side only)."""
    items = []
    for q in range(2):
        for r in range(5):
            items.append({
                "query_id": f"trust-q{q}", "doc_id": f"trust-d{q}-{r}",
                "query_text": f"Question {q}: when must a landlord return a security deposit?",
                "source_heading": f"Section {q}.{r}. Deposits",
                "source_text": f"Full text of section {q}.{r}: the deposit is returned within {r + 10} days.",
                "passage_caption": f"Section {q}.{r}",
                "passage_text": f"The deposit is returned within {r + 10} days.",
                "external_ref": {
                    "rank": r + 1, "rank_marker": RANK_MARKER, "p_useful": float(P_USEFUL_MARKER),
                    "score": float(PROB_MARKERS[4]), "model": MODEL_MARKER, "provider": PROVIDER_MARKER,
                    "system": SYSTEM_MARKER, "judge_reason": JUDGE_MARKER, "proposed_grade": 3,
                },
            })
    return items


def build_world(tmp_path: Path) -> World:
    from benchmarks.corpus.models import Provision
    from benchmarks.labels.pools import review_pool_declare, review_pool_declare_runs
    from benchmarks.rerank import services as rerank
    from grading.audits.models import AuditCandidate, AuditJudge, AuditVerdict
    from grading.audits.review import audit_review_send
    from grading.runs import jobs as console
    from reviewapp.review.assignment.services import pool_assign
    from reviewapp.review.pools.refs import pool_model
    from reviewapp.review.pools.services import pool_create_model
    from reviewapp.review.workspace.services import judgment_submit
    from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run
    from tests.grading.audit_support import audited_run, local_audit

    w = World()
    w.users = {
        "admin": _user("trust_admin", "admin", staff=True),
        "reviewer": _user("trust_reviewer", "reviewer"),
        "reviewer2": _user("trust_reviewer2", "reviewer"),
        "stakeholder": _user("trust_stakeholder", "stakeholder"),
    }
    reviewers = [w.users["reviewer"], w.users["reviewer2"]]
    from django.contrib.auth.models import Group
    from django.contrib.contenttypes.models import ContentType

    w.group_ct, w.group_pk = ContentType.objects.get_for_model(Group).pk, Group.objects.get(name="reviewer").pk

    # Statute benchmark: a tiny synthetic chapter, one ranking query and one outside-corpus control.
    retrieval = synthetic_retrieval_run(sections=30, ranking=1, seed=23)
    w.retrieval_pk, w.suite_pk = retrieval.pk, retrieval.suite_id
    provision = Provision.objects.order_by("id").first()
    w.provision_pk, w.chapter, w.snapshot_pk = provision.pk, provision.chapter, provision.snapshot_id
    from benchmarks.suites.services import suite_draft_create

    w.draft_pk = suite_draft_create(owner=w.users["admin"], name="trust draft", corpus="nrs").pk
    local = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    assert rerank.rerank_run_execute(run_id=local.pk) == "done"
    w.rerank_pk, w.ledger_pk = local.pk, local.ledger_id
    planted = _planted_rerank_run(retrieval)
    w.planted_rerank_pk, w.planted_ledger_pk = planted.pk, planted.ledger_id

    # Review: the planted run's declared pool, and a pool whose job-side refs carry every marker.
    declared = review_pool_declare(rerank_run=planted, k=5, reviewers=reviewers, reviewers_per_item=2)
    w.pool_id = declared.pool.public_id
    marker_pool = pool_create_model(
        name=f"trust pool {SYSTEM_MARKER}", kind="passage", items=_marker_items(),
        declared_rule=f"union of top 5 of {SYSTEM_MARKER} and {MODEL_MARKER}",
        declared_params={"k": 5, "model": MODEL_MARKER}, reviewers_per_item=2,
        external_ref={"model": MODEL_MARKER, "provider": PROVIDER_MARKER})
    pool_assign(pool=marker_pool, reviewers=reviewers, per_item=2)
    w.marker_pool_id = marker_pool.public_id
    for pool in (declared.pool, marker_pool):
        for n, item in enumerate(pool_model(pool).items.order_by("id")):
            # The other reviewer's drafts and completed grades, with notes, on the same items.
            judgment_submit(item=item, reviewer=w.users["reviewer2"],
                                            grades={"section": 3, "passage": 3}, complete=n % 2 == 0,
                                            note=f"{OTHER_NOTE_MARKER} {JUDGE_MARKER}")
    # A pool of both rerank runs: items the declared pool holds are reused (judge once), the rest assigned.
    multi = review_pool_declare_runs(rerank_runs=[local, planted], k=10, reviewers=reviewers, reviewers_per_item=2)
    w.multi_pool_id = multi.pool.public_id
    assert multi.assigned and multi.reused  # the crawl reads its own items, and reuse happened
    held = pool_model(multi.pool).items.filter(assignments__reviewer=w.users["reviewer2"]).order_by("id")
    for n, item in enumerate(held):
        judgment_submit(item=item, reviewer=w.users["reviewer2"], grades={"section": 2, "passage": 1},
                                        complete=n % 2 == 0, note=f"{OTHER_NOTE_MARKER} {JUDGE_MARKER}")
    own = marker_pool.items.order_by("id").first()
    judgment_submit(item=own, reviewer=w.users["reviewer"], grades={"section": 1, "passage": 0},
                                    complete=False, note="my own draft note")
    w.marker_item_id = own.public_id
    w.pool_item_id = pool_model(declared.pool).items.order_by("id").first().public_id

    # The firm's contracts: a set holding one plain-text contract.
    from grading.contracts.services import contract_import, contract_set_get_or_create

    contract_set, _ = contract_set_get_or_create(name="trust contracts", user=w.users["admin"])
    outcome = contract_import(contract_set=contract_set, filename="supply.txt", user=w.users["admin"],
                              data=b"SUPPLY AGREEMENT\nGoverning Law. Nevada law governs this Agreement.\n")
    assert outcome.status == "imported", outcome.detail
    w.contract_set_pk, w.set_contract_pk = contract_set.pk, outcome.contract.pk

    # CUAD: the fixture dataset, graded runs, an extraction job, a label audit with planted judge reasons.
    loaded, run = audited_run(tmp_path)
    w.cuad_run_pk = run.pk
    job = console.extraction_job_create(sample=loaded.sample, provider="local", queue=False)
    w.cuad_job_pk = job.pk
    audit = local_audit(run)
    w.audit_pk = audit.pk
    for judge in AuditJudge.objects.filter(audit=audit):
        for n, candidate in enumerate(AuditCandidate.objects.filter(audit=audit).order_by("position")):
            AuditVerdict(candidate=candidate, judge=judge, verdict=n % 2 == 0, score=float(PROB_MARKERS[4]),
                         reason=f"{JUDGE_MARKER} {MODEL_MARKER}", request_key=RANK_MARKER).save(force_insert=True)
    audit_pool, _ = audit_review_send(audit=audit, reviewers=reviewers)
    w.audit_pool_id = audit_pool.public_id
    for item in pool_model(audit_pool).items.order_by("id"):
        judgment_submit(item=item, reviewer=w.users["reviewer2"], grades=_all_grades(audit_pool),
                                        complete=False, note=OTHER_NOTE_MARKER)
    return w


def _all_grades(pool) -> dict:
    from reviewapp.review.kinds import kind_get

    return dict.fromkeys(kind_get(pool.kind).grade_type_keys, 1)


def client_for(user):
    from django.test import Client

    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def body_of(response) -> bytes:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)
    return response.content


def dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
