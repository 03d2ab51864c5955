"""Real flows through a client generated from the live schema (tests/api/conftest.py).

Each call parses the server's answer with the generated models: a schema that disagrees with a payload (a
missing field, a wrong status, an undeclared error body) fails here. Works with eager tasks (SQLite) and with
a real worker (TEST_REAL_WORKER=1 on PostgreSQL + Redis): the data is committed, the live server and the
worker see the same database.
"""

from __future__ import annotations

import json
from http import HTTPStatus

import pytest

from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run
from tests.factories import make_user
from tests.grading.console_support import load
from tests.grading.cuad_fixture import gold_run
from tests.helpers import wait_until
from tests.reviewapp.review.conftest import make_items

pytestmark = pytest.mark.django_db(transaction=True)

RERANK_FINISHED = {"done", "stopped", "cancelled", "failed"}


def _rerank_status(api, run_id: int):
    answer = api.call("admin", "benchmarks.benchmarks_rerank_runs_retrieve", id=run_id)
    assert answer.status_code == HTTPStatus.OK
    return answer.parsed if answer.parsed.run.status in RERANK_FINISHED else None


def test_an_admin_launches_a_local_rerank_run_polls_it_and_fetches_its_report_and_trec_files(api, celery_worker):
    models = api.module("models")
    retrieval = synthetic_retrieval_run(seed=23)

    launched = api.call("admin", "benchmarks.benchmarks_rerank_runs_create",
                        body=models.RerankRunLaunchIn(retrieval_run=retrieval.pk, provider=models.ProviderEnum.LOCAL))
    assert launched.status_code == HTTPStatus.ACCEPTED, launched.content
    assert isinstance(launched.parsed, models.RerankRunLaunchedOut)
    run_id = launched.parsed.id

    finished = wait_until(lambda: _rerank_status(api, run_id), timeout=300)
    assert finished.run.status == "done", finished.run.stop_reason or finished.run.error
    assert finished.run.model_id == "all-MiniLM-L6-v2-onnx-int8"
    assert finished.progress.pending == 0 and finished.progress.graded == launched.parsed.candidates_planned
    assert len(finished.grades) == launched.parsed.candidates_planned
    assert all(g.status == "graded" and abs(g.p0 + g.p1 + g.p2 + g.p3 - 1) < 1e-6 for g in finished.grades)

    report = api.call("admin", "benchmarks.benchmarks_reports_rerank_retrieve", id=run_id, replicates=1000)
    assert report.status_code == HTTPStatus.OK, report.content
    assert isinstance(report.parsed, models.ReportOut)
    assert report.parsed.conclusion.sentence
    assert report.parsed.bootstrap.replicates == 1000 and report.parsed.primary_endpoint.metric
    assert {s.split for s in report.parsed.splits} and report.parsed.systems.reranked
    assert json.loads(report.content)["schema"] == report.parsed.schema

    export_enum = models.BenchmarksReportsRerankTrecRetrieveExport
    trec = {}
    for name in ("keyword.run", "reranked.run", "qrels.txt"):
        answer = api.call("admin", "benchmarks.benchmarks_reports_rerank_trec_retrieve", id=run_id,
                          export=export_enum(name), replicates=1000)
        assert answer.status_code == HTTPStatus.OK, answer.content
        trec[name] = answer.parsed
    # The fixture's ranking queries (its outside-corpus control is graded but not ranked in a run file).
    ranking = {f"q{i}" for i in range(3)}
    assert ranking < {g.query for g in finished.grades}
    reranked = [line.split() for line in trec["reranked.run"].splitlines()]
    # TREC run lines: qid Q0 docid rank score tag; the reranked order holds the same candidates as keyword order.
    assert reranked and all(len(row) == 6 and row[1] == "Q0" for row in reranked)
    assert {row[0] for row in reranked} == ranking
    keyword = [line.split() for line in trec["keyword.run"].splitlines()]
    assert sorted(row[2] for row in keyword if row[0] in ranking) == sorted(row[2] for row in reranked)
    assert all(len(line.split()) == 4 for line in trec["qrels.txt"].splitlines())

    unknown = api.call("admin", "benchmarks.benchmarks_rerank_runs_retrieve", id=run_id + 1000)
    assert unknown.status_code == HTTPStatus.NOT_FOUND and isinstance(unknown.parsed, models.DetailOut)


