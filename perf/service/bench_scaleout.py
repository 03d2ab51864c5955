"""Scale-out: throughput of local-model rerank runs with 1, 2 and 3 Celery workers on PostgreSQL + Redis.

The same ``--runs`` rerank runs (the local MiniLM model, one synthetic snapshot) are queued at once and
executed by N worker processes (``--pool=solo``, one task each at a time, as the README advises), for N in
``--workers`` (1,2,3). Each configuration starts cold: a fresh shared vector store (``EMBEDDING_CACHE_DIR``),
fresh worker processes. Printed per configuration: wall time from queueing to the last run finished, runs per
minute and candidates graded per second; and the same with the shared store switched off (each process
embedding the snapshot for itself, as before it existed) for comparison. The grades of every configuration are
compared bit for bit with the first one's.

Its own database (``bench_scaleout_<random>``, created and dropped by this run) and Redis db 12, both on
127.0.0.1. When PostgreSQL or Redis is not reachable it prints why and exits 0: it is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from perf.scratch_db import scratch_postgres  # noqa: E402

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_scaleout"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/12"
WORDS = ["tenant", "landlord", "deposit", "court", "guardian", "child", "notice", "hearing", "appeal", "fee",
         "record", "agency", "report", "custody", "petition", "order", "judge", "filing", "service", "lien",
         "county", "clerk", "license", "permit", "board", "district", "school", "water", "vehicle", "insurance"]


def _options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=6, help="rerank runs queued at once (default 6)")
    parser.add_argument("--workers", default="1,2,3", help="worker counts to measure (default 1,2,3)")
    parser.add_argument("--sections", type=int, default=200, help="provisions in the synthetic snapshot")
    parser.add_argument("--queries", type=int, default=12)
    parser.add_argument("--no-baseline", action="store_true", help="skip the runs without the shared store")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_SCALEOUT_DATABASE_URL",
                                                                 DEFAULT_DATABASE_URL))
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_SCALEOUT_REDIS_URL", DEFAULT_REDIS_URL))
    return parser.parse_args(argv)


def _unreachable(opts: argparse.Namespace) -> str:
    """Why PostgreSQL or Redis cannot be used ('' when both answer)."""
    try:
        import psycopg

        with psycopg.connect(opts.database_url.rsplit("/", 1)[0] + "/postgres", connect_timeout=3):
            pass
    except Exception as error:  # any reason is a reason to skip a benchmark
        return f"PostgreSQL at {opts.database_url.rsplit('/', 1)[0]} is not reachable ({type(error).__name__})"
    try:
        import redis

        redis.Redis.from_url(opts.redis_url, socket_connect_timeout=3).ping()
    except Exception as error:
        return f"Redis at {opts.redis_url} is not reachable ({type(error).__name__})"
    return ""


def main(argv: list[str] | None = None) -> int:
    opts = _options(argv)
    why = _unreachable(opts)
    if why:
        print(f"bench_scaleout: skipped: {why}; it needs PostgreSQL and Redis on 127.0.0.1")
        return 0
    with scratch_postgres(opts.database_url, prefix=opts.database_url.rsplit("/", 1)[1]) as url:
        opts.database_url = url
        return _run(opts)


def _setup(opts: argparse.Namespace) -> int:
    """Migrate; one synthetic snapshot, a suite, its finished retrieval run. Returns the retrieval run id."""
    from django.core.management import call_command

    from benchmarks.corpus import ParsedProvision, ParsedSource
    from benchmarks.corpus.services import snapshot_import
    from benchmarks.retrieval.services import retrieval_run_create
    from benchmarks.suites.services import suite_import

    call_command("migrate", verbosity=0)
    rng = random.Random(11)
    sections = tuple(
        ParsedProvision(citation=f"NRS 998.{100 + i * 10}", number=f"998.{100 + i * 10}", chapter="998",
                        chapter_title="SCALE", heading=" ".join(rng.sample(WORDS, 4)).capitalize() + ".",
                        body=" ".join(rng.choice(WORDS) for _ in range(rng.randint(90, 160))) + ".")
        for i in range(opts.sections))
    source = ParsedSource(corpus="nrs", parser_name="bench", parser_version="1", title="scale-out chapter",
                          official_url="https://example.invalid/", provisions=sections)
    snapshot_import(corpus="nrs", source_key="scaleout.html", raw=b"scaleout", retrieved_from="bench_scaleout",
                    parse=lambda _raw: source, parser=("bench", "1"))
    queries = [{"id": f"q{i}", "kind": "ranking", "split": "dev", "family": f"fam{i % 3}",
                "targets": [sections[i].citation],
                "text": f"When must the {WORDS[i % 30]} give {WORDS[(i + 7) % 30]} notice to the "
                        f"{WORDS[(i + 13) % 30]} about the {WORDS[(i + 19) % 30]}?"}
               for i in range(opts.queries)]
    suite, _ = suite_import(raw=json.dumps({
        "name": "scaleout", "version": 1, "corpus": "nrs",
        "families": [{"id": f"fam{k}", "split": "dev"} for k in range(3)], "queries": queries,
    }).encode(), filename="scaleout.json")
    return retrieval_run_create(suite=suite, k=30).pk


def _workers(n: int, env: dict, tmp: Path, tag: str) -> list[subprocess.Popen]:
    procs = []
    for k in range(n):
        log = open(tmp / f"worker-{tag}-{k}.log", "w")  # noqa: SIM115 - the process owns it until it ends
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "reviewapp", "worker", "--pool=solo", "--loglevel=WARNING",
             "-n", f"scaleout-{tag}-{k}-{os.getpid()}@%h", "--without-gossip", "--without-mingle",
             "--without-heartbeat"],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT))
    return procs


def _stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def _wait_for_workers(n: int, deadline: float) -> None:
    from reviewapp.celery import app

    while time.monotonic() < deadline:
        replies = app.control.ping(timeout=1.0) or []
        if len(replies) >= n:
            return
    raise SystemExit(f"bench_scaleout: {n} workers did not answer a ping within the start-up time")


def _measure(opts, retrieval_id: int, n: int, base_env: dict, tmp: Path, shared: bool) -> dict:
    from django.db import connection

    from benchmarks.rerank import services as rerank
    from benchmarks.rerank.models import RerankRun
    from benchmarks.retrieval.models import RetrievalRun

    tag = f"{n}{'s' if shared else 'p'}"
    cache = tmp / f"vectors-{tag}"
    env = {**base_env, "EMBEDDING_CACHE_DIR": str(cache) if shared else ""}
    procs = _workers(n, env, tmp, tag)
    try:
        _wait_for_workers(n, time.monotonic() + 120)
        retrieval = RetrievalRun.objects.get(pk=retrieval_id)
        started = time.perf_counter()
        runs = [rerank.rerank_run_create(retrieval_run=retrieval, provider="local").pk for _ in range(opts.runs)]
        connection.close()
        deadline = time.monotonic() + 1800
        while True:
            finished = RerankRun.objects.filter(pk__in=runs, status__in=["done", "stopped", "cancelled", "failed"])
            if finished.count() == len(runs) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        elapsed = time.perf_counter() - started
    finally:
        _stop(procs)
    statuses = sorted(set(RerankRun.objects.filter(pk__in=runs).values_list("status", flat=True)))
    graded = sum(rerank.rerank_run_progress(run=RerankRun.objects.get(pk=pk)).graded for pk in runs)
    workers_used = len(set(RerankRun.objects.filter(pk__in=runs).values_list("worker", flat=True)))
    grades = [[(g.candidate_id, g.p0, g.p1, g.p2, g.p3) for g in rerank.rerank_run_grades(run=RerankRun.objects.get(
        pk=pk))] for pk in runs]
    shutil.rmtree(cache, ignore_errors=True)
    return {"workers": n, "shared": shared, "seconds": elapsed, "runs": len(runs), "graded": graded,
            "statuses": statuses, "workers_used": workers_used, "grades": grades}


def _run(opts: argparse.Namespace) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench_scaleout-"))
    queue = f"scaleout-{os.getpid()}"
    env = {**os.environ, "DATABASE_URL": opts.database_url, "REDIS_URL": opts.redis_url, "DEBUG": "0",
           "LOG_LEVEL": "WARNING", "VAR_DIR": str(tmp / "var"), "CELERY_TASK_ALWAYS_EAGER": "0",
           "CELERY_QUEUE": queue}
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "REDIS_URL", "VAR_DIR", "CELERY_TASK_ALWAYS_EAGER",
                                           "CELERY_QUEUE", "DEBUG", "LOG_LEVEL")})
    os.environ["EMBEDDING_CACHE_DIR"] = ""  # the bench process itself embeds nothing
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
    import django

    django.setup()
    retrieval_id = _setup(opts)
    from benchmarks.rerank.services import rerank_plan
    from benchmarks.retrieval.models import RetrievalRun

    plan = rerank_plan(retrieval_run=RetrievalRun.objects.get(pk=retrieval_id),
                       question_version="statute-relevance-v1", candidates_per_request=4)
    candidates = sum(len(p.candidate_ids) for p in plan)
    counts = [int(x) for x in opts.workers.split(",")]
    print(f"bench_scaleout: {opts.runs} local-model rerank runs of {candidates} candidates ({len(plan)} requests) "
          f"on one snapshot of {opts.sections} provisions, queued at once; PostgreSQL + Redis, "
          f"{os.cpu_count()} CPUs, load average before {os.getloadavg()[0]:.1f}")
    results = []
    modes = [True] if opts.no_baseline else [True, False]
    for shared in modes:
        for n in counts:
            result = _measure(opts, retrieval_id, n, env, tmp, shared)
            results.append(result)
            rate = result["graded"] / result["seconds"]
            print(f"  {n} worker{'s' if n > 1 else ' '} {'shared vectors' if shared else 'per-process  '}: "
                  f"{result['seconds']:6.1f} s, {60 * result['runs'] / result['seconds']:5.1f} runs/min, "
                  f"{rate:6.1f} candidates/s; {result['graded']} graded; statuses {','.join(result['statuses'])};"
                  f" {result['workers_used']} workers took runs")
    first = results[0]["grades"][0]
    identical = all(grades == first for r in results for grades in r["grades"])
    print(f"  grades identical across every run and configuration: {'yes' if identical else 'NO'}")
    print(f"  load average after {os.getloadavg()[0]:.1f}")
    print("RESULT " + json.dumps([{k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()
                                   if k != "grades"} for r in results]))
    shutil.rmtree(tmp, ignore_errors=True)
    ok = identical and all(r["statuses"] == ["done"] for r in results)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
