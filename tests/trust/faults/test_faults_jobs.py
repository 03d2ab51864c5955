"""Every kind of tracked job (rerank run, CUAD extraction job, CUAD audit) through four faults of its worker:

- SIGKILL with requests in flight, then a takeover;
- SIGSTOP, a takeover and a new execution elsewhere, then SIGCONT of the paused one;
- the same task delivered twice;
- a budget raised (by the command line the failure message prints) to re-attempt the unknown requests.

Each ends with every request answered exactly once (one answered receipt per request, and the loopback server
saw each body no more often than the ledger has receipts for it), results identical to an uninterrupted run on a
second loopback server, and a finished status that nothing overwrites.

With TEST_REAL_WORKER=1 (PostgreSQL + Redis in CI) these are real worker processes of our own, on queues of their
own, signalled for real; the takeover asks ``celery inspect`` (a killed pool child's node answers without the job:
taken over at once) or waits for the heartbeat (a paused node does not answer). The resumed work goes to the
session's shared worker. Otherwise the same faults are made in this process: a BaseException where SIGKILL would
land, and a pause that is a thread blocked in its provider request while another execution takes over.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankRun
from benchmarks.rerank.tasks import rerank_run_execute
from grading.audits import services as audit_svc
from grading.audits import tasks as audit_tasks
from grading.audits.judging.judges import parse_choice
from grading.audits.models import Audit, AuditVerdict
from grading.runs import jobs as console
from grading.runs import tasks
from grading.runs.models import ConsoleJob
from reviewapp.core.jobs import is_stale, job_kind_resume
from reviewapp.core.records.hashing import canonical_json, sha256_hex
from reviewapp.jobs.controls import job_finish_command
from reviewapp.providers import services as provider_services
from reviewapp.providers.loopback import LoopbackServer, default_responder
from reviewapp.providers.models import BudgetRaise, Ledger, Receipt
from tests.conftest import REAL_WORKER, REPO_ROOT
from tests.helpers import Gate, wait_until
from tests.trust.faults.test_faults_workers import _quotes, _verdicts

KEYLESS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}


class SimulatedKill(BaseException):
    """Not an Exception: nothing in the executors may catch it, as nothing can catch SIGKILL."""


# --------------------------------------------------------------------------- the three kinds


@dataclass
class Kind:
    name: str
    model: Any
    responder: Any
    task: Any

    def create(self, tmp_path, url: str):
        raise NotImplementedError

    def execute(self, pk: int) -> None:
        raise NotImplementedError

    def resume(self, job, *, worker_lost: bool) -> None:
        raise NotImplementedError

    def finish_command(self, job) -> str:
        raise NotImplementedError

    def ledger_ids(self, job) -> list[int]:
        raise NotImplementedError

    def results(self, job) -> list:
        raise NotImplementedError

    def complete(self, job) -> bool:
        raise NotImplementedError


class RerankKind(Kind):
    def create(self, tmp_path, url):
        from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run

        if not hasattr(self, "_retrieval"):
            self._retrieval = synthetic_retrieval_run(seed=23)
        run = rerank.rerank_run_create(retrieval_run=self._retrieval, provider="openai_compatible", model_id="loop/m",
                                       base_url=url + "/v1", concurrency=2, enqueue=False)
        # Exactly one request per planned request: a re-attempt needs an explicit raise.
        Ledger.objects.filter(pk=run.ledger_id).update(max_requests=run.requests_planned)
        return run

    def execute(self, pk):
        rerank.rerank_run_execute(run_id=pk)

    def resume(self, job, *, worker_lost):
        job_kind_resume(job, take_over=True, enqueue=REAL_WORKER, force=worker_lost)

    def finish_command(self, job):
        return job_finish_command(RerankRun.objects.get(pk=job.pk))

    def ledger_ids(self, job):
        return [job.ledger_id]

    def results(self, job):
        return [(g.candidate_id, g.status, g.grade, g.p0, g.p1, g.p2, g.p3, g.p_useful)
                for g in rerank.rerank_run_grades(run=job)]

    def complete(self, job):
        return job.status == "done" and all(row[1] == "graded" for row in self.results(job))


class ExtractionKind(Kind):
    def create(self, tmp_path, url):
        from tests.grading.console_support import load

        if not hasattr(self, "_loaded"):
            self._loaded = load(tmp_path)
        job = console.extraction_job_create(sample=self._loaded.sample, provider="openai_compatible",
                                            model_id="loop/x", base_url=url, queue=False)
        Ledger.objects.filter(pk=job.ledger_id).update(concurrency=2)
        return job

    def execute(self, pk):
        console.job_extract_execute(job_id=pk)

    def resume(self, job, *, worker_lost):
        job_kind_resume(job, take_over=True, force=worker_lost, enqueue=REAL_WORKER)

    def finish_command(self, job):
        return job_finish_command(ConsoleJob.objects.get(pk=job.pk))

    def ledger_ids(self, job):
        return [job.ledger_id]

    def results(self, job):
        job = ConsoleJob.objects.get(pk=job.pk)
        return [job.run.content_sha256, *job.run.extractions.order_by("position").values_list(
            "text", "best_f1", "grounding")] if job.run_id else []

    def complete(self, job):
        return job.status == "done" and job.done == job.total


class AuditKind(Kind):
    def create(self, tmp_path, url):
        from tests.grading.audit_support import audited_run

        if not hasattr(self, "_run"):
            self._loaded, self._run = audited_run(tmp_path, extra=4)
        a = parse_choice("openai_compatible:judge/model-a", base_url=url)
        b = parse_choice("openai_compatible:judge/model-b", base_url=url)
        audit, created = audit_svc.audit_create(run=self._run, sample=self._loaded.sample, judge_a=a, judge_b=b,
                                                queue=False)
        assert created
        Ledger.objects.filter(pk__in=self.ledger_ids(audit)).update(concurrency=2)
        return audit

    def execute(self, pk):
        audit_svc.audit_execute(audit_id=pk)

    def resume(self, job, *, worker_lost):
        job_kind_resume(job, take_over=True, force=worker_lost, enqueue=REAL_WORKER)

    def finish_command(self, job):
        return job_finish_command(Audit.objects.get(pk=job.pk))

    def ledger_ids(self, job):
        return list(job.judges.values_list("ledger_id", flat=True))

    def results(self, job):
        return list(AuditVerdict.objects.filter(candidate__audit_id=job.pk)
                    .order_by("candidate__position", "judge__slot")
                    .values_list("candidate__position", "judge__slot", "verdict", "reason"))

    def complete(self, job):
        return job.status == "done" and len(self.results(job)) == 2 * job.n_candidates


KINDS = {
    "rerank": RerankKind("rerank", RerankRun, default_responder, rerank_run_execute),
    "extraction": ExtractionKind("extraction", ConsoleJob, _quotes, tasks.extract_run),
    "audit": AuditKind("audit", Audit, _verdicts, audit_tasks.audit_run),
}


# --------------------------------------------------------------------------- helpers


def _answered(ledger_ids) -> int:
    return Receipt.objects.filter(ledger_id__in=list(ledger_ids), status="answered").count()


def _in_flight(ledger_ids) -> bool:
    return Receipt.objects.filter(ledger_id__in=list(ledger_ids), status="sent").exists()


def _reload(kind: Kind, job):
    return kind.model.objects.get(pk=job.pk)


def _finished(kind: Kind, job, timeout: float = 60):
    return wait_until(lambda: (j := _reload(kind, job)).is_finished and j, timeout=timeout)


def _pid(job) -> int:
    return int(job.worker.split(" ")[0].rpartition(":")[2])


class Worker:
    """A Celery worker process of this test, on a queue of its own."""

    def __init__(self, info: dict, tmp_path, name: str, *, pool: str = "solo", queue: str = "") -> None:
        self.queue = queue or f"faults-{name}-{os.getpid()}"
        self.log = open(tmp_path / f"{name}.log", "w")  # noqa: SIM115 - closed in stop()
        env = {**os.environ, "DATABASE_URL": info["database_url"], "CELERY_TASK_ALWAYS_EAGER": "0"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "reviewapp", "worker", f"--pool={pool}", "-c", "1",
             "-Q", self.queue, "-n", f"{name}-{os.getpid()}@%h", "--without-gossip", "--without-mingle",
             "--without-heartbeat"],
            cwd=REPO_ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )

    def send(self, task, pk: int) -> None:
        task.apply_async(args=[pk], queue=self.queue)

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGCONT)
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=20)
        self.log.close()


def _kill_in_process(kind: Kind, job, after: int) -> None:
    """Stop the executor abruptly after ``after`` completed receipts, leaving a request in flight."""
    completions = []
    original = provider_services.receipt_complete

    def dying(**kwargs):
        completions.append(1)
        if len(completions) > after:
            raise SimulatedKill  # the answer arrived; the process died before recording it
        return original(**kwargs)

    provider_services.receipt_complete = dying
    try:
        with contextlib.suppress(SimulatedKill):
            kind.execute(job.pk)
    finally:
        provider_services.receipt_complete = original


def _finish_by_its_command(kind: Kind, job, *, expect_raise: bool | None = None):
    """Run exactly the command line the job's failure shows, then wait for the job to end."""
    job = _reload(kind, job)
    command = kind.finish_command(job)
    if not command:
        return job
    if expect_raise is not None:
        assert ("--add-requests" in command) == expect_raise, command
    argv = shlex.split(command)
    assert argv[:4] == ["python", "manage.py", "finish_job", kind.name]
    with contextlib.suppress(Exception):  # a command whose run ends failed exits non-zero; checked below
        call_command(*argv[2:], *([] if REAL_WORKER or kind.name == "rerank" else ["--inline"]))
    if kind.name == "rerank" and not REAL_WORKER:
        kind.execute(job.pk)  # eager: queued on commit already; a second call finds nothing
    return _finished(kind, job)