def test_a_refused_launch_names_the_field_and_a_body_over_the_limit_is_a_413(api, settings):
    models = api.module("models")
    answer = api.call("admin", "benchmarks.benchmarks_rerank_runs_create",
                      body=models.RerankRunLaunchIn(retrieval_run=10**9, provider=models.ProviderEnum.LOCAL))
    assert answer.status_code == HTTPStatus.BAD_REQUEST
    assert isinstance(answer.parsed, models.BadRequestOut)
    assert answer.parsed.errors == [f"retrieval_run: no retrieval run #{10**9}"]
    negative = api.call("admin", "benchmarks.benchmarks_rerank_runs_create",
                        body=models.RerankRunLaunchIn(retrieval_run=1, provider=models.ProviderEnum.LOCAL,
                                                      max_requests=0))
    assert negative.status_code == HTTPStatus.BAD_REQUEST
    assert "max_requests" in negative.parsed.additional_properties

    settings.REQUEST_BODY_MAX_BYTES = 2000
    too_big = api.call("admin", "cuad.cuad_runs_create", body=models.RunPasteIn(run="x" * 5000))
    assert too_big.status_code == HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    assert isinstance(too_big.parsed, str) and "limit is 2000 bytes" in too_big.parsed


def test_an_admin_declares_a_comparison_and_a_stakeholder_lists_it(api):
    from tests.benchmarks.labels.fixtures import rerank_world

    models = api.module("models")
    run = rerank_world(seed=43, queries=4)
    body = models.ComparisonDeclareIn(systems=[models.ComparisonSystemIn(retrieval_run=run.retrieval_run_id),
                                               models.ComparisonSystemIn(retrieval_run=run.retrieval_run_id,
                                                                         rerank_run=run.pk)])
    refused = api.call("stakeholder", "benchmarks.benchmarks_comparisons_declare", body=body)
    assert refused.status_code == HTTPStatus.FORBIDDEN
    declared = api.call("admin", "benchmarks.benchmarks_comparisons_declare", body=body)
    assert declared.status_code == HTTPStatus.CREATED, declared.content
    assert isinstance(declared.parsed, models.ComparisonOut) and len(declared.parsed.systems) == 2
    listed = api.call("stakeholder", "benchmarks.benchmarks_comparisons_list", suite=run.suite_id)
    assert isinstance(listed.parsed, models.ComparisonListOut)
    assert [c.sha256 for c in listed.parsed.comparisons] == [declared.parsed.sha256]
    again = api.call("admin", "benchmarks.benchmarks_comparisons_declare", body=body)
    assert again.status_code == HTTPStatus.BAD_REQUEST and "already in the comparison" in again.parsed.errors[0]


def test_an_admin_pastes_a_cuad_run_and_reads_its_scorecard(api, tmp_path):
    models = api.module("models")
    loaded = load(tmp_path)
    run = gold_run("pasted-through-client")

    pasted = api.call("admin", "cuad.cuad_runs_create",
                      body=models.RunPasteIn(run=run, source_name="generated client"))
    assert pasted.status_code in (HTTPStatus.CREATED, HTTPStatus.ACCEPTED), pasted.content
    if pasted.status_code == HTTPStatus.ACCEPTED:
        job = wait_until(lambda: (lambda j: j if j.status in ("done", "failed") else None)(
            api.call("admin", "cuad.cuad_jobs_retrieve", id=pasted.parsed.id).parsed), timeout=300)
        assert job.status == "done", job.error
        run_id = job.run
    else:
        run_id = pasted.parsed.id
        assert pasted.parsed.model == "pasted-through-client"
    assert run_id is not None

    listed = api.call("stakeholder", "cuad.cuad_runs_list")
    assert run_id in [r.id for r in listed.parsed.runs]

    card = api.call("stakeholder", "cuad.cuad_scorecard_retrieve", run=[run_id], sample=loaded.sample.pk)
    assert card.status_code == HTTPStatus.OK, card.content
    assert isinstance(card.parsed, models.ScorecardApiOut)
    # The gold answers pasted back are every span, exactly: perfect precision and recall.
    assert card.parsed.precision == card.parsed.recall == card.parsed.f1 == 1.0
    assert card.parsed.conclusion.startswith(f"Run #{run_id}")

    refused = api.call("stakeholder", "cuad.cuad_scorecard_retrieve", run=[run_id], correct=2.0)
    assert refused.status_code == HTTPStatus.BAD_REQUEST
    assert any(e.startswith("correct:") for e in refused.parsed.errors)


