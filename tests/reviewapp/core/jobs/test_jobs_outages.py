"""Outages that are not worker deaths: a job's row and its message never disagree for good, a lost connection
interrupts a job instead of failing it, the sweeper takes over an execution that ``celery inspect`` shows gone
at its next sweep, and pages and the API answer 503 with the reason when Redis is unreachable.

A rerank run stands in for every kind here (the outbox and the takeover are core's); each kind's interruption by
a lost database or broker connection is in tests/trust/faults/test_faults_outages.py.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankRun
from benchmarks.rerank.tasks import rerank_run_execute
from reviewapp.core import job_sweep, jobs
from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run

NODE = "celery@box-1"
# Nothing listens on port 1: a connection is refused at once.
DOWN = "redis://127.0.0.1:1/0"


@pytest.fixture
def retrieval(db):
    return synthetic_retrieval_run()


@pytest.fixture
def sent(monkeypatch) -> list[int]:
    """Messages that reached the broker (the task's pk), instead of running the task."""
    pks: list[int] = []
    monkeypatch.setattr(rerank_run_execute, "apply_async", lambda args, queue, countdown=None: pks.append(args[0]))
    return pks


def _queued(retrieval, *, age: float, sent_age: float | None = None) -> RerankRun:
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    now = timezone.now()
    RerankRun.objects.filter(pk=run.pk).update(
        queued_at=now - timedelta(seconds=age),
        sent_at=None if sent_age is None else now - timedelta(seconds=sent_age))
    run.refresh_from_db()
    return run


def _running(retrieval, *, age: float) -> RerankRun:
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    moment = timezone.now() - timedelta(seconds=age)
    RerankRun.objects.filter(pk=run.pk).update(status="running", claim_token="old", worker=f"{NODE}:4242",
                                               heartbeat_at=moment, started_at=moment, executions=1)
    run.refresh_from_db()
    return run


# --------------------------------------------------------------------------- sent or swept


def test_a_queued_job_whose_message_never_reached_the_broker_is_sent_by_the_sweeper_once(
        retrieval, sent, django_capture_on_commit_callbacks):
    lost = _queued(retrieval, age=31)  # queued while the broker was down: no message, no sent_at
    recent = _queued(retrieval, age=5)  # its on-commit send may still be under way
    delivered = _queued(retrieval, age=120, sent_age=119)  # its message is on the broker
    with django_capture_on_commit_callbacks(execute=True):
        report = job_sweep.jobs_sweep()
    assert report.resent == [f"benchmarks.RerankRun {lost.pk}"]
    assert sent == [lost.pk]
    lost.refresh_from_db()
    assert lost.status == "queued" and lost.sent_at is not None and lost.queued_at > timezone.now() - timedelta(5)
    with django_capture_on_commit_callbacks(execute=True):
        assert job_sweep.jobs_sweep().resent == []  # sent now: the next sweep leaves it to its message
    assert sent == [lost.pk]
    assert {r.pk for r in (recent, delivered)} & set(sent) == set()


def test_a_message_sent_long_ago_of_a_job_still_queued_is_sent_again(retrieval, sent, settings,
                                                                    django_capture_on_commit_callbacks):
    settings.JOB_RESEND_SENT_SECONDS = 600
    forgotten = _queued(retrieval, age=700, sent_age=650)  # a broker restarted without its data
    with django_capture_on_commit_callbacks(execute=True):
        assert job_sweep.jobs_sweep().resent == [f"benchmarks.RerankRun {forgotten.pk}"]
    assert sent == [forgotten.pk]


def test_a_send_refused_after_the_commit_leaves_the_job_queued_for_the_sweeper(
        retrieval, monkeypatch, django_capture_on_commit_callbacks):
    def refused(*args, **kwargs):
        raise BrokerError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(rerank_run_execute, "apply_async", refused)
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    with django_capture_on_commit_callbacks(execute=True):
        jobs.job_enqueue(run)  # a resume or the sweeper: the row is written already; nothing raises
    run.refresh_from_db()
    assert run.status == "queued" and run.sent_at is None


def test_a_confirmed_send_is_recorded(retrieval, sent, django_capture_on_commit_callbacks):
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    with django_capture_on_commit_callbacks(execute=True):
        jobs.job_enqueue(run)
    run.refresh_from_db()
    assert sent == [run.pk] and run.sent_at is not None
    RerankRun.objects.filter(pk=run.pk).update(queued_at=timezone.now() - timedelta(seconds=60))  # due, if unsent
    with django_capture_on_commit_callbacks(execute=True):
        assert job_sweep.jobs_sweep().resent == []  # confirmed: not sent again
    assert sent == [run.pk]


@pytest.fixture
def broker_down(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.REDIS_URL = DOWN


def _launch_form(retrieval) -> dict:
    return {"retrieval_run": retrieval.pk, "provider": "local", "model_id": "", "method": "",
            "question_version": "statute-relevance-v1", "candidates_per_request": 4, "max_requests": 272,
            "max_input_tokens": 2_000_000}


def test_a_launch_while_the_broker_is_down_answers_503_with_the_reason_and_saves_nothing(
        retrieval, admin_client_, broker_down):
    from reviewapp.providers.models import Ledger

    ledgers = Ledger.objects.count()
    page = admin_client_.post("/benchmarks/rerank/new/", _launch_form(retrieval))
    assert page.status_code == 503 and page["Retry-After"]
    assert "task broker is unreachable" in page.content.decode() and "nothing was launched" in page.content.decode()
    api = admin_client_.post("/api/v1/benchmarks/rerank-runs/", {"retrieval_run": retrieval.pk, "provider": "local"},
                             content_type="application/json")
    assert api.status_code == 503
    (error,) = api.json()["errors"]
    assert "task broker is unreachable" in error
    assert not RerankRun.objects.exists() and Ledger.objects.count() == ledgers  # nothing half-written


# --------------------------------------------------------------------------- prompt takeover


@pytest.mark.parametrize(("answer", "age", "taken"), [
    ({NODE: []}, 10, True),  # its node answers without it: gone (a killed child; an outage stopped it)
    ({NODE: [{"worker_pid": 4242}]}, 10, False),  # its node runs it
    (None, 10, False),  # nobody answered (a paused node): only the heartbeat can tell
    ({NODE: []}, 2, False),  # it has just started: the inspect reply may not list it yet
])
def test_the_sweeper_takes_over_at_once_a_job_whose_node_no_longer_runs_it(
        retrieval, monkeypatch, django_capture_on_commit_callbacks, answer, age, taken):
    # Asked twice: by the sweep (is the job gone?) and by the takeover it then makes (still gone?).
    monkeypatch.setattr(job_sweep, "celery_active", lambda timeout=None: answer)
    monkeypatch.setattr(jobs, "celery_active", lambda timeout=None: answer)
    run = _running(retrieval, age=age)  # well within the local model's 30 s stale timeout
    with django_capture_on_commit_callbacks():
        report = job_sweep.jobs_sweep()
    run.refresh_from_db()
    assert (report.requeued == [f"benchmarks.RerankRun {run.pk}"]) is taken
    assert run.status == ("queued" if taken else "running")


# --------------------------------------------------------------------------- Redis down: 503, not 500


@pytest.fixture
def cache_down(settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": DOWN,
                                   "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1}}}
    settings.REDIS_URL = DOWN


def test_a_token_call_with_redis_down_answers_503_naming_it(admin_user_, client, cache_down):
    from reviewapp.core.auth.credentials import api_token_create

    key = api_token_create(user=admin_user_).key
    response = client.get("/api/v1/benchmarks/rerank-runs/", HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 503 and response["Retry-After"]
    (error,) = response.json()["errors"]
    assert "Redis" in error and "unreachable" in error


def test_sign_in_with_redis_down_answers_503_naming_it(admin_user_, client, cache_down):
    response = client.post("/accounts/login/", {"username": admin_user_.username, "password": "whatever-it-is"})
    assert response.status_code == 503
    assert "Redis" in response.content.decode() and "try again" in response.content.decode()


# --------------------------------------------------------------------------- beat without var/


def test_beat_starts_when_its_old_schedule_file_cannot_be_written(tmp_path):
    from celery.beat import Service

    from reviewapp.celery import app

    blocker = tmp_path / "var"
    blocker.write_text("a file where a folder should be: nothing can be created below it (as in a full var/)")
    # As `celery beat -s <file>` builds it (celery.apps.beat.Beat): the scheduler class is the app's setting.
    service = Service(app=app, scheduler_cls=app.conf.beat_scheduler,
                      schedule_filename=str(blocker / "celerybeat-schedule"))
    scheduler = service.get_scheduler()  # the shelve-backed scheduler opened its file here and died
    assert "jobs-sweep" in scheduler.schedule
    assert not list(tmp_path.glob("**/celerybeat-schedule*"))


def test_beat_and_workers_load_their_settings_when_var_cannot_be_written(tmp_path):
    """The settings created var/static at import: on a full or read-only var/ every process of the project died
    before beat could send a single sweep. (The real processes on a full filesystem: test_faults_restarts.py.)"""
    import os
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    blocker = tmp_path / "var"
    blocker.write_text("a file where a folder should be: nothing can be created below it (as in a full var/)")
    # As deployed (compose): the database and the broker are servers, only caches and static files are in var/.
    # Loading the settings connects to neither.
    env = {**os.environ, "VAR_DIR": str(blocker), "DJANGO_SETTINGS_MODULE": "reviewapp.settings",
           "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/unused", "REDIS_URL": "redis://127.0.0.1:6379/0"}
    env.pop("STATIC_ROOT", None)
    loaded = subprocess.run([sys.executable, "-c", "import django; django.setup(); from django.conf import settings; "
                             "print(settings.STATIC_ROOT)"], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert loaded.stdout.strip() == str(blocker / "static")
