"""The sweeper: under celery beat it requeues every running job whose heartbeat is stale, through its kind's own
takeover, so that no death of a worker needs an operator.

A rerank run stands in for every kind (the takeover is the same conditional UPDATE for extraction jobs and
audits); the real deaths of real workers, per kind, are in tests/trust/faults/test_faults_recovery.py.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankRun
from reviewapp.core import job_sweep, jobs
from reviewapp.core.jobs import job_kind_resume
from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run

NODE = "celery@box-1"


@pytest.fixture
def retrieval(db):
    return synthetic_retrieval_run()


def _run(retrieval, provider: str = "local") -> RerankRun:
    if provider == "local":
        return rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    RerankRun.objects.filter(pk=run.pk).update(provider=provider)  # only its queue is read here
    run.refresh_from_db()
    return run


def _running(run, *, age: float, token: str = "old", executions: int = 1) -> RerankRun:  # noqa: S107 - a claim token
    moment = timezone.now() - timedelta(seconds=age)
    RerankRun.objects.filter(pk=run.pk).update(status="running", claim_token=token, worker=f"{NODE}:4242",
                                               heartbeat_at=moment, started_at=moment, executions=executions)
    run.refresh_from_db()
    return run


def test_every_job_kind_is_registered_with_the_sweeper():
    labels = {kind.model._meta.label for kind in jobs.job_kinds()}
    assert labels == {"benchmarks.RerankRun", "grading.ConsoleJob", "grading.Audit"}


def test_the_sweeper_requeues_a_job_whose_heartbeat_is_stale_and_leaves_a_beating_one(
        retrieval, django_capture_on_commit_callbacks, caplog):
    dead = _running(_run(retrieval), age=31)  # the local model's stale timeout is 30 s
    alive = _running(_run(retrieval), age=5, token="alive")
    with django_capture_on_commit_callbacks() as sent:
        report = job_sweep.jobs_sweep()
    assert report.requeued == [f"benchmarks.RerankRun {dead.pk}"]
    # The log names the execution that was lost (read before the takeover cleared it), for the operator's record.
    assert f"had a stale heartbeat (worker {NODE}:4242); requeued" in caplog.text
    dead.refresh_from_db()
    alive.refresh_from_db()
    assert (dead.status, dead.claim_token, dead.worker) == ("queued", "", "")  # the dead execution writes nothing
    assert (alive.status, alive.claim_token) == ("running", "alive")
    assert len(sent) == 1  # one task, for the requeued run
    assert rerank.rerank_run_execute(run_id=dead.pk) == "done"
    dead.refresh_from_db()
    assert dead.executions == 2


def test_a_job_waiting_on_a_provider_is_given_the_longer_timeout(retrieval, settings):
    settings.JOB_STALE_SECONDS_REMOTE = 120
    waiting = _running(_run(retrieval, provider="anthropic"), age=60)
    assert job_sweep.jobs_sweep().requeued == []
    assert RerankRun.objects.get(pk=waiting.pk).status == "running"


def test_two_sweepers_that_judged_the_same_stale_job_requeue_it_once(retrieval, django_capture_on_commit_callbacks):
    run = _running(_run(retrieval), age=31)
    first, second = RerankRun.objects.get(pk=run.pk), RerankRun.objects.get(pk=run.pk)
    with django_capture_on_commit_callbacks() as sent:
        jobs.job_kind_resume(first, take_over=True)
        with pytest.raises(ValueError, match="changed meanwhile"):
            # read before the first takeover: its claim token no longer matches
            jobs.job_kind_resume(second, take_over=True)
    assert len(sent) == 1
    assert rerank.rerank_run_execute(run_id=run.pk) == "done"
    assert rerank.rerank_run_execute(run_id=run.pk) == ""  # the redelivered copy finds nothing to claim


def test_the_sweeper_never_asks_for_a_reattempt_of_paid_requests(retrieval):
    run = _running(_run(retrieval), age=31)
    RerankRun.objects.filter(pk=run.pk).update(reattempt_requested=True)  # the person's re-attempt was running
    job_sweep.jobs_sweep()
    assert RerankRun.objects.get(pk=run.pk).reattempt_requested is False


def test_a_job_whose_worker_died_in_every_execution_is_failed_with_the_reason_not_requeued(retrieval, settings):
    settings.JOB_SWEEP_MAX_EXECUTIONS = 3
    run = _running(_run(retrieval), age=31, executions=3)
    report = job_sweep.jobs_sweep()
    assert report.abandoned == [f"benchmarks.RerankRun {run.pk}"] and not report.requeued
    run.refresh_from_db()
    assert run.status == "failed" and run.finished_at is not None
    assert "worker was lost in each of 3 executions" in run.error and "resume it by hand" in run.error
    job_kind_resume(run, take_over=True, enqueue=False)  # a person still can
    assert RerankRun.objects.get(pk=run.pk).status == "queued"


def test_the_beat_schedule_runs_the_sweeper_and_a_lost_worker_returns_its_message(settings):
    from reviewapp.core.tasks import jobs_sweep  # autodiscovered by workers (reviewapp/celery.py)

    entry = settings.CELERY_BEAT_SCHEDULE["jobs-sweep"]
    assert entry["task"] == jobs_sweep.name
    assert entry["schedule"] == settings.JOB_SWEEP_SECONDS == 30
    assert entry["options"]["expires"] == 30  # a sweep that waited a whole interval is superseded
    assert settings.CELERY_TASK_ACKS_LATE and settings.CELERY_TASK_REJECT_ON_WORKER_LOST


def test_jobs_go_to_the_queue_of_their_worker_pool(retrieval, settings, monkeypatch,
                                                   django_capture_on_commit_callbacks):
    from benchmarks.rerank.tasks import rerank_run_execute

    queues: list[str] = []
    monkeypatch.setattr(rerank_run_execute, "apply_async", lambda args, queue, countdown=None: queues.append(queue))
    local, remote = _run(retrieval), _run(retrieval, provider="anthropic")
    with django_capture_on_commit_callbacks(execute=True):
        for run in (local, remote):
            jobs.job_enqueue(run)
        settings.JOB_QUEUE_LOCAL, settings.JOB_QUEUE_REMOTE = "local", "remote"
        for run in (local, remote):
            jobs.job_enqueue(run)
    default = settings.CELERY_TASK_DEFAULT_QUEUE
    assert queues == [default, default, "local", "remote"]


def test_every_job_kind_inherits_its_lifecycle_fields_and_polls_at_one_interval():
    from django.template.loader import get_template

    lifecycle = {"stage", "created_by", "created_at", "claim_token", "heartbeat_at", "queued_at", "sent_at"}
    assert lifecycle <= {f.name for f in jobs.TrackedJob._meta.fields}  # declared once, in core
    for kind in jobs.job_kinds():
        assert lifecycle <= {f.name for f in kind.model._meta.fields}, kind.model
    for page in ("cuad/job.html", "cuad/audit.html", "benchmarks/rerank_run.html"):
        source = get_template(page).template.source
        assert "hx-trigger" not in source and '{% include "_job_lifecycle.html#progress" %}' in source, page
    assert get_template("_job_lifecycle.html").template.source.count("hx-trigger") == 1