def _assert_exactly_once_and_identical(kind: Kind, job, server: LoopbackServer, tmp_path) -> None:
    job = _reload(kind, job)
    assert kind.complete(job), (job.status, job.error)
    ledgers = kind.ledger_ids(job)
    receipts = list(Receipt.objects.filter(ledger_id__in=ledgers))
    answered: dict[tuple[int, str], int] = {}
    attempts: dict[str, int] = {}
    for receipt in receipts:
        if receipt.status == "answered":
            answered[(receipt.ledger_id, receipt.request_key)] = answered.get(
                (receipt.ledger_id, receipt.request_key), 0) + 1
        digest = sha256_hex(canonical_json(receipt.request_body))
        attempts[digest] = attempts.get(digest, 0) + 1
    assert set(answered.values()) == {1}  # every request answered exactly once
    assert len(answered) == len({(r.ledger_id, r.request_key) for r in receipts})
    assert set(server.counts) <= set(attempts)
    assert all(sent <= attempts[digest] for digest, sent in server.counts.items())
    with LoopbackServer(kind.responder) as reference_server:
        reference = kind.create(tmp_path, reference_server.url)
        kind.execute(reference.pk)
        reference = _reload(kind, reference)
        assert kind.complete(reference), reference.error
    assert kind.results(job) == kind.results(reference)


