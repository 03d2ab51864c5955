"""Faults in the workers: kill the Celery worker mid extraction run and mid audit, restart, resume; stop Redis
during a run and start it again.

The rerank run has the same test already: tests/benchmarks/rerank/test_rerank_resume.py (SIGKILL of a worker of its
own on a dedicated queue, resume, no request sent twice, results identical). These follow its approach: with
TEST_REAL_WORKER=1 a worker subprocess of our own is SIGKILLed mid-run and the shared worker resumes;
otherwise the executor is stopped abruptly in-process (a BaseException between a request's answer and its
receipt being completed, exactly what a kill leaves behind: an open claim and a receipt without its answer).
Loopback provider servers count every request they receive.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from grading.audits import services as audit_svc
from grading.audits import tasks as audit_tasks
from grading.audits.judging.judges import parse_choice
from grading.audits.models import Audit, AuditVerdict
from grading.runs import jobs as console
from grading.runs import tasks
from grading.runs.models import ConsoleJob
from reviewapp.core.jobs import job_kind_resume
from reviewapp.core.records.hashing import canonical_json, sha256_hex
from reviewapp.providers import services as provider_services
from reviewapp.providers.loopback import LoopbackServer, Reply
from reviewapp.providers.models import Ledger, Receipt
from tests.conftest import REAL_WORKER, REPO_ROOT
from tests.helpers import wait_until

KILL_QUEUE = "trust-kill-test"


class SimulatedKill(BaseException):
    """Not an Exception: nothing in the executors may catch it, as nothing can catch SIGKILL."""


def _quotes(path: str, headers: dict, body_bytes: bytes) -> Reply:
    """A loopback extraction model: quotes the contract's second sentence as Governing Law."""
    body = json.loads(body_bytes)
    contract = body["messages"][-1]["content"].split("<contract>\n", 1)[1].split("\n</contract>", 1)[0]
    quote = contract.split(". ")[1] if ". " in contract else contract
    content = json.dumps({"extractions": [{"category": "Governing Law", "quote": quote}]})
    return Reply(body=json.dumps({
        "id": "x", "object": "chat.completion", "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": len(body_bytes) // 4, "completion_tokens": 20, "total_tokens": 0},
    }).encode())


def _verdicts(path: str, headers: dict, body_bytes: bytes) -> Reply:
    from tests.grading.audit_support import verdict_responder

    return verdict_responder(path, headers, body_bytes)


def _answered(ledger_ids) -> int:
    return Receipt.objects.filter(ledger_id__in=list(ledger_ids), status="answered").count()


def _kill_mid_run(*, task, pk: int, ledger_ids, run_inline, worker_info, tmp_path, after: int) -> None:
    """Stop the executor after ``after`` answered requests: SIGKILL a real worker, or stop it in-process."""
    if worker_info is None:
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
                run_inline()
        finally:
            provider_services.receipt_complete = original
        assert Receipt.objects.filter(ledger_id__in=list(ledger_ids), status="sent").exists()
        return
    log = open(tmp_path / "kill-worker.log", "w")  # noqa: SIM115 - closed below
    env = {**os.environ, "DATABASE_URL": worker_info["database_url"], "CELERY_TASK_ALWAYS_EAGER": "0"}
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "reviewapp", "worker", "--pool=solo", "-Q", KILL_QUEUE,
         "-n", f"trustkill-{os.getpid()}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        task.apply_async(args=[pk], queue=KILL_QUEUE)
        wait_until(lambda: _answered(ledger_ids) >= after, timeout=90)
    finally:
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
        log.close()


def _no_request_sent_twice(server: LoopbackServer, ledger_ids) -> None:
    """Every body the server saw was sent at most once per receipt attempt the ledger recorded."""
    receipts = list(Receipt.objects.filter(ledger_id__in=list(ledger_ids)))
    attempts: dict[str, int] = {}
    for receipt in receipts:
        digest = sha256_hex(canonical_json(receipt.request_body))
        attempts[digest] = attempts.get(digest, 0) + 1
    assert set(server.counts) <= set(attempts)
    for digest, sent in server.counts.items():
        assert sent <= attempts[digest]


# --------------------------------------------------------------------------- extraction run


def _job_finished(pk: int) -> ConsoleJob:
    return wait_until(lambda: (j := ConsoleJob.objects.get(pk=pk)).is_finished and j, timeout=120)


