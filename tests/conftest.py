"""Fixtures shared by every test: named users per role, real data, a Celery worker.

Environment switches (set by .ci/run):
- DATABASE_URL / REDIS_URL: run the same suite on PostgreSQL + Redis.
- TEST_REAL_WORKER=1: tasks go through the broker to a real ``celery worker``
  process started by the ``celery_worker`` fixture; otherwise they run eagerly.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import client_for, make_user

REAL_WORKER = os.environ.get("TEST_REAL_WORKER") == "1"
PROJECT_PASSWORD_HASHERS: list[str] = []
REPO_ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config):
    from django.conf import settings

    # Tests set and check passwords with the project's algorithm at one round (see factories); the project's own
    # list stays what test_access_deploy checks, through the project_password_hashers fixture.
    PROJECT_PASSWORD_HASHERS[:] = settings.PASSWORD_HASHERS
    settings.PASSWORD_HASHERS = ["tests.factories.OneRoundPBKDF2PasswordHasher", *PROJECT_PASSWORD_HASHERS]
    settings.CELERY_TASK_ALWAYS_EAGER = not REAL_WORKER
    from reviewapp.celery import app

    app.conf.task_always_eager = not REAL_WORKER
    app.conf.task_eager_propagates = True
    # Parallel test processes (pytest-xdist) each have their own test database, so each gets its own
    # queue: a worker started by one process must never take a task queued by another. Worker
    # processes started by tests inherit the variable and so consume the same queue.
    xdist_worker = os.environ.get("PYTEST_XDIST_WORKER")
    if xdist_worker:
        queue = f"test-{xdist_worker}"
        os.environ["CELERY_QUEUE"] = queue
        settings.CELERY_TASK_DEFAULT_QUEUE = queue
        app.conf.task_default_queue = queue


# Tests that start real processes (a browser, gunicorn, Celery workers, servers to kill): seconds each.
# `make test PYTEST_ARGS="-m 'not slow'"` leaves them out while working; CI runs everything.
SLOW_PATHS = ("tests/browser/", "tests/trust/faults/", "tests/trust/load/")


# Tests that walk a whole space: every URL for every role and method, every endpoint with fuzzed bodies, every
# page an admin can crawl, a whole backup, the real CUAD end to end, the review engine in any order of actions.
# Seconds to tens of seconds each, and what they check changes only when a URL, a role or a promise does:
# `make test-fast` leaves them out while you work; `make test` and both CI legs run them.
SWEEPS = (
    "tests/trust/access/test_access_matrix.py::",
    "tests/trust/access/test_blind_crawl.py::",
    "tests/trust/fuzz/test_fuzz_runs_and_judgments.py::",
    "tests/trust/fuzz/test_fuzz_importers.py::",
    "tests/trust/data/test_backup_restore.py::",
    "tests/trust/data/test_secrets.py::test_a_planted_provider_key_appears_nowhere",
    "tests/trust/access/test_access_deploy.py::test_every_unsafe_endpoint_refuses_a_post_without_the_csrf_token",
    "tests/trust/fuzz/test_input_bounds.py::test_deeply_nested_json_is_a_400_on_every_endpoint_and_upload",
    "tests/api/test_schema_fuzz.py::test_every_get_operation_answers_as_its_schema_declares",
    "tests/api/test_generated_client.py::test_every_read_endpoint_answers_in_the_shape_the_schema_declares",
    "tests/grading/management/test_cuad_real_data.py::",
    "tests/reviewapp/review/test_engine_stateful.py::test_the_review_engine_keeps_its_promises_in_any_order",
    "tests/scoring/cuad/test_cuad_fast_paths.py::test_words_equal_the_regular_expression_on_every_character",
    "tests/scoring/ir/test_bootstrap_numbers_kept.py::",
    "tests/benchmarks/corpus/test_whole_source.py::test_every_hrs_section_equals_an_independent_line_scan_of_its_page",
    "tests/scoring/ir/test_trec_eval_reading.py::test_a_run_file_reads_as_trec_eval_reads_it_or_is_refused_by_line",
    "tests/scoring/ir/test_trec_eval_reading.py::test_a_qrels_file_reads_as_trec_eval_reads_it_or_is_refused_by_line",
    "tests/reviewapp/review/workspace/test_queue_scale.py::test_the_queue_page_and_the_item_page_cost_a_fixed_number_of_"
    "queries_whatever_the_queue_length[10000]",
)
FAST_ONLY = ("notslow", "notslowandnotsweep", "notsweepandnotslow")


def pytest_ignore_collect(collection_path, config):
    """Under `-m "not slow"` the slow paths are not even imported (Playwright, the fault harness): every test in
    them is slow, so none would be selected, and importing them cost each process's collection seconds."""
    if config.getoption("markexpr").replace(" ", "") not in FAST_ONLY:
        return None
    path = collection_path.resolve()
    if not path.is_relative_to(REPO_ROOT):
        return None
    relative = path.relative_to(REPO_ROOT).as_posix() + ("/" if path.is_dir() else "")
    return True if relative.startswith(SLOW_PATHS) else None


