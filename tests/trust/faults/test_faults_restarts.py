"""No job left behind when the services around the workers fail: a real PostgreSQL restart mid-run (every kind),
celery beat SIGKILLed and started again, and beat and workers whose var/ is full.

Real processes (TEST_REAL_WORKER=1, PostgreSQL + Redis in CI), as compose runs them: a beat and a worker under a
restart policy (a process that exits is started again), on a queue of their own, against a simulated model server
that logs every request. The timeouts are the matrix's (test_faults_recovery: short in CI, the shipped ones with
RECOVERY_TIMEOUTS=production); every cell prints and records (var/fault-matrix.json) its seconds from the fault to
the takeover and to the finished job, the requests the server received twice, and the final state.

- PostgreSQL restart: a private cluster (tests/trust/private_servers.py; the machine's server is shared and never
  restarted) holding a copy of the test database; the workers, beat and this process all use it, and it is
  restarted with ``pg_ctl restart -m fast`` while the job has answers recorded and requests in flight.
- beat killed: SIGKILL of the beat process (its restart loop starts it again a second later) at the moment the
  job's own worker is SIGKILLed too, and a job is launched whose message is lost: the restarted beat's sweeps
  take over the stale job and send the queued one.
- var/ full: beat, the surviving worker and the job's worker start with VAR_DIR on a full filesystem
  (private_servers.full_folder); the job's pool child is SIGKILLed; beat sweeps, the takeover finishes the job.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest
from django.db import InterfaceError, OperationalError, connection
from django.utils import timezone

from reviewapp.providers.loopback import LoopbackServer
from tests.conftest import REAL_WORKER
from tests.helpers import wait_until
from tests.trust.faults.record import cell_record, sent_twice
from tests.trust.faults.test_faults_jobs import KEYLESS, Kind, _reload
from tests.trust.faults.test_faults_recovery import (
    ALL_KINDS,
    WAIT,
    Process,
    _assert_recovered,
    _holder_pid,
    _mid_job,
    _timeouts,
    final_state,
)
from tests.trust.private_servers import full_folder, private_postgres


@pytest.fixture(autouse=True)
def _fresh_kinds():
    for kind in ALL_KINDS.values():
        for cached in ("_retrieval", "_loaded", "_run"):
            kind.__dict__.pop(cached, None)


@pytest.fixture
def keyless(settings):
    settings.PROVIDER_KEYS = dict(KEYLESS)


def _quietly(read):
    """``read()``, or None while the database is restarting (this process's connection is cut too)."""
    try:
        return read()
    except (OperationalError, InterfaceError):
        with contextlib.suppress(Exception):
            connection.close()
        return None


def _taken_over_or_finished(kind: Kind, job) -> bool:
    fresh = _quietly(lambda: _reload(kind, job))
    return bool(fresh and (fresh.executions >= 2 or fresh.is_finished))


def _finished(kind: Kind, job) -> bool:
    fresh = _quietly(lambda: _reload(kind, job))
    return bool(fresh and fresh.is_finished)


def _report(capsys, cell: str, kind: Kind, job, server, *, takeover: float | None, finished: float,
            note: str = "") -> None:
    state = final_state(kind, job)
    twice = sent_twice(server)
    with capsys.disabled():
        print(f"\nrecovery {cell}: fault -> taken over {takeover if takeover is None else round(takeover, 1)} s, "
              f"-> finished {finished:.1f} s ({_timeouts()}); sent twice {twice}; {state}. {note}")
    cell_record(cell, timeouts=_timeouts(), takeover=takeover, finished=finished, sent_twice=twice, state=state,
                note=note)


def _stop(processes: list[Process]) -> None:
    """SIGTERM to every process group first, so their shutdowns overlap, then wait for each."""
    for process in processes:
        process.signal_group(signal.SIGTERM)
    for process in processes:
        process.stop()


def _child_pids(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in children.read_text().split()] if children.exists() else []


# --------------------------------------------------------------------------- PostgreSQL restarted mid-run


@pytest.fixture(scope="module")
def cluster(django_db_setup, django_db_blocker):
    """A private PostgreSQL cluster holding a copy of the migrated test database (the template of every cell)."""
    from tests.conftest import _database_url_for_worker

    with django_db_blocker.unblock():
        source = _database_url_for_worker()
    with private_postgres() as private:
        private.copy_database(source, "template_cells")
        yield private


@pytest.fixture
def private_database(cluster, transactional_db, request):
    """This test's own database on the private cluster; this process's connection points at it meanwhile."""
    name = f"cell_{os.getpid()}_{request.node.callspec.id.replace('-', '_')}"
    url = cluster.clone("template_cells", name)
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=cluster.port, NAME=name)
    try:
        yield {"database_url": url}
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