def _still(kind: Kind, job, seconds: float = 3.0) -> None:
    """The finished status, its time and the receipts stay as they are (nothing overwrites them)."""
    before = _reload(kind, job)
    receipts = sorted(Receipt.objects.filter(ledger_id__in=kind.ledger_ids(job)).values_list("id", "status"))
    time.sleep(seconds)
    after = _reload(kind, job)
    assert (after.status, after.finished_at, after.executions, after.error) == (
        before.status, before.finished_at, before.executions, before.error)
    assert sorted(Receipt.objects.filter(ledger_id__in=kind.ledger_ids(job)).values_list("id", "status")) == receipts


@pytest.fixture(autouse=True)
def _fresh_kinds():
    """Each test builds its own data (the database is emptied between tests)."""
    for kind in KINDS.values():
        for cached in ("_retrieval", "_loaded", "_run"):
            kind.__dict__.pop(cached, None)


@pytest.fixture
def keyless(settings):
    settings.PROVIDER_KEYS = dict(KEYLESS)


# --------------------------------------------------------------------------- SIGKILL with requests in flight


@pytest.mark.parametrize("name", list(KINDS))
def test_a_worker_killed_with_requests_in_flight_is_taken_over_and_ends_exactly_once(
        name, celery_worker, keyless, tmp_path):
    kind = KINDS[name]
    with LoopbackServer(kind.responder, latency=0.3) as server:
        job = kind.create(tmp_path, server.url)
        ledgers = kind.ledger_ids(job)
        if REAL_WORKER:
            # A prefork pool: the SIGKILLed child is replaced and its node still answers `celery inspect`,
            # without the job, so the takeover needs no heartbeat timeout (the remote one is minutes).
            worker = Worker(celery_worker, tmp_path, f"kill-{name}", pool="prefork")
            try:
                worker.send(kind.task, job.pk)
                wait_until(lambda: _answered(ledgers) >= 2 and _in_flight(ledgers), timeout=60, interval=0.05)
                os.kill(_pid(_reload(kind, job)), signal.SIGKILL)
                # celery inspect: the node answers and no longer runs it (once it noticed its child died).
                wait_until(lambda: _try_resume(kind, job), timeout=20, interval=0.5)
                assert _reload(kind, job).status in ("queued", "running")
            finally:
                worker.stop()
        else:
            _kill_in_process(kind, job, after=2)
            assert _in_flight(ledgers)
            kind.resume(_reload(kind, job), worker_lost=True)
            kind.execute(job.pk)
        job = _finished(kind, job)
        assert _reload(kind, job).executions == 2  # taken over long before the stale timeout (minutes)
        assert server.max_count_per_body == 1  # nothing sent twice by the takeover
        job = _finish_by_its_command(kind, job)
        _still(kind, job, seconds=1.0)
        _assert_exactly_once_and_identical(kind, job, server, tmp_path)