@pytest.hookimpl(tryfirst=True)  # marks added before `-m` selects on them
def pytest_collection_modifyitems(config, items):
    for item in items:
        path = Path(str(item.fspath)).resolve().relative_to(REPO_ROOT).as_posix()
        if path.startswith(SLOW_PATHS) or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)
        if item.nodeid.startswith(SWEEPS):
            item.add_marker(pytest.mark.sweep)
    # A renamed or moved test would silently leave the sweeps and slow every `make test-fast`: an entry's file must
    # exist, and an entry naming a test must name a function of its module whenever that module is collected.
    modules = {item.nodeid.split("::", 1)[0]: item.module for item in items if hasattr(item, "module")}
    stale = []
    for entry in SWEEPS:
        path, test = entry.split("::", 1)
        test = test.split("[", 1)[0]  # an entry may name one parameter set of a test
        if not (REPO_ROOT / path).is_file() or (
                test and path in modules and not any(name.startswith(test) for name in vars(modules[path]))):
            stale.append(entry)
    if stale:
        raise pytest.UsageError(f"tests/conftest.py SWEEPS names no test of its module: {', '.join(stale)}")
    # Tests of real concurrency need two writers at once, which SQLite never allows: on SQLite they are not
    # collected (deselected, so no test skips itself), and CI runs them on PostgreSQL.
    from django.conf import settings

    if "postgresql" not in settings.DATABASES["default"]["ENGINE"]:
        _deselect(config, items, lambda item: item.get_closest_marker("postgresql") is not None)
    # CI's second engine leg: a test that never opens the database (pure scoring, parsers, settings parsing)
    # gives the same answer on every engine, so it runs once, on the SQLite leg; the second leg runs every test
    # that touches the database and every test that drives real processes (they read DATABASE_URL themselves).
    if os.environ.get("TEST_DATABASE_TESTS_ONLY") == "1":
        _deselect(config, items, lambda item: not (_touches_database(item) or item.get_closest_marker("slow")))


DATABASE_FIXTURES = frozenset({"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback",
                               "live_server", "django_db_setup"})


def _touches_database(item: pytest.Item) -> bool:
    """pytest-django refuses database access to a test that neither carries ``django_db`` nor requests one of its
    database fixtures (directly or through another fixture), so these two checks find every test that can."""
    if item.get_closest_marker("django_db") is not None:
        return True
    return bool(DATABASE_FIXTURES.intersection(getattr(item, "fixturenames", ())))


def _deselect(config, items: list, leave_out) -> None:
    deselected = [item for item in items if leave_out(item)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not leave_out(item)]


@pytest.fixture(scope="session")
def django_db_setup(request, django_test_environment, django_db_blocker, django_db_use_migrations, django_db_keepdb,
                    django_db_createdb, django_db_modify_db_settings):
    """pytest-django's test database setup, except that an in-memory SQLite database is copied from a migrated
    template instead of each process running every migration again (see tests/sqlite_template.py)."""
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases
    from pytest_django.fixtures import _disable_migrations, _get_databases_for_setup

    from tests.sqlite_template import setup_from_template, template_applies

    keepdb = django_db_keepdb and not django_db_createdb
    if not django_db_use_migrations:
        _disable_migrations()
    aliases, serialized_aliases = _get_databases_for_setup(request.session.items)
    verbosity = request.config.option.verbose
    with django_db_blocker.unblock():
        if aliases == {"default"} and template_applies(connection, use_migrations=django_db_use_migrations,
                                                       keepdb=keepdb):
            db_cfg = setup_from_template(connection, setup_databases=setup_databases, verbosity=verbosity,
                                         serialized="default" in serialized_aliases)
        else:
            db_cfg = setup_databases(verbosity=verbosity, interactive=False, aliases=aliases,
                                     serialized_aliases=serialized_aliases, keepdb=keepdb)
    yield
    if not django_db_keepdb:
        with django_db_blocker.unblock():
            _end_other_sessions(connection)
            teardown_databases(db_cfg, verbosity=verbosity)