def _test_a_postgresql_restart_mid_run_is_recovered_without_an_operator(
        name, private_database, cluster, keyless, tmp_path, capsys):
    kind = ALL_KINDS[name]
    queue = f"pg-restart-{name}-{os.getpid()}"
    env = {"CELERY_QUEUE": queue}
    processes = [Process(private_database, tmp_path, "beat", ["beat", "--loglevel=INFO"], restart=True, **env),
                 Process.worker(private_database, tmp_path, "worker", pool="prefork", concurrency=2, queue=queue,
                                restart=True, **env)]
    try:
        with LoopbackServer(kind.responder, latency=0.3) as server:
            job = kind.create(tmp_path, server.url)
            kind.task.apply_async(args=[job.pk], queue=queue)
            kind.model.objects.filter(pk=job.pk).update(sent_at=timezone.now())  # as job_enqueue records it
            wait_until(lambda: _mid_job(kind, job), timeout=WAIT, interval=0.05)
            fault = time.monotonic()
            down = cluster.restart()
            wait_until(lambda: _taken_over_or_finished(kind, job), timeout=WAIT, interval=0.1)
            takeover = time.monotonic() - fault
            wait_until(lambda: _finished(kind, job), timeout=WAIT + 30, interval=0.1)
            finished = time.monotonic() - fault
            executions = _reload(kind, job).executions
            if executions >= 2:
                _assert_recovered(kind, job, server)
            else:  # the restart fell between two of its statements: it went on, nothing to take over
                assert kind.complete(_reload(kind, job)) and server.max_count_per_body == 1
            _report(capsys, f"{name} x PostgreSQL restart", kind, job, server,
                    takeover=takeover if executions >= 2 else None, finished=finished,
                    note=f"pg_ctl restart -m fast took {down:.1f} s; executions {executions}")
    finally:
        _stop(processes)


# --------------------------------------------------------------------------- celery beat SIGKILLed


def _test_beat_killed_with_its_job_worker_is_restarted_and_sweeps_stale_and_queued_jobs(
        celery_worker, keyless, tmp_path, capsys):
    kind = ALL_KINDS["rerank"]
    queue = f"beat-killed-{os.getpid()}"
    victim_queue = f"beat-killed-victim-{os.getpid()}"
    env = {"CELERY_QUEUE": queue}
    beat = Process(celery_worker, tmp_path, "beat", ["beat", "--loglevel=INFO"], restart=True, **env)
    survivor = Process.worker(celery_worker, tmp_path, "survivor", pool="prefork", concurrency=2, queue=queue,
                              restart=True, **env)
    victim = Process.worker(celery_worker, tmp_path, "victim", pool="solo", queue=victim_queue, **env)
    try:
        with LoopbackServer(kind.responder, latency=0.3) as server, LoopbackServer(kind.responder) as other:
            job = kind.create(tmp_path, server.url)
            kind.task.apply_async(args=[job.pk], queue=victim_queue)
            kind.model.objects.filter(pk=job.pk).update(sent_at=timezone.now())
            wait_until(lambda: _mid_job(kind, job), timeout=WAIT, interval=0.05)
            wait_until(lambda: "beat: Starting" in beat.log_path.read_text(), timeout=WAIT)
            (beat_pid,) = _child_pids(beat.process.pid)  # the celery beat under its restart loop
            os.kill(beat_pid, signal.SIGKILL)
            os.kill(victim.process.pid, signal.SIGKILL)
            fault, fault_at = time.monotonic(), timezone.now()
            queued = kind.create(tmp_path, other.url)  # launched meanwhile, its message lost
            wait_until(lambda: beat.log_path.read_text().count("beat: Starting") >= 2, timeout=WAIT)
            restarted = time.monotonic() - fault
            wait_until(lambda: _taken_over_or_finished(kind, job), timeout=WAIT, interval=0.1)
            takeover = time.monotonic() - fault
            wait_until(lambda: _finished(kind, job), timeout=WAIT + 30, interval=0.1)
            finished = time.monotonic() - fault
            wait_until(lambda: _finished(kind, queued), timeout=WAIT + 30, interval=0.1)
            # Its own end (awaited after the other job's), from its finished_at.
            queued_finished = (_reload(kind, queued).finished_at - fault_at).total_seconds()
            _assert_recovered(kind, job, server)
            assert kind.complete(_reload(kind, queued)) and _reload(kind, queued).executions == 1
            assert other.max_count_per_body == 1
            _report(capsys, "rerank x beat SIGKILLed (with the job's solo worker)", kind, job, server,
                    takeover=takeover, finished=finished, note=f"beat started again after {restarted:.1f} s")
            _report(capsys, "rerank x beat SIGKILLed, a launch meanwhile (message lost)", kind, queued, other,
                    takeover=None, finished=queued_finished, note="sent by the restarted beat's sweeper")
    finally:
        _stop([beat, survivor, victim])