# --------------------------------------------------------------------------- SIGSTOP, takeover, SIGCONT


@pytest.mark.parametrize("name", list(KINDS))
def test_a_paused_worker_taken_over_and_continued_writes_nothing(name, celery_worker, keyless, tmp_path, settings):
    kind = KINDS[name]
    gate = Gate(kind.responder, first=3, last=3, timeout=60)  # its 3rd request
    with LoopbackServer(gate if not REAL_WORKER else kind.responder, latency=0.3) as server:
        job = kind.create(tmp_path, server.url)
        ledgers = kind.ledger_ids(job)
        Ledger.objects.filter(pk__in=ledgers).update(concurrency=1)  # paused means: nothing else moves
        settings.JOB_STALE_SECONDS = 2  # this process judges staleness; the paused node will not answer inspect
        if REAL_WORKER:
            worker = Worker(celery_worker, tmp_path, f"pause-{name}")
            try:
                worker.send(kind.task, job.pk)
                wait_until(lambda: _answered(ledgers) >= 2 and _in_flight(ledgers), timeout=60, interval=0.05)
                os.kill(worker.process.pid, signal.SIGSTOP)
                wait_until(lambda: is_stale(_reload(kind, job)), timeout=30)
                # A node paused inside its receipt transaction holds the row: the takeover skips it; try again.
                wait_until(lambda: _try_resume(kind, job), timeout=30, interval=0.5)
                job = _finished(kind, job)
                os.kill(worker.process.pid, signal.SIGCONT)
                _still(kind, job, seconds=3.0)  # the continued execution lost its claim: it writes nothing
            finally:
                worker.stop()
        else:
            old = threading.Thread(target=_execute_in_thread, args=(kind, job.pk), daemon=True)
            old.start()
            assert gate.reached.wait(timeout=30)  # the old execution waits on its 3rd request
            time.sleep(settings.JOB_STALE_SECONDS + 0.2)
            kind.resume(_reload(kind, job), worker_lost=False)
            kind.execute(job.pk)
            job = _finished(kind, job)
            done = _reload(kind, job)
            gate.release.set()  # SIGCONT: its answer arrives, its receipt was disclosed meanwhile
            old.join(timeout=30)
            assert not old.is_alive()
            after = _reload(kind, job)
            assert (after.status, after.finished_at, after.executions) == (done.status, done.finished_at, 2)
        assert server.max_count_per_body == 1
        job = _finish_by_its_command(kind, job)
        _assert_exactly_once_and_identical(kind, job, server, tmp_path)


