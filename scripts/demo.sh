#!/usr/bin/env bash
# The product on its embedded defaults: SQLite under var/, a filesystem Celery
# broker, a real worker with its beat, the dev server on $HOST:$PORT (127.0.0.1:8000 unless set, e.g.
# `make demo PORT=8123`). Ctrl-C stops it all.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export DEBUG="${DEBUG:-1}"
HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-8000}"
case "$PORT" in
  ''|*[!0-9]*) echo "PORT must be a number, got '$PORT'" >&2; exit 2 ;;
esac

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

echo "Worker started (log: var/worker.log). Serving on http://$HOST:$PORT (Ctrl-C stops everything)."
$PY manage.py runserver "$HOST:$PORT" --noreload
