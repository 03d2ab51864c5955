"""The load benchmark (perf/service/bench_load.py) with a short duration, as CI runs it.

On PostgreSQL (DATABASE_URL) it runs as documented: its own bench_load database, Redis db 13, gunicorn with
4 workers and a Celery worker. Otherwise the same code on the embedded defaults (SQLite, filesystem broker)
with fewer reviewers. Asserts integrity only: every judgment acknowledged is stored, no request failed, the
rerank run finished. Never a timing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO_ROOT


def test_the_load_benchmark_stores_every_judgment_it_acknowledged_with_no_errors(tmp_path):
    on_postgres = os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://"))
    args = ["--duration", "4", "--think", "0.2,0.8"]
    if on_postgres:
        args += ["--reviewers", "20", "--items", "100"]
    else:
        args += ["--sqlite", "--reviewers", "5", "--items", "30", "--workers", "2"]
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "VAR_DIR")}
    if on_postgres and os.environ.get("REDIS_URL"):
        env["BENCH_LOAD_REDIS_URL"] = os.environ["REDIS_URL"].rsplit("/", 1)[0] + "/13"
    done = subprocess.run([sys.executable, str(REPO_ROOT / "perf" / "service" / "bench_load.py"), *args],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=400)
    result_line = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert result_line, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(result_line[-1].removeprefix("RESULT "))
    assert result["errors"] == 0, done.stdout[-3000:]
    assert result["sent"] == result["stored"] and result["sent"] > 0, done.stdout[-3000:]
    assert result["rerank_status"] == "done", done.stdout[-3000:]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