def test_a_reviewer_fetches_the_queue_and_saves_a_judgment(api):
    models = api.module("models")
    items = [models.ItemIn.from_dict(item) for item in make_items(n_queries=1, per_query=2)]
    created = api.call("admin", "review.review_pools_create", body=models.PoolCreateIn(
        name="through the generated client", kind="passage", declared_rule="explicit list", items=items,
        reviewers_per_item=1))
    assert created.status_code == HTTPStatus.CREATED, created.content
    assigned = api.call("admin", "review.review_pools_assign_create", pool_id=created.parsed.id,
                        body=models.AssignIn(reviewers=["api_reviewer"]))
    assert assigned.status_code == HTTPStatus.OK and assigned.parsed.added == 2

    queue = api.call("reviewer", "review.review_queue_list")
    assert queue.status_code == HTTPStatus.OK
    (pool,) = [q for q in queue.parsed if q.pool == created.parsed.id]
    assert pool.total == 2 and pool.completed == 0
    first = pool.items[0].item

    item = api.call("reviewer", "review.review_items_retrieve", item_id=first).parsed
    grades = models.JudgmentInGrades.from_dict({g.key: item.scale[-1].value for g in item.grade_types})
    saved = api.call("reviewer", "review.review_items_judgment_create", item_id=first, body=models.JudgmentIn(
        grades=grades, complete=True, query_hash=item.query_hash, source_hash=item.source_hash,
        passage_hash=item.passage_hash))
    assert saved.status_code == HTTPStatus.CREATED, saved.content
    assert saved.parsed.revision.status == "complete"

    # Grades sent for a query text other than the one shown: 409, nothing saved, the new texts in the body.
    second = api.call("reviewer", "review.review_items_retrieve", item_id=pool.items[1].item).parsed
    stale = api.call("reviewer", "review.review_items_judgment_create", item_id=second.item,
                     body=models.JudgmentIn(grades=grades, complete=True, query_hash="0" * 64,
                                            source_hash=second.source_hash, passage_hash=second.passage_hash))
    assert stale.status_code == HTTPStatus.CONFLICT and isinstance(stale.parsed, models.TextChangedOut)
    assert stale.parsed.changed == ["query"] and stale.parsed.item.query_hash == second.query_hash

    after = api.call("reviewer", "review.review_queue_list")
    assert next(q for q in after.parsed if q.pool == created.parsed.id).completed == 1
    # Reports are not a reviewer's: the schema's 403 body parses.
    refused = api.call("reviewer", "cuad.cuad_runs_list")
    assert refused.status_code == HTTPStatus.FORBIDDEN and isinstance(refused.parsed, models.DetailOut)


def test_a_stakeholder_is_refused_a_launch(api):
    models = api.module("models")
    retrieval = synthetic_retrieval_run(seed=29)
    answer = api.call("stakeholder", "benchmarks.benchmarks_rerank_runs_create",
                      body=models.RerankRunLaunchIn(retrieval_run=retrieval.pk, provider=models.ProviderEnum.LOCAL))
    assert answer.status_code == HTTPStatus.FORBIDDEN
    assert isinstance(answer.parsed, models.DetailOut) and answer.parsed.detail
    job = api.call("stakeholder", "cuad.cuad_jobs_create", body=models.RunLaunchIn())
    assert job.status_code == HTTPStatus.FORBIDDEN
    from benchmarks.rerank.models import RerankRun

    assert not RerankRun.objects.exists()


