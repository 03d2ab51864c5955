"""Recovery without an operator: a job whose worker dies is requeued by the sweeper under celery beat and
finishes, for every job kind and every way a worker dies.

With TEST_REAL_WORKER=1 (PostgreSQL + Redis in CI) this is a fault matrix of real processes: a beat sending the
sweeper every second, a surviving worker, and per cell a victim worker that is killed mid-job (SIGKILL of a solo
worker, SIGKILL of a prefork pool child, SIGTERM to every process of a prefork worker as a restart sends it, and a
job that outlives the broker's visibility timeout, whose message an idle worker takes and acknowledges, before
its solo worker is SIGKILLed). Stale timeout 3 s, sweep every 1 s, so each cell takes seconds; the time from the
death to the requeue and to the finished job is printed per cell. Otherwise (SQLite, eager tasks) the death is
made in this process and the sweeper is called as beat would call it.

Every cell: the job finishes (no person resumes it), no request reached the loopback provider twice, every
planned request has its receipt (answered, or disclosed 'unknown' if it was in flight at the death: paid
requests are never re-sent automatically), and a local-model run ends with no item unknown (it is recomputed).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankRun
from benchmarks.rerank.tasks import rerank_run_execute
from reviewapp.core.job_sweep import jobs_sweep
from reviewapp.providers import services as provider_services
from reviewapp.providers.loopback import LoopbackServer, default_responder
from reviewapp.providers.models import Receipt
from tests.conftest import REAL_WORKER, REPO_ROOT
from tests.helpers import wait_until
from tests.trust.faults.record import cell_record, sent_twice
from tests.trust.faults.test_faults_jobs import KEYLESS, KINDS, Kind, RerankKind, _kill_in_process, _reload
from tests.trust.private_servers import PrivateRedis

# RECOVERY_TIMEOUTS=production measures the matrix with the shipped timeouts (stale 30 s local / 120 s remote,
# a sweep every 30 s, 5 s of grace before an inspect takeover, a lost message re-sent after 30 s) for the README.
PRODUCTION = os.environ.get("RECOVERY_TIMEOUTS") == "production"
STALE_SECONDS = 3
SWEEP_SECONDS = 30 if PRODUCTION else 1
TIMEOUTS = ({"JOB_SWEEP_SECONDS": "30"} if PRODUCTION else
            {"JOB_STALE_SECONDS": str(STALE_SECONDS), "JOB_SWEEP_SECONDS": str(SWEEP_SECONDS),
             # An inspect takeover after 1 s of silence; a lost message re-sent after 2 s.
             "JOB_GONE_GRACE_SECONDS": "1", "JOB_RESEND_SECONDS": "2"})
WAIT = 400 if PRODUCTION else 60


class LocalRerankKind(RerankKind):
    """A rerank run on the local model: free to recompute, so a takeover must finish every item."""

    def create(self, tmp_path, url):
        from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run

        if not hasattr(self, "_retrieval"):
            self._retrieval = synthetic_retrieval_run(seed=29, ranking=6)
        return rerank.rerank_run_create(retrieval_run=self._retrieval, provider="local", enqueue=False)

    def complete(self, job):
        return job.status == "done" and all(row[1] == "graded" for row in self.results(job))


ALL_KINDS: dict[str, Kind] = {
    **KINDS, "rerank-local": LocalRerankKind("rerank-local", RerankRun, default_responder, rerank_run_execute)}


@pytest.fixture(autouse=True)
def _fresh_kinds():
    for kind in ALL_KINDS.values():
        for cached in ("_retrieval", "_loaded", "_run"):
            kind.__dict__.pop(cached, None)


@pytest.fixture
def keyless(settings):
    settings.PROVIDER_KEYS = dict(KEYLESS)


def _assert_recovered(kind: Kind, job, server: LoopbackServer) -> None:
    """Finished by itself after one takeover; nothing sent twice; every request accounted for."""
    job = _reload(kind, job)
    assert job.is_finished and job.executions >= 2, (job.status, job.executions, job.error)
    assert server.max_count_per_body <= 1  # no item sent twice to the provider
    latest: dict[tuple[int, str], str] = {}
    for receipt in Receipt.objects.filter(ledger_id__in=kind.ledger_ids(job)).order_by("seq"):
        latest[(receipt.ledger_id, receipt.request_key)] = receipt.status
    statuses = set(latest.values())
    if kind.name == "rerank-local":
        assert kind.complete(job), (job.status, job.error)  # recomputed: no item left unknown
        assert statuses == {"answered"}
        return
    assert statuses <= {"answered", "unknown"}  # an in-flight paid request is disclosed, never re-sent
    if "unknown" in statuses:  # every kind ends the same loss the same way: incomplete, with its finish command
        assert job.status == "failed" and job.error.startswith("incomplete: "), (job.status, job.error)
        assert "unknown" in job.error and "never re-sent automatically" in job.error and "To finish: " in job.error
    else:
        assert kind.complete(job), (job.status, job.error)


# --------------------------------------------------------------------------- in process (SQLite, eager tasks)


@pytest.mark.parametrize("name", list(ALL_KINDS))
def test_a_job_whose_executor_died_is_requeued_by_the_sweeper_and_finishes(
        name, transactional_db, keyless, tmp_path, settings):
    kind = ALL_KINDS[name]
    settings.JOB_STALE_SECONDS = 1
    with LoopbackServer(kind.responder) as server:
        job = kind.create(tmp_path, server.url)
        _kill_in_process(kind, job, after=2)
        assert _reload(kind, job).status == "running"
        assert jobs_sweep().requeued == []  # still within its stale timeout: left alone
        time.sleep(1.1)
        report = jobs_sweep()  # as beat sends it; eager: the requeued task runs at once
        assert report.requeued == [f"{kind.model._meta.label} {job.pk}"]
        _assert_recovered(kind, job, server)
        assert jobs_sweep().requeued == []  # finished: nothing more to sweep


def _outage_in_process(kind: Kind, job, *, after: int, error: Exception) -> None:
    """The database goes away while the executor records its ``after + 1``-th answer (a PostgreSQL restart)."""
    completions = []
    original = provider_services.receipt_complete

    def cut(**kwargs):
        completions.append(1)
        if len(completions) > after:
            raise error
        return original(**kwargs)

    provider_services.receipt_complete = cut
    try:
        kind.execute(job.pk)  # an outage is an interruption: nothing escapes, nothing is failed
    finally:
        provider_services.receipt_complete = original


OUTAGES = {
    "terminated": lambda: OperationalError("terminating connection due to administrator command"),
    "closed": lambda: InterfaceError("connection already closed"),
}


@pytest.mark.parametrize(("name", "outage"), [*((name, "terminated") for name in ALL_KINDS), ("extraction", "closed")])
def test_a_database_outage_mid_job_interrupts_it_and_the_sweeper_finishes_it(
        name, outage, transactional_db, keyless, tmp_path, settings):
    kind = ALL_KINDS[name]
    settings.JOB_STALE_SECONDS = 1
    with LoopbackServer(kind.responder) as server:
        job = kind.create(tmp_path, server.url)
        _outage_in_process(kind, job, after=2, error=OUTAGES[outage]())
        job = _reload(kind, job)
        # Not a verdict: still held and running, no error, so the sweeper resumes it like a dead worker's job.
        assert (job.status, job.error, job.finished_at) == ("running", "", None)
        time.sleep(1.1)
        assert jobs_sweep().requeued == [f"{kind.model._meta.label} {job.pk}"]
        _assert_recovered(kind, job, server)
        assert "Error" not in _reload(kind, job).error  # ended by its own work, not by the outage


if REAL_WORKER:
    del test_a_job_whose_executor_died_is_requeued_by_the_sweeper_and_finishes
    del test_a_database_outage_mid_job_interrupts_it_and_the_sweeper_finishes_it


# --------------------------------------------------------------------------- real workers (PostgreSQL + Redis)


class Process:
    """A Celery process of this test (worker or beat) with the short timeouts, in a process group of its own."""

    def __init__(self, info: dict, tmp_path, name: str, args: list[str], *, restart: bool = False, **env: str) -> None:
        self.log_path = tmp_path / f"{name}.log"
        self.log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        environment = {**os.environ, "DATABASE_URL": info["database_url"], "CELERY_TASK_ALWAYS_EAGER": "0",
                       **TIMEOUTS, **env}
        command = [sys.executable, "-m", "celery", "-A", "reviewapp", *args]
        if restart:  # as compose's restart policy: a process that exits is started again
            command = ["bash", "-c", f"while true; do {shlex.join(command)}; sleep 1; done"]
        self.process = subprocess.Popen(
            command, cwd=REPO_ROOT, env=environment, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @classmethod
    def worker(cls, info, tmp_path, name: str, *, pool: str, queue: str, concurrency: int = 1,
               restart: bool = False, **env) -> Process:
        return cls(info, tmp_path, name, ["worker", f"--pool={pool}", "-c", str(concurrency), "-Q", queue,
                                           "-n", f"{name}-{os.getpid()}@%h", "--without-gossip",
                                           "--without-mingle", "--without-heartbeat", "--loglevel=INFO"],
                   restart=restart, **env)

    def signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signum)

    def stop(self) -> None:
        self.signal_group(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.signal_group(signal.SIGKILL)
            self.process.wait(timeout=20)
        self.log.close()


@pytest.fixture(scope="module")
def recovery_queue() -> str:
    return f"recovery-{os.getpid()}"


@pytest.fixture(scope="module")
def _survivors(_worker_process, tmp_path_factory, recovery_queue):
    """The beat that sends the sweeper every second and a worker that runs it and the requeued jobs (started
    once for the module: every cell's job is requeued to their queue)."""
    folder = tmp_path_factory.mktemp("recovery")
    queue_env = {"CELERY_QUEUE": recovery_queue}
    beat = Process(_worker_process, folder, "beat", ["beat", "-s", str(folder / "beat-schedule"),
                                                     "--loglevel=INFO"], **queue_env)
    worker = Process.worker(_worker_process, folder, "survivor", pool="prefork", concurrency=2,
                            queue=recovery_queue, **queue_env)
    try:
        yield _worker_process
    finally:
        beat.stop()
        worker.stop()


@pytest.fixture
def survivors(_survivors, celery_worker):
    return _survivors


# Every kind meets a death in CI (about 15-20 s a cell on 2 busy cores); RECOVERY_MATRIX=full runs the ten cells
# measured for the README. The visibility cell waits on kombu's sweep of unacknowledged messages (every ~10 s, far
# later on a loaded machine: once it took over 60 s), so it is in the full matrix only, with a longer bound.
# "db-outage" is a PostgreSQL restart as the executor sees it: every connection to the test database but this
# process's is terminated (pg_terminate_backend, the same error as a restart: the shared server itself keeps
# running for everyone else).
# A real PostgreSQL restart of every kind (a private cluster) is in test_faults_restarts.py, so CI runs the
# terminated-connections cells in the full matrix only.
CELLS = [("rerank", "sigkill-solo"), ("rerank-local", "sigkill-child"), ("extraction", "sigterm"),
         ("audit", "sigkill-child")]
if os.environ.get("RECOVERY_MATRIX") == "full":
    CELLS += [("rerank", "visibility"), ("rerank", "sigkill-child"), ("rerank", "sigterm"),
              ("rerank-local", "sigkill-solo"), ("extraction", "sigkill-child"), ("audit", "sigkill-solo"),
              ("rerank", "db-outage"), ("audit", "db-outage"), ("rerank-local", "db-outage"),
              ("extraction", "db-outage")]


def _holder_pid(kind: Kind, job) -> int:
    worker = _reload(kind, job).worker
    return int(worker.split(" ")[0].rpartition(":")[2])


def _mid_job(kind: Kind, job) -> bool:
    ledgers = kind.ledger_ids(job)
    answered = Receipt.objects.filter(ledger_id__in=ledgers, status="answered").count()
    return answered >= (1 if kind.name == "rerank-local" else 2)


def _test_a_worker_death_is_recovered_by_the_sweeper_without_an_operator(
        name, death, survivors, keyless, tmp_path, capsys):
    kind = ALL_KINDS[name]
    victim_queue = f"victim-{name}-{death}-{os.getpid()}"
    solo = death in ("sigkill-solo", "visibility")
    env = {"CELERY_VISIBILITY_TIMEOUT": "2"} if death == "visibility" else {}
    helpers: list[Process] = []
    with LoopbackServer(kind.responder, latency=0.3) as server:
        job = kind.create(tmp_path, server.url)
        victim = Process.worker(survivors, tmp_path, f"victim-{death}", pool="solo" if solo else "prefork",
                                queue=victim_queue, **env)
        try:
            kind.task.apply_async(args=[job.pk], queue=victim_queue)
            kind.model.objects.filter(pk=job.pk).update(sent_at=timezone.now())  # as job_enqueue records it
            wait_until(lambda: _reload(kind, job).status == "running", timeout=WAIT, interval=0.05)
            if death == "visibility":
                # An idle worker on the same queue: the broker hands it the running job's unacknowledged message
                # once the visibility timeout passes; it finds the job beating, does nothing and acknowledges.
                helpers.append(Process.worker(survivors, tmp_path, "idle", pool="solo", queue=victim_queue, **env))
                wait_until(lambda: "nothing to claim" in helpers[0].log_path.read_text()
                           or "succeeded" in helpers[0].log_path.read_text(), timeout=240, interval=0.2)
                assert _reload(kind, job).status == "running" and _reload(kind, job).executions == 1
            wait_until(lambda: _mid_job(kind, job), timeout=60, interval=0.02)
            if death in ("sigkill-solo", "visibility"):
                os.kill(victim.process.pid, signal.SIGKILL)
            elif death == "sigkill-child":
                os.kill(_holder_pid(kind, job), signal.SIGKILL)
            elif death == "db-outage":
                _terminate_other_connections()
            else:  # a restart's SIGTERM reaches every process of the worker (systemd, a container's process group)
                victim.signal_group(signal.SIGTERM)
            died = time.monotonic()
            wait_until(lambda: _reload(kind, job).executions >= 2 or _reload(kind, job).is_finished,
                       timeout=WAIT, interval=0.05)
            requeued = time.monotonic() - died
            wait_until(lambda: _reload(kind, job).is_finished, timeout=WAIT + 30, interval=0.05)
            finished = time.monotonic() - died
        finally:
            victim.stop()
            for helper in helpers:
                helper.stop()
        _assert_recovered(kind, job, server)
        job = _reload(kind, job)
        unknown = Receipt.objects.filter(ledger_id__in=kind.ledger_ids(job), status="unknown").count()
        with capsys.disabled():
            print(f"\nrecovery {name} x {death}: death -> taken over {requeued:.1f} s, -> {job.status} "
                  f"{finished:.1f} s ({_timeouts()}); executions "
                  f"{job.executions}, sent twice 0, unknown receipts {unknown}")
    cell_record(f"{name} x {death}", timeouts=_timeouts(), takeover=requeued, finished=finished,
                sent_twice=sent_twice(server), state=final_state(kind, job))


def final_state(kind: Kind, job) -> str:
    """The job's end as the matrix shows it: its status, and for an incomplete one how many requests are unknown."""
    job = _reload(kind, job)
    unknown = Receipt.objects.filter(ledger_id__in=kind.ledger_ids(job), status="unknown").count()
    if job.status == "failed" and job.error.startswith("incomplete: "):
        return f"failed, incomplete: {unknown} unknown, finish command shown"
    return job.status if not unknown else f"{job.status}, {unknown} unknown"


def _timeouts() -> str:
    if PRODUCTION:
        return "production timeouts: stale 30 s local / 120 s remote, sweep 30 s, grace 5 s, resend 30 s"
    return f"stale {STALE_SECONDS} s, sweep {SWEEP_SECONDS} s, grace 1 s, resend 2 s"


def _terminate_other_connections() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        assert cursor.fetchone()[0] >= 1  # at least the executor's


def _test_a_job_queued_while_the_broker_was_down_is_sent_by_the_sweeper(survivors, keyless, tmp_path, capsys):
    """The launch committed, its on-commit send failed (the broker was down): no message exists. The sweeper
    sends it once the broker answers, and it runs once."""
    kind = ALL_KINDS["rerank"]
    with LoopbackServer(kind.responder, latency=0.05) as server:
        job = kind.create(tmp_path, server.url)  # queued, no message, sent_at empty
        launched = time.monotonic()
        wait_until(lambda: _reload(kind, job).status != "queued", timeout=WAIT, interval=0.05)
        sent = time.monotonic() - launched
        job = wait_until(lambda: (j := _reload(kind, job)).is_finished and j, timeout=WAIT + 30, interval=0.05)
        finished = time.monotonic() - launched
    assert kind.complete(job) and job.executions == 1, (job.status, job.error)
    assert server.max_count_per_body == 1
    with capsys.disabled():
        print(f"\nrecovery rerank x message lost at launch: -> sent {sent:.1f} s, -> {job.status} {finished:.1f} s "
              f"({_timeouts()}); executions 1, sent twice 0")
    cell_record("rerank x message lost at launch", timeouts=_timeouts(), takeover=sent, finished=finished,
                sent_twice=sent_twice(server), state=final_state(kind, job), note="takeover = sent by the sweeper")


if REAL_WORKER and os.environ.get("REDIS_URL"):
    test_a_job_queued_while_the_broker_was_down_is_sent_by_the_sweeper = (
        _test_a_job_queued_while_the_broker_was_down_is_sent_by_the_sweeper)
    test_a_worker_death_is_recovered_by_the_sweeper_without_an_operator = pytest.mark.parametrize(
        ("name", "death"), CELLS)(_test_a_worker_death_is_recovered_by_the_sweeper_without_an_operator)


# --------------------------------------------------------------------------- Redis down mid-run (a private Redis)


REDIS_DOWN_SECONDS = float(os.environ.get("RECOVERY_REDIS_DOWN_SECONDS", "20"))


def _test_redis_down_mid_run_and_a_launch_meanwhile_finish_by_themselves(
        celery_worker, keyless, tmp_path, capsys, settings, admin_user_):
    """The broker (and cache) goes away for REDIS_DOWN_SECONDS while a job runs, losing every message, and jobs
    are launched meanwhile. All finish with no operator and nothing sent twice: the running one keeps its claim
    and finishes; one whose launch committed but whose message could not be sent is sent by the sweeper once
    Redis answers again; and a launch through the API while the broker is down answers 503 with Retry-After and
    saves nothing, so the client's retry after the outage launches it, and it finishes."""
    from django.test import Client

    from benchmarks.rerank.models import RerankRun

    kind = ALL_KINDS["rerank"]
    broker = PrivateRedis(tmp_path)
    broker.start()
    queue = f"redis-outage-{os.getpid()}"
    env = {"REDIS_URL": broker.url, "CELERY_QUEUE": queue}
    # Under the restart policy compose gives them: a worker whose broker goes away finishes its running task and
    # exits (kombu 5.7 fails restoring unacknowledged messages to a broker that is gone), and is started again.
    processes = [Process(celery_worker, tmp_path, "outage-beat", ["beat", "--loglevel=INFO"], restart=True, **env),
                 Process.worker(celery_worker, tmp_path, "outage-worker", pool="prefork", concurrency=2, queue=queue,
                                restart=True, **env)]
    client = Client(raise_request_exception=False)
    client.force_login(admin_user_)
    try:
        # A server per job: the two runs grade the same candidates, so their request bodies are the same.
        with LoopbackServer(kind.responder, latency=0.5) as server, LoopbackServer(kind.responder) as other:
            running = kind.create(tmp_path, server.url)  # no message: the sweeper sends it (as any lost one)
            launch = {"retrieval_run": kind._retrieval.pk, "provider": "local"}
            wait_until(lambda: _mid_job(kind, running), timeout=WAIT, interval=0.05)
            broker.kill()
            fault, fault_at = time.monotonic(), timezone.now()
            launched = kind.create(tmp_path, other.url)  # its on-commit send would fail: no message, no sent_at
            # This process's broker check looks where the processes' broker is (its tasks still go to the suite's
            # broker, where the suite's worker takes them: the API's retry is run there).
            settings.REDIS_URL = broker.url
            before = RerankRun.objects.count()
            refused = client.post("/api/v1/benchmarks/rerank-runs/", launch, content_type="application/json")
            assert refused.status_code == 503 and refused["Retry-After"], refused.content
            assert b"broker" in refused.content and RerankRun.objects.count() == before  # nothing saved
            time.sleep(max(0.0, REDIS_DOWN_SECONDS - (time.monotonic() - fault)))
            broker.start()
            retried = wait_until(lambda: (r := client.post("/api/v1/benchmarks/rerank-runs/", launch,
                                                           content_type="application/json")).status_code == 202 and r,
                                 timeout=60, interval=1.0)
            api_run = RerankRun.objects.get(pk=retried.json()["id"])
            for job in (running, launched, api_run):
                wait_until(lambda job=job: _reload(kind, job).is_finished, timeout=WAIT + 30, interval=0.05)
            finished = time.monotonic() - fault
            # Each job's own end (they are awaited one after the other), from its finished_at.
            done = {job.pk: (_reload(kind, job).finished_at - fault_at).total_seconds()
                    for job in (running, launched, api_run)}
    finally:
        for process in processes:
            process.stop()
        broker.kill()
    for job in (running, launched):
        job = _reload(kind, job)
        assert kind.complete(job) and job.executions == 1, (job.pk, job.status, job.executions, job.error)
    api_run = _reload(kind, api_run)
    assert api_run.status == "done" and api_run.executions == 1, (api_run.status, api_run.error)
    assert server.max_count_per_body == 1 and other.max_count_per_body == 1  # nothing sent twice
    with capsys.disabled():
        print(f"\nrecovery rerank x Redis down {REDIS_DOWN_SECONDS:.0f} s mid-run, a launch meanwhile: fault -> all "
              f"done {finished:.1f} s ({_timeouts()}); running job not interrupted (1 execution), sent twice 0; "
              "the API launch answered 503 and its retry ran")
    cell_record(f"rerank x Redis down {REDIS_DOWN_SECONDS:.0f} s mid-run", timeouts=_timeouts(), takeover=None,
                finished=done[running.pk], sent_twice=sent_twice(server), state=final_state(kind, running),
                note="not interrupted: the running job keeps its claim (1 execution)")
    cell_record("rerank x launched while Redis is down (commit, message lost)", timeouts=_timeouts(),
                takeover=None, finished=done[launched.pk], sent_twice=sent_twice(other),
                state=final_state(kind, launched), note="sent by the sweeper once Redis answers")
    cell_record("rerank-local x API launch while Redis is down", timeouts=_timeouts(), takeover=None,
                finished=done[api_run.pk], sent_twice=0, state=final_state(ALL_KINDS["rerank-local"], api_run),
                note="503 + Retry-After, nothing saved; the client's retry after the outage ran it")


if REAL_WORKER and os.environ.get("REDIS_URL"):
    test_redis_down_mid_run_and_a_launch_meanwhile_finish_by_themselves = (
        _test_redis_down_mid_run_and_a_launch_meanwhile_finish_by_themselves)
