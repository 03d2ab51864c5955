"""Peak memory of a Celery worker executing a local-model rerank run, beside a naive onnxruntime process.

The goal: the worker's peak RSS within 1.3x of a plain process that loads the same model with
onnxruntime + tokenizers and embeds the same texts (the snapshot's provisions and the suite's queries).
Both figures are the kernel's high-water mark (VmHWM) of the process, read in the same run.

Also printed: the modules the worker's process holds that a rerank does not need (heavy packages only),
read from a process that imports what ``celery -A reviewapp worker`` imports (the project, the tasks).

Its own PostgreSQL database (prefix ``ci_perf_rss`` + random suffix, dropped by this run only) and Redis db 8
on 127.0.0.1 (BENCH_RSS_DATABASE_URL / BENCH_RSS_REDIS_URL). Prints, asserts nothing; exits 0 with a note
when PostgreSQL or Redis is not reachable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from perf.figures import report  # noqa: E402
from perf.scratch_db import scratch_postgres  # noqa: E402
from perf.service import bench_scaleout  # noqa: E402

BENCH = Path(__file__).stem
GOAL_RATIO = 1.3
DATABASE_URL = os.environ.get("BENCH_RSS_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/ci_perf_rss")
REDIS_URL = os.environ.get("BENCH_RSS_REDIS_URL", "redis://127.0.0.1:6379/8")
HEAVY = ("scipy", "scipy.optimize", "scipy.stats", "sklearn", "pandas", "matplotlib", "bm25s", "httpx",
         "anthropic", "openai", "drf_spectacular.plumbing", "django.test", "jinja2", "rest_framework.test",
         "statsmodels", "onnxruntime", "tokenizers")

NAIVE = """
import json, sys
import numpy as np, onnxruntime as ort
from tokenizers import Tokenizer
model, tokenizer_file, texts = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
tok = Tokenizer.from_file(tokenizer_file); tok.enable_truncation(max_length=256); tok.no_padding()
session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
names = {i.name for i in session.get_inputs()}
for text in texts:
    ids = np.array([tok.encode(text).ids], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    if "token_type_ids" in names:
        feeds["token_type_ids"] = np.zeros_like(ids)
    session.run(None, feeds)
print(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
"""

WORKER_MODULES = """
import json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
import django
django.setup()
from reviewapp.celery import app
app.loader.import_default_modules()  # what the worker imports before its first task
import benchmarks.rerank.services  # the task body's own imports
print(json.dumps(sorted(m for m in HEAVY if m in sys.modules)))
""".replace("HEAVY", repr(HEAVY))


def _hwm_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmHWM")).split()[1])


def _run(database_url: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench_rss-"))
    queue = f"rss-{os.getpid()}"
    env = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": REDIS_URL, "DEBUG": "0",
           "LOG_LEVEL": "WARNING", "VAR_DIR": str(tmp / "var"), "CELERY_TASK_ALWAYS_EAGER": "0",
           "CELERY_QUEUE": queue, "EMBEDDING_CACHE_DIR": ""}
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "REDIS_URL", "VAR_DIR", "CELERY_TASK_ALWAYS_EAGER",
                                           "CELERY_QUEUE", "DEBUG", "LOG_LEVEL", "EMBEDDING_CACHE_DIR")})
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
    import django

    django.setup()
    from django.db import connection

    from benchmarks.corpus.models import Provision
    from benchmarks.rerank import services as rerank
    from benchmarks.rerank.models import RerankRun
    from benchmarks.retrieval.models import RetrievalRun
    from benchmarks.suites.models import SuiteQuery
    from reviewapp.providers.local.embeddings import model_files

    opts = SimpleNamespace(sections=200, queries=12)
    retrieval_id = bench_scaleout._setup(opts)
    texts = [f"{heading} {body}" for heading, body in Provision.objects.values_list("heading", "body")]
    texts += list(SuiteQuery.objects.values_list("text", flat=True))
    (tmp / "texts.json").write_text(json.dumps(texts))

    procs = bench_scaleout._workers(1, env, tmp, "rss")
    try:
        bench_scaleout._wait_for_workers(1, time.monotonic() + 120)
        retrieval = RetrievalRun.objects.get(pk=retrieval_id)
        started = time.perf_counter()
        run_id = rerank.rerank_run_create(retrieval_run=retrieval, provider="local").pk
        connection.close()
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            status = RerankRun.objects.filter(pk=run_id).values_list("status", flat=True).first()
            if status in ("done", "stopped", "cancelled", "failed"):
                break
            time.sleep(0.2)
        elapsed = time.perf_counter() - started
        worker_kib = _hwm_kib(procs[0].pid)
    finally:
        bench_scaleout._stop(procs)
    files = model_files()
    naive = subprocess.run([sys.executable, "-c", NAIVE, str(files.model), str(files.tokenizer),
                            str(tmp / "texts.json")], capture_output=True, text=True, check=True)
    naive_kib = int(naive.stdout.strip().splitlines()[-1])
    held = subprocess.run([sys.executable, "-c", WORKER_MODULES], cwd=REPO, env=env, capture_output=True,
                          text=True, check=False)
    print(f"  rerank run ({status}, {elapsed:.1f} s): worker peak RSS {worker_kib / 1024:.0f} MiB | naive "
          f"onnxruntime process, same {len(texts)} texts, {naive_kib / 1024:.0f} MiB | x{worker_kib / naive_kib:.2f} "
          f"[goal <= 1.3] (load {os.getloadavg()[0]:.2f})")
    report(bench=BENCH, what="Celery worker peak RSS during a local-model rerank run",
           ours=f"{worker_kib / 1024:.0f} MiB",
           peer=f"naive onnxruntime + tokenizers process, same {len(texts)} texts, {naive_kib / 1024:.0f} MiB",
           ratio=worker_kib / naive_kib, goal_ratio=GOAL_RATIO, goal=f"<= {GOAL_RATIO}")
    loaded = held.stdout.strip().splitlines()[-1] if held.returncode == 0 else held.stderr[-300:]
    print(f"  heavy modules in the worker before its first task: {loaded}")
    shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    why = bench_scaleout._unreachable(SimpleNamespace(database_url=DATABASE_URL, redis_url=REDIS_URL))
    if why:
        print(f"bench_worker_rss: skipped: {why}")
        return 0
    print(f"bench_worker_rss: 1 Celery worker (--pool=solo), one local-model rerank run; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}")
    with scratch_postgres(DATABASE_URL, prefix=DATABASE_URL.rsplit("/", 1)[1]) as url:
        _run(url)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
