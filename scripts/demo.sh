#!/usr/bin/env bash
# The product on its embedded defaults: SQLite under var/, a filesystem Celery
# broker, a real worker with its beat, the dev server on 127.0.0.1:8000. Ctrl-C stops it all.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export DEBUG="${DEBUG:-1}"

$PY manage.py preflight
$PY manage.py migrate --noinput
$PY manage.py demo_setup

# -B: celery beat inside the worker, running the sweeper that requeues jobs whose worker died (one process on
# one machine; a deployment runs beat as its own single process, see docker-compose.yml).
$PY -m celery -A reviewapp worker -B --pool=solo --loglevel=INFO --logfile=var/worker.log &
WORKER_PID=$!
cleanup() {
  kill "$WORKER_PID" 2>/dev/null || true
  wait "$WORKER_PID" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

echo "Worker started (log: var/worker.log). Serving on http://127.0.0.1:8000 (Ctrl-C stops everything)."
$PY manage.py runserver 127.0.0.1:8000 --noreload