def test_a_killed_extraction_run_resumes_without_resending_and_grades_like_an_uninterrupted_one(
        celery_worker, tmp_path, settings):
    from tests.grading.console_support import load

    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}
    loaded = load(tmp_path)
    with LoopbackServer(_quotes, latency=0.3) as server, LoopbackServer(_quotes) as reference_server:
        job = console.extraction_job_create(sample=loaded.sample, provider="openai_compatible", model_id="loop/x",
                                            base_url=server.url, max_requests=8, queue=False)
        Ledger.objects.filter(pk=job.ledger_id).update(concurrency=1)  # one at a time: the kill lands mid-run
        _kill_mid_run(task=tasks.extract_run, pk=job.pk, ledger_ids=[job.ledger_id], worker_info=celery_worker,
                      run_inline=lambda: console.job_extract_execute(job_id=job.pk), tmp_path=tmp_path, after=2)
        job.refresh_from_db()
        assert job.status == "running"  # the dead executor never finished it
        with pytest.raises(console.JobError):
            job_kind_resume(job)  # nobody said the worker is gone: refused
        answered_before = _answered([job.ledger_id])
        assert 0 < answered_before < job.total

        job_kind_resume(job, force=True, enqueue=REAL_WORKER)
        if not REAL_WORKER:
            console.job_extract_execute(job_id=job.pk)
        job = _job_finished(job.pk)
        assert server.max_count_per_body == 1  # nothing was sent twice
        unknown = Receipt.objects.filter(ledger_id=job.ledger_id, status="unknown").count()
        if job.status == "failed":  # requests in flight at the kill are disclosed, not re-sent
            assert unknown and "never re-sent automatically" in job.error
            job_kind_resume(job, reattempt=True, enqueue=REAL_WORKER)
            if not REAL_WORKER:
                console.job_extract_execute(job_id=job.pk)
            job = _job_finished(job.pk)
        assert job.status == "done", job.error
        receipts = Receipt.objects.filter(ledger_id=job.ledger_id)
        assert receipts.count() == job.total + unknown  # every request has its receipt, re-attempts counted
        assert receipts.filter(status="answered").count() == job.total
        _no_request_sent_twice(server, [job.ledger_id])

        reference = console.extraction_job_create(sample=loaded.sample, provider="openai_compatible",
                                                  model_id="loop/x", base_url=reference_server.url, queue=False)
        reference = console.job_extract_execute(job_id=reference.pk)
        assert reference.status == "done"
    assert job.run.content_sha256 == reference.run.content_sha256
    assert list(job.run.extractions.order_by("position").values_list("text", "best_f1", "grounding")) == \
        list(reference.run.extractions.order_by("position").values_list("text", "best_f1", "grounding"))


# --------------------------------------------------------------------------- audit


def _audit_finished(pk: int) -> Audit:
    return wait_until(lambda: (a := Audit.objects.get(pk=pk)).status in ("done", "failed") and a, timeout=120)


def _rulings(audit: Audit) -> list[tuple]:
    return list(AuditVerdict.objects.filter(candidate__audit=audit)
                .order_by("candidate__position", "judge__slot")
                .values_list("candidate__position", "judge__slot", "verdict", "reason"))


def test_a_killed_audit_resumes_without_resending_and_rules_like_an_uninterrupted_one(
        celery_worker, tmp_path, settings):
    from tests.grading.audit_support import audited_run

    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}
    loaded, run = audited_run(tmp_path, extra=6)

    def judges(url: str):
        return (parse_choice("openai_compatible:judge/model-a", base_url=url),
                parse_choice("openai_compatible:judge/model-b", base_url=url))

    with LoopbackServer(_verdicts, latency=0.2) as server, LoopbackServer(_verdicts) as reference_server:
        a, b = judges(server.url)
        audit, _ = audit_svc.audit_create(run=run, sample=loaded.sample, judge_a=a, judge_b=b, queue=False)
        ledgers = list(audit.judges.values_list("ledger_id", flat=True))
        Ledger.objects.filter(pk__in=ledgers).update(concurrency=1)
        assert audit.n_candidates >= 4
        _kill_mid_run(task=audit_tasks.audit_run, pk=audit.pk, ledger_ids=ledgers, worker_info=celery_worker,
                      run_inline=lambda: audit_svc.audit_execute(audit_id=audit.pk), tmp_path=tmp_path, after=3)
        audit.refresh_from_db()
        assert audit.status == "running"
        assert 0 < _answered(ledgers) < 2 * audit.n_candidates

        job_kind_resume(audit, force=True, enqueue=REAL_WORKER)
        if not REAL_WORKER:
            audit_svc.audit_execute(audit_id=audit.pk)
        audit = _audit_finished(audit.pk)
        assert server.max_count_per_body == 1
        unknown = Receipt.objects.filter(ledger_id__in=ledgers, status="unknown").count()
        if audit.status == "failed":
            assert unknown and "never re-sent automatically" in audit.error
            job_kind_resume(audit, reattempt=True, enqueue=REAL_WORKER)
            if not REAL_WORKER:
                audit_svc.audit_execute(audit_id=audit.pk)
            audit = _audit_finished(audit.pk)
        assert audit.status == "done", audit.error
        keyed = set(AuditVerdict.objects.filter(candidate__audit=audit).exclude(request_key="")
                    .values_list("request_key", flat=True))
        answered = Receipt.objects.filter(ledger_id__in=ledgers, status="answered")
        assert set(answered.values_list("request_key", flat=True)) == keyed  # every ruling has its receipt
        assert Receipt.objects.filter(ledger_id__in=ledgers).count() == answered.count() + unknown
        _no_request_sent_twice(server, ledgers)

        ra, rb = judges(reference_server.url)
        reference, created = audit_svc.audit_create(run=run, sample=loaded.sample, judge_a=ra, judge_b=rb,
                                                    queue=False)
        assert created
        reference = audit_svc.audit_execute(audit_id=reference.pk)
        assert reference.status == "done"
    assert _rulings(audit) == _rulings(reference)
    assert len(_rulings(audit)) == 2 * audit.n_candidates