def test_every_read_endpoint_answers_in_the_shape_the_schema_declares(api, tmp_path, django_user_model):
    """Each GET of the schema, called through the generated client on real objects, parses into its model."""
    from benchmarks.labels.pools import review_pool_declare
    from reviewapp.review.pools.selectors import pool_item_keys
    from tests.benchmarks.labels.fixtures import judge, random_grades, rerank_world
    from tests.grading.audit_support import audited_run, local_audit

    models = api.module("models")
    reviewers = [django_user_model.objects.get(username="api_reviewer"),
                 make_user(django_user_model, "api_reviewer_2", "reviewer")]
    run = rerank_world(seed=41, queries=8)
    pool = review_pool_declare(rerank_run=run, reviewers=reviewers).pool
    judge(pool, reviewers, random_grades(pool, seed=5))
    loaded, audited = audited_run(tmp_path)
    audit = local_audit(audited)
    item = pool_item_keys(pool=pool)[0].item_id
    sample, both = loaded.sample.pk, [loaded.gold.pk, loaded.noisy.pk]
    bootstrap = {"replicates": 1000, "seed": 3}

    calls = [
        ("stakeholder", "me.me_retrieve", {}, models.MeOut),
        ("stakeholder", "benchmarks.benchmarks_snapshots_list", {"limit": 2}, models.PaginatedSnapshotOutList),
        ("stakeholder", "benchmarks.benchmarks_provisions_list", {"limit": 5, "offset": 1},
         models.PaginatedProvisionOutList),
        ("stakeholder", "benchmarks.benchmarks_suites_list", {}, models.PaginatedSuiteOutList),
        ("stakeholder", "benchmarks.benchmarks_suites_retrieve", {"id": run.suite_id}, models.SuiteDetailOut),
        ("stakeholder", "benchmarks.benchmarks_retrieval_runs_list", {}, models.PaginatedRunOutList),
        ("stakeholder", "benchmarks.benchmarks_retrieval_runs_retrieve", {"id": run.retrieval_run_id},
         models.RunDetailOut),
        ("stakeholder", "benchmarks.benchmarks_rerank_runs_retrieve", {"id": run.pk}, models.RerankRunDetailOut),
        ("stakeholder", "benchmarks.benchmarks_reports_retrieval_retrieve", {"id": run.retrieval_run_id, **bootstrap},
         models.ReportOut),
        ("stakeholder", "benchmarks.benchmarks_reports_leaderboard_retrieve",
         {"id": run.retrieval_run_id, **bootstrap}, models.StatuteLeaderboardOut),
        ("stakeholder", "benchmarks.benchmarks_rerank_runs_human_metrics_retrieve", {"id": run.pk, **bootstrap},
         models.HumanMetricsOut),
        ("stakeholder", "benchmarks.benchmarks_rerank_runs_calibration_retrieve", {"id": run.pk, **bootstrap},
         models.CalibrationOut),
        ("stakeholder", "providers.providers_ledgers_retrieve", {"id": run.ledger_id}, models.LedgerOut),
        ("stakeholder", "cuad.cuad_dataset_retrieve", {"sample": sample}, models.DatasetOut),
        ("stakeholder", "cuad.cuad_runs_retrieve", {"id": loaded.gold.pk}, models.ExtractionRunOut),
        ("stakeholder", "cuad.cuad_scorecard_retrieve", {"sample": sample, "run": both}, models.ScorecardApiOut),
        ("stakeholder", "cuad.cuad_leaderboard_retrieve", {"sample": sample}, models.LeaderboardOut),
        ("stakeholder", "cuad.cuad_explorer_retrieve", {"sample": sample, "run": [loaded.noisy.pk]},
         models.ExplorerOut),
        ("stakeholder", "cuad.cuad_playground_retrieve", {"a": "the laws of Nevada", "b": "laws of Nevada"},
         models.PlaygroundOut),
        ("stakeholder", "cuad.cuad_audits_retrieve", {"id": audit.pk}, models.AuditReportOut),
        ("admin", "review.review_pools_progress_retrieve", {"pool_id": pool.public_id}, models.ProgressOut),
        ("admin", "review.review_pools_agreement_retrieve", {"pool_id": pool.public_id}, models.PoolAgreementOut),
        ("reviewer", "review.review_items_history_list", {"item_id": item}, list),
    ]
    for role, operation, kwargs, expected in calls:
        answer = api.call(role, operation, **kwargs)
        assert answer.status_code == HTTPStatus.OK, (operation, answer.content[:300])
        assert isinstance(answer.parsed, expected), (operation, type(answer.parsed))

    listed = api.call("stakeholder", "benchmarks.benchmarks_rerank_runs_review_pools_list", id=run.pk).parsed
    assert [p.public_id for p in listed] == [pool.public_id]
    audits = api.call("stakeholder", "cuad.cuad_audits_list").parsed
    assert [a.id for a in audits] == [audit.pk]
    pools = api.call("admin", "review.review_pools_list").parsed
    assert pool.public_id in [p.id for p in pools]
    exported = api.call("admin", "review.review_pools_judgments_retrieve", pool_id=pool.public_id,
                        pseudonymise=True).parsed
    assert exported and {row.additional_properties["status"] for row in exported} == {"complete"}
    qrels = api.call("admin", "review.review_pools_qrels_retrieve", pool_id=pool.public_id).parsed
    assert qrels and all(len(line.split()) == 4 for line in qrels.splitlines())
    assert isinstance(api.call("admin", "review.review_label_sources_list").parsed, list)
    posted = api.call("stakeholder", "cuad.cuad_playground_create", body=models.PlaygroundIn(a="x y", b="x"))
    assert posted.status_code == HTTPStatus.OK and posted.parsed.recall == 1.0
    suite_file = api.call("stakeholder", "benchmarks.benchmarks_suites_export_retrieve", id=run.suite_id, fmt="json")
    assert suite_file.status_code == HTTPStatus.OK and json.loads(suite_file.content)
    bad_page = api.call("stakeholder", "benchmarks.benchmarks_provisions_list", limit=0)
    assert bad_page.status_code == HTTPStatus.BAD_REQUEST and "limit" in bad_page.parsed.additional_properties
