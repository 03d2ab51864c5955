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

MODEL_PORT="${MODEL_PORT:-8081}"
case "$MODEL_PORT" in
  ''|*[!0-9]*) echo "MODEL_PORT must be a number, got '$MODEL_PORT'" >&2; exit 2 ;;
esac

$PY manage.py preflight
$PY manage.py migrate --noinput

# The bundled real model (SmolLM2-135M-Instruct Q4_1 on llama.cpp, two threads) beside the worker: demo_setup runs
# it as the fourth system of both leaderboards, and runs launched from the pages can choose it (base URL below).
# MODEL_SERVER=0 leaves it out. Its log: var/model-server.log.
MODEL_PID=""
WORKER_PID=""
cleanup() {
  for pid in $WORKER_PID $MODEL_PID; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT INT TERM
mkdir -p var
if [ "${MODEL_SERVER:-1}" != "0" ]; then
  $PY manage.py model_server --port "$MODEL_PORT" >var/model-server.log 2>&1 &
  MODEL_PID=$!
  export DEMO_MODEL_SERVER_URL="http://127.0.0.1:$MODEL_PORT/v1"
  # llama-cpp-python's server takes a JSON schema as {"type": "json_object", "schema": ...}; one model on a shared
  # CPU answers one request at a time (~30 prompt tokens/s on a busy 2-core machine), so requests may take minutes.
  export OPENAI_COMPATIBLE_JSON_OBJECT_ORIGINS="${OPENAI_COMPATIBLE_JSON_OBJECT_ORIGINS:-http://127.0.0.1:$MODEL_PORT}"
  export PROVIDER_TIMEOUT_SECONDS="${PROVIDER_TIMEOUT_SECONDS:-600}"
  echo "Model server starting on $DEMO_MODEL_SERVER_URL (log: var/model-server.log)."
fi

$PY manage.py demo_setup

# -B: celery beat inside the worker, running the sweeper that requeues jobs whose worker died (one process on
# one machine; a deployment runs beat as its own single process, see docker-compose.yml).
$PY -m celery -A reviewapp worker -B --pool=solo --loglevel=INFO --logfile=var/worker.log &
WORKER_PID=$!

echo "Worker started (log: var/worker.log). Serving on http://$HOST:$PORT (Ctrl-C stops everything)."
$PY manage.py runserver "$HOST:$PORT" --noreload