# --------------------------------------------------------------------------- Redis stops mid-run


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _redis(port: int, tmp_path) -> subprocess.Popen:
    """A Redis server of this test's own (never the machine's shared 6379), keeping nothing on disk."""
    process = subprocess.Popen(
        [shutil.which("redis-server") or "redis-server", "--port", str(port), "--bind", "127.0.0.1",
         "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    import redis

    client = redis.Redis(host="127.0.0.1", port=port)
    wait_until(lambda: _pings(client), timeout=20)
    return process


def _pings(client) -> bool:
    import redis

    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


# Only where there is a broker to stop (TEST_REAL_WORKER=1 with REDIS_URL, the PostgreSQL CI run); the embedded
# run has no broker server. Defined only there, so no run reports a skip.
def _test_a_run_survives_its_broker_stopping_and_the_worker_takes_new_work_once_redis_is_back(
        celery_worker, tmp_path, settings):
    from reviewapp.celery import app
    from tests.grading.console_support import load

    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}
    loaded = load(tmp_path)
    port = _free_port()
    broker = f"redis://127.0.0.1:{port}/0"
    redis_server = _redis(port, tmp_path)
    log = open(tmp_path / "redis-worker.log", "w")  # noqa: SIM115 - closed below
    env = {**os.environ, "DATABASE_URL": celery_worker["database_url"], "REDIS_URL": broker,
           "CELERY_TASK_ALWAYS_EAGER": "0"}

    def start_worker() -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "reviewapp", "worker", "--pool=solo", "-Q", "redis-fault",
             "-n", f"redisfault-{os.getpid()}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat"],
            cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )

    worker = start_worker()

    def send(job_id: int) -> None:
        with app.connection_for_write(broker) as connection:
            tasks.extract_run.apply_async(args=[job_id], queue="redis-fault", connection=connection)

    try:
        with LoopbackServer(_quotes, latency=0.6) as server:
            job = console.extraction_job_create(sample=loaded.sample, provider="openai_compatible",
                                                model_id="loop/x", base_url=server.url, queue=False)
            Ledger.objects.filter(pk=job.ledger_id).update(concurrency=1)
            send(job.pk)
            wait_until(lambda: _answered([job.ledger_id]) >= 1, timeout=60)
            redis_server.terminate()  # the broker goes away mid-run
            redis_server.wait(timeout=20)
            job = _job_finished(job.pk)  # the run needs the database and the provider, not the broker
            assert job.status == "done", job.error
            assert server.max_count_per_body == 1
            assert Receipt.objects.filter(ledger_id=job.ledger_id, status="answered").count() == job.total

            redis_server = _redis(port, tmp_path)  # back, empty (it keeps nothing on disk)
            # Celery 5 / kombu may die instead of reconnecting when the broker vanishes while it acks a task
            # ("Unrecoverable error: AttributeError ... 'hostname'", kombu's restore_unacked on close): the
            # worker must run under a supervisor that restarts it (compose restart policy, systemd). Do what
            # the supervisor does; the work itself was already safe in the database.
            time.sleep(3)
            if worker.poll() is not None:
                log.flush()
                assert "Unrecoverable error" in (tmp_path / "redis-worker.log").read_text()
                worker = start_worker()
            second = console.extraction_job_create(sample=loaded.sample, provider="openai_compatible",
                                                   model_id="loop/y", base_url=server.url, queue=False)
            deadline = time.monotonic() + 60
            while True:  # the worker reconnects by itself; until then a send may be refused
                try:
                    send(second.pk)
                    break
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(1)
            second = _job_finished(second.pk)
            assert second.status == "done", second.error
            assert server.max_count_per_body == 1
            assert ConsoleJob.objects.get(pk=job.pk).run_id == job.run_id  # the first run is intact
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
        redis_server.terminate()
        redis_server.wait(timeout=20)
        log.close()


if REAL_WORKER and os.environ.get("REDIS_URL"):
    test_a_run_survives_its_broker_stopping_and_the_worker_takes_new_work_once_redis_is_back = (
        _test_a_run_survives_its_broker_stopping_and_the_worker_takes_new_work_once_redis_is_back)