# --------------------------------------------------------------------------- var/ full


def _test_beat_and_workers_with_a_full_var_start_sweep_and_finish_a_taken_over_job(
        celery_worker, keyless, tmp_path, capsys):
    kind = ALL_KINDS["rerank-local"]
    queue = f"var-full-{os.getpid()}"
    victim_queue = f"var-full-victim-{os.getpid()}"
    with full_folder() as (var, how):
        env = {"CELERY_QUEUE": queue, "VAR_DIR": str(var)}
        processes = [Process(celery_worker, tmp_path, "beat", ["beat", "--loglevel=INFO"], restart=True, **env),
                     Process.worker(celery_worker, tmp_path, "survivor", pool="prefork", concurrency=2,
                                    queue=queue, restart=True, **env)]
        victim = Process.worker(celery_worker, tmp_path, "victim", pool="prefork", queue=victim_queue, **env)
        processes.append(victim)
        try:
            with LoopbackServer(kind.responder) as server:
                job = kind.create(tmp_path, server.url)
                kind.task.apply_async(args=[job.pk], queue=victim_queue)
                kind.model.objects.filter(pk=job.pk).update(sent_at=timezone.now())
                wait_until(lambda: _mid_job(kind, job), timeout=WAIT, interval=0.05)
                os.kill(_holder_pid(kind, job), signal.SIGKILL)
                fault = time.monotonic()
                wait_until(lambda: _taken_over_or_finished(kind, job), timeout=WAIT, interval=0.1)
                takeover = time.monotonic() - fault
                wait_until(lambda: _finished(kind, job), timeout=WAIT + 30, interval=0.1)
                finished = time.monotonic() - fault
                _assert_recovered(kind, job, server)
                beat_log = processes[0].log_path.read_text()
                assert beat_log.count("beat: Starting") == 1, beat_log[-3000:]  # started once, never crashed
                assert "Sending due task jobs-sweep" in beat_log
                _report(capsys, "rerank-local x var/ full (pool child SIGKILLed)", kind, job, server,
                        takeover=takeover, finished=finished, note=f"var/ is {how}")
        finally:
            _stop(processes)


if REAL_WORKER and os.environ.get("REDIS_URL"):
    test_a_postgresql_restart_mid_run_is_recovered_without_an_operator = pytest.mark.parametrize(
        "name", ["rerank", "rerank-local", "extraction", "audit"])(
        _test_a_postgresql_restart_mid_run_is_recovered_without_an_operator)
    test_beat_killed_with_its_job_worker_is_restarted_and_sweeps_stale_and_queued_jobs = (
        _test_beat_killed_with_its_job_worker_is_restarted_and_sweeps_stale_and_queued_jobs)
    test_beat_and_workers_with_a_full_var_start_sweep_and_finish_a_taken_over_job = (
        _test_beat_and_workers_with_a_full_var_start_sweep_and_finish_a_taken_over_job)