def _end_other_sessions(connection) -> None:
    """On PostgreSQL, end every other session on the test database before it is dropped, and say which.

    A process a test started and stopped (the Celery worker, gunicorn, a worker killed on purpose) can leave its
    server session behind for a moment after it died; DROP DATABASE then failed the whole run after every test
    had passed ("being accessed by other users", seen once in CI). The sessions are named on stderr, so a test
    that leaks a process still shows.
    """
    if connection.vendor != "postgresql":
        return
    name = connection.settings_dict["NAME"]
    connection.close()  # this process's own session: teardown closes it anyway, and it is not left behind
    with connection._nodb_cursor() as cursor:
        cursor.execute("SELECT pid, application_name, state, backend_start FROM pg_stat_activity "
                       "WHERE datname = %s AND pid <> pg_backend_pid()", [name])
        others = cursor.fetchall()
        for pid, *about in others:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
            sys.stderr.write(f"\ntest database {name}: ended a session left open: pid {pid} {about}\n")


@pytest.fixture
def project_password_hashers(settings):
    """The project's own PASSWORD_HASHERS, for a test of that setting (every other test hashes at one round)."""
    settings.PASSWORD_HASHERS = list(PROJECT_PASSWORD_HASHERS)
    return settings


@pytest.fixture(autouse=True)
def _processes_hash_as_deployed(request):
    """Tests that drive real processes (marked slow) hash at the project's full cost: a burst of sign-ins
    against gunicorn must cost what production's does, so a race cannot pass because hashing became cheap."""
    if request.node.get_closest_marker("slow") is not None:
        request.getfixturevalue("project_password_hashers")


@pytest.fixture
def admin_user_(django_user_model, db):
    return make_user(django_user_model, "alice_admin", "admin", staff=True)


@pytest.fixture
def reviewer_user(django_user_model, db):
    return make_user(django_user_model, "rita_reviewer", "reviewer")


@pytest.fixture
def reviewer2_user(django_user_model, db):
    return make_user(django_user_model, "rob_reviewer", "reviewer")


@pytest.fixture
def stakeholder_user(django_user_model, db):
    return make_user(django_user_model, "sam_stakeholder", "stakeholder")


@pytest.fixture
def admin_client_(admin_user_):
    return client_for(admin_user_)


@pytest.fixture
def reviewer_client(reviewer_user):
    return client_for(reviewer_user)


@pytest.fixture
def stakeholder_client(stakeholder_user):
    return client_for(stakeholder_user)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real data folder. Absent data is a failure, never a skip: CI must exercise it."""
    from django.conf import settings

    path = Path(settings.DATA_DIR)
    if not (path / "cuad" / "CUAD_v1.json").is_file() or not (path / "statutes").is_dir():
        pytest.fail(f"real data not found under DATA_DIR={path}; set DATA_DIR (see README, 'Data')")
    return path


def _database_url_for_worker() -> str:
    from django.db import connection

    cfg = connection.settings_dict
    if connection.vendor == "postgresql":
        user = cfg.get("USER") or "postgres"
        password = f":{cfg['PASSWORD']}" if cfg.get("PASSWORD") else ""
        host = cfg.get("HOST") or "127.0.0.1"
        port = cfg.get("PORT") or 5432
        return f"postgres://{user}{password}@{host}:{port}/{cfg['NAME']}"
    return f"sqlite:///{cfg['NAME']}"


@pytest.fixture(scope="session")
def _worker_process(django_db_setup, django_db_blocker, tmp_path_factory):
    if not REAL_WORKER:
        yield None
        return
    with django_db_blocker.unblock():
        database_url = _database_url_for_worker()
    log_path = tmp_path_factory.mktemp("worker") / "worker.log"
    env = {**os.environ, "DATABASE_URL": database_url, "CELERY_TASK_ALWAYS_EAGER": "0"}
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "reviewapp", "worker", "--pool=solo",
             "--loglevel=INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"],
            cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    try:
        yield {"process": process, "log": log_path, "database_url": database_url}
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture
def celery_worker(_worker_process, transactional_db):
    """A real worker when TEST_REAL_WORKER=1 (tests must then use committed data), else eager tasks."""
    if _worker_process is not None and _worker_process["process"].poll() is not None:
        pytest.fail("the Celery worker died; log:\n" + Path(_worker_process["log"]).read_text()[-4000:])
    return _worker_process