def _try_resume(kind: Kind, job) -> bool:
    with contextlib.suppress(ValueError):
        kind.resume(_reload(kind, job), worker_lost=False)
        return True
    return False


def _execute_in_thread(kind: Kind, pk: int) -> None:
    try:
        kind.execute(pk)
    finally:
        connection.close()


# --------------------------------------------------------------------------- the same task twice


@pytest.mark.parametrize("name", list(KINDS))
def test_the_same_task_delivered_twice_runs_once(name, celery_worker, keyless, tmp_path):
    kind = KINDS[name]
    with LoopbackServer(kind.responder, latency=0.1) as server:
        job = kind.create(tmp_path, server.url)
        if REAL_WORKER:
            first = Worker(celery_worker, tmp_path, f"twice-a-{name}")
            # Both deliveries to one queue, read by two workers: they may run at the same time.
            second = Worker(celery_worker, tmp_path, f"twice-b-{name}", queue=first.queue)
            try:
                for worker in (first, second):
                    worker.send(kind.task, job.pk)
                job = _finished(kind, job)
                time.sleep(2.0)  # the other delivery has found it running or finished and done nothing
            finally:
                first.stop()
                second.stop()
        else:
            kind.execute(job.pk)
            kind.execute(job.pk)
        job = _reload(kind, job)
        assert job.executions == 1
        assert server.max_count_per_body == 1
        _still(kind, job, seconds=0.5)
        _assert_exactly_once_and_identical(kind, job, server, tmp_path)


# --------------------------------------------------------------------------- budget raised for unknown requests


@pytest.mark.parametrize("name", list(KINDS))
def test_unknown_requests_after_a_crash_are_reattempted_once_the_budget_is_raised(
        name, celery_worker, keyless, tmp_path):
    kind = KINDS[name]
    with LoopbackServer(kind.responder, latency=0.3) as server:
        job = kind.create(tmp_path, server.url)
        ledgers = kind.ledger_ids(job)
        if REAL_WORKER:
            worker = Worker(celery_worker, tmp_path, f"budget-{name}")
            try:
                worker.send(kind.task, job.pk)
                wait_until(lambda: _answered(ledgers) >= 2 and _in_flight(ledgers), timeout=60, interval=0.05)
                os.kill(worker.process.pid, signal.SIGKILL)
                worker.process.wait(timeout=20)
            finally:
                worker.stop()
            kind.resume(_reload(kind, job), worker_lost=True)  # the person knows the worker died
        else:
            _kill_in_process(kind, job, after=2)
            kind.resume(_reload(kind, job), worker_lost=True)
            kind.execute(job.pk)
        job = _finished(kind, job)
        unknown = Receipt.objects.filter(ledger_id__in=ledgers, status="unknown").count()
        assert unknown >= 1
        # The budget covers exactly what was sent (the default for audits and extractions is one request per
        # item): re-attempting the unknown requests needs a raise.
        for ledger_id in ledgers:
            spent = Receipt.objects.filter(ledger_id=ledger_id).exclude(status="not_sent").count()
            Ledger.objects.filter(pk=ledger_id).update(max_requests=spent)
        command = kind.finish_command(_reload(kind, job))
        assert "--reattempt" in command and "--add-requests" in command and "--reason" in command
        if name != "rerank":
            # The failure names the same command (its budget figures were those of the moment it failed).
            assert f"To finish: {command.split(' --add-requests')[0]}" in _reload(kind, job).error
        job = _finish_by_its_command(kind, job, expect_raise=True)
        raises = BudgetRaise.objects.filter(ledger_id__in=ledgers)
        assert raises.exists() and all(r.new_max_requests > r.old_max_requests for r in raises)
        assert all(r.actor.startswith("command line:") and r.reason for r in raises)
        _assert_exactly_once_and_identical(kind, job, server, tmp_path)
