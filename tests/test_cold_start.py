"""Importing the URL config loads no module that only a request handler needs.

Each gunicorn worker (or the --preload master) imports the URL config before its
first request; scipy.optimize, bm25s, httpx and the model runtimes belong to the
handlers that use them. Checked in a fresh interpreter, where nothing was imported before.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test probes a fresh Python process
ROOT = Path(__file__).resolve().parents[1]


def _probe(code: str, *args: str, unset: tuple[str, ...] = ("DJANGO_SETTINGS_MODULE",)) -> object:
    """Runs ``code`` in a fresh interpreter (nothing imported before, ``unset`` variables gone) and returns the
    JSON its last output line prints."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in unset:
        env.pop(name, None)
    result = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])

HANDLER_ONLY = ("scipy", "scipy.optimize", "scipy.stats", "scipy.sparse", "bm25s", "httpx",
                "onnxruntime", "tokenizers", "lxml.etree")

PROBE = (
    "import json, os, sys\n"
    "os.environ['DJANGO_SETTINGS_MODULE'] = 'reviewapp.settings'\n"
    "import django\n"
    "django.setup()\n"
    "import reviewapp.urls\n"
    "from django.urls import get_resolver\n"
    "get_resolver().url_patterns\n"
    f"print(json.dumps(sorted(m for m in {HANDLER_ONLY!r} if m in sys.modules)))\n"
)


def test_importing_the_url_config_loads_no_handler_only_module():
    loaded = _probe(PROBE)
    assert loaded == [], f"imported with the URL config: {', '.join(loaded)}"


BLAS_PROBE = (
    "import json, os, sys\n"
    "os.environ.pop('OPENBLAS_NUM_THREADS', None)\n"
    "import reviewapp\n"
    "print(json.dumps([os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules]))\n"
)


def test_the_project_package_asks_for_one_blas_thread_before_numpy_is_loaded():
    # OpenBLAS reads its thread count once, when numpy first loads it: the setting must precede that.
    assert _probe(BLAS_PROBE, unset=("OPENBLAS_NUM_THREADS",)) == ["1", False]


COMMAND_ONLY_NOT = ("reviewapp.urls", "drf_spectacular.extensions", "drf_spectacular.plumbing", "rest_framework.test",
                    "django.test", "scipy", "benchmarks.reports.exposure", "benchmarks.reports.leaderboard")

COMMAND_PROBE = (
    "import json, os, sys\n"
    "os.environ['DJANGO_SETTINGS_MODULE'] = 'reviewapp.settings'\n"
    "from django.core.management import execute_from_command_line\n"
    "# As `manage.py relevance_metrics ...` runs it: system checks included unless the command opts out.\n"
    "execute_from_command_line(['manage.py', 'relevance_metrics', '--qrels', sys.argv[1], '--run', sys.argv[2],"
    " '--json', '--replicates', '1'])\n"
    f"print(json.dumps(sorted(m for m in {COMMAND_ONLY_NOT!r} if m in sys.modules)))\n"
)


def test_the_relevance_metrics_process_loads_neither_the_schema_tools_nor_the_report_modules(tmp_path):
    # A whole-process figure beside ir_measures: start-up is most of it at 1,000 queries, so the command's
    # process must not pay for the URL config (system checks), the API schema tooling (drf-spectacular pulls in
    # django.test) or the report pages.
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d3 2\n")
    run.write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\nq2 Q0 d3 1 1.5 x\n")
    loaded = _probe(COMMAND_PROBE, str(qrels), str(run))
    assert loaded == [], f"imported by the relevance_metrics process: {', '.join(loaded)}"


CUAD_COMMAND_PROBE = (
    "import json, os, sys\n"
    "os.environ['DJANGO_SETTINGS_MODULE'] = 'reviewapp.settings'\n"
    "import django\n"
    "django.setup()\n"
    "from django.core.management import load_command_class\n"
    "for name in ('load_cuad', 'sample_cuad', 'grade_cuad'):\n"
    "    load_command_class('grading', name)\n"
    "print(json.dumps(sorted(m for m in ('celery', 'kombu', 'reviewapp.celery', 'reviewapp.urls', 'scipy.optimize')"
    " if m in sys.modules)))\n"
)


def test_the_cuad_commands_load_neither_celery_nor_the_url_config():
    # load_cuad, sample_cuad and grade_cuad send no task: Celery (~0.2 s of a process) stays unloaded.
    loaded = _probe(CUAD_COMMAND_PROBE)
    assert loaded == [], f"imported by the CUAD commands: {', '.join(loaded)}"


TASK_APP_PROBE = (
    "import json, os, sys\n"
    "os.environ['DJANGO_SETTINGS_MODULE'] = 'reviewapp.settings'\n"
    "import django\n"
    "django.setup()\n"
    "before = 'celery' in sys.modules\n"
    "from reviewapp.celery import app\n"
    "app.loader.import_default_modules()  # what `celery -A reviewapp worker` does before its first task\n"
    "names = {'benchmarks.rerank_run_execute', 'grading.runs.tasks.extract_run', 'grading.runs.tasks.grade_run',\n"
    "         'grading.runs.tasks.audit_run', 'reviewapp.worker_ping', 'reviewapp.jobs_sweep'}\n"
    "registered = {n: bool(app.tasks[n].acks_late) for n in sorted(names) if n in app.tasks}\n"
    "from grading.runs.models import ConsoleJob\n"
    "from reviewapp.core.jobs import job_task\n"
    "sent = job_task(ConsoleJob(kind='extract'))  # what a sender resolves: the worker's app, its broker\n"
    "print(json.dumps([before, registered, sent.name, sent.app is app, app.conf.broker_url.split(':')[0]]))\n"
)


def test_every_task_is_registered_on_the_app_the_worker_runs_under_its_old_name():
    # Tasks are @shared_task: the worker's app (reviewapp.celery) finds them by autodiscovery, under the names
    # (and so the routes) they had when each tasks module bound them to the app; a sender resolves the same task
    # on the same app and broker (a task sent through Celery's default app would go to an AMQP broker nobody runs).
    before, registered, sent, same_app, scheme = _probe(TASK_APP_PROBE, unset=("DJANGO_SETTINGS_MODULE", "REDIS_URL"))
    assert before is False
    assert registered == {"benchmarks.rerank_run_execute": True, "grading.runs.tasks.audit_run": True,
                          "grading.runs.tasks.extract_run": True, "grading.runs.tasks.grade_run": True,
                          "reviewapp.jobs_sweep": True, "reviewapp.worker_ping": True}  # acks late: settings
    assert sent == "grading.runs.tasks.extract_run" and same_app is True
    assert scheme == "filesystem"


SENDER_PROBE = (
    "import json, os, sys\n"
    "os.environ['DJANGO_SETTINGS_MODULE'] = 'reviewapp.settings'\n"
    "import django\n"
    "django.setup()\n"
    "from reviewapp.core.jobs import celery_app\n"
    "from grading.audits.tasks import audit_run\n"
    "app = celery_app()  # what job_enqueue does before it sends\n"
    "print(json.dumps([audit_run.app is app, app.main, audit_run.name]))\n"
)


def test_a_process_that_sends_a_job_sends_it_through_the_workers_app():
    same, main, name = _probe(SENDER_PROBE, unset=("DJANGO_SETTINGS_MODULE", "REDIS_URL"))
    assert same is True and main == "reviewapp" and name == "grading.runs.tasks.audit_run"


WSGI_CELERY_PROBE = (
    "import json, os, sys\n"
    "os.environ['DJANGO_SETTINGS_MODULE'] = 'reviewapp.settings'\n"
    "import reviewapp.wsgi\n"
    "print(json.dumps('reviewapp.celery' in sys.modules))\n"
)


def test_the_web_process_leaves_its_celery_app_to_its_first_task():
    # A web process needs the app only to send a task (a launch, an audit): loaded in the --preload master it cost
    # every start ~45 ms for a first launch ~45 ms faster (the web start goal). reviewapp.core.jobs loads
    # it before the first send (test_a_process_that_sends_a_job_sends_it_through_the_workers_app).
    assert _probe(WSGI_CELERY_PROBE) is False


WORKER_PROBE = (
    "import json, os, sys\n"
    "os.environ.pop('CELERY_SKIP_CHECKS', None)\n"
    "os.environ['DJANGO_SETTINGS_MODULE'] = 'reviewapp.settings'\n"
    "import django\n"
    "django.setup()\n"
    "from reviewapp.celery import app\n"
    "app.loader.import_default_modules()  # what `celery -A reviewapp worker` does before its first task\n"
    "print(json.dumps(sorted(m for m in ('reviewapp.urls', 'drf_spectacular.plumbing', 'django.test', 'scipy')"
    " if m in sys.modules)))\n"
)


def test_a_celery_worker_starts_without_the_url_config():
    # Celery's Django fixup would run the system checks at start-up, and the URL checks import every view and
    # the schema tooling into a process that only runs tasks (~27 MiB of a rerank worker's peak).
    loaded = _probe(WORKER_PROBE, unset=("DJANGO_SETTINGS_MODULE", "CELERY_SKIP_CHECKS"))
    assert loaded == [], f"imported by a worker before its first task: {', '.join(loaded)}"


PRELOAD_PROBE = (
    "import json, os, sys\n"
    "os.environ['DJANGO_SETTINGS_MODULE'] = 'reviewapp.settings'\n"
    "import reviewapp.wsgi  # what gunicorn --preload's master imports before it forks the workers\n"
    "from contextlib import suppress\n"
    "from django.template import base\n"
    "from django.template.loader import get_template\n"
    "from django.urls import NoReverseMatch, URLResolver, get_resolver, resolve, reverse\n"
    "built, compiled = [], []\n"
    "populate, compile_nodelist = URLResolver._populate, base.Template.compile_nodelist\n"
    "URLResolver._populate = lambda self: (built.append(str(self.pattern)), populate(self))[1]\n"
    "base.Template.compile_nodelist = lambda self: (compiled.append(self.name), compile_nodelist(self))[1]\n"
    "def names(resolver, prefix):\n"
    "    yield from (prefix + n for n in resolver.reverse_dict if isinstance(n, str))\n"
    "    for ns, (_, sub) in resolver.namespace_dict.items():\n"
    "        yield from names(sub, f'{prefix}{ns}:')\n"
    "for name in list(names(get_resolver(), '')):\n"
    "    with suppress(NoReverseMatch):\n"
    "        reverse(name)\n"
    "resolve('/benchmarks/rerank/1/')\n"
    "for name in ('base.html', 'home.html', 'benchmarks/rerank_run.html', 'benchmarks/chapter.html'):\n"
    "    get_template(name)\n"
    "from django.db import connections\n"
    "connected = any(c.connection is not None for c in connections.all(initialized_only=True))\n"
    "print(json.dumps([sorted(set(built)), compiled, connected]))\n"
)


def test_the_preloaded_master_builds_what_every_page_shares_and_leaves_each_pages_own_templates():
    # A forked worker's first request built the URL reverse tables (one per namespace named: 70-160 ms more than
    # its second request) and compiled the layout every page extends. The master does both once, before forking,
    # and opens no database connection a worker would inherit. A page's own template is compiled by its first
    # request (~1 ms each; compiling all 90 in the master cost every start ~90 ms, reviewapp.core.warmup).
    built, compiled, connected = _probe(PRELOAD_PROBE)
    assert built == [], f"URL reverse tables built after start-up: {built}"
    assert compiled == ["home.html", "benchmarks/rerank_run.html", "benchmarks/chapter.html"], compiled
    assert connected is False


CHECK_PROBE = (
    "import json, os, sys\n"
    "os.environ['DJANGO_SETTINGS_MODULE'] = 'reviewapp.settings'\n"
    "os.environ.pop('DATABASE_URL', None)\n"
    "import django\n"
    "django.setup()\n"
    "from django.core.management import call_command\n"
    "call_command('check', verbosity=0)\n"
    "views = sorted(m for m in sys.modules if m.split('.')[0] in ('reviewapp', 'benchmarks', 'grading')\n"
    "               and m.rsplit('.', 1)[-1] in ('views', 'api', 'admin_views'))\n"
    "heavy = sorted(m for m in ('numpy', 'scipy', 'psycopg', 'rest_framework.renderers', 'drf_spectacular.views',\n"
    "                           'requests') if m in sys.modules)\n"
    "print(json.dumps([views, heavy]))\n"
)


def test_manage_py_check_imports_no_view_no_drf_no_numpy_and_on_sqlite_no_psycopg():
    # The URL config names its views by dotted path (reviewapp.core.http.lazy_views), DRF is not an app (its template
    # tags pulled in DRF, psycopg, requests and pygments), and the schema extension loads with the schema only.
    views, heavy = _probe(CHECK_PROBE)
    assert views == [], f"imported by manage.py check: {', '.join(views)}"
    assert heavy == [], f"imported by manage.py check: {', '.join(heavy)}"


LAZY_VIEWS = (
    "from django.urls import get_resolver\n"
    "from reviewapp.core.http.lazy_views import LazyView\n"
    "def lazies(patterns):\n"
    "    for p in patterns:\n"
    "        if hasattr(p, 'url_patterns'):\n"
    "            yield from lazies(p.url_patterns)\n"
    "        elif isinstance(p.callback, LazyView):\n"
    "            yield p.callback\n"
    "found = list(lazies(get_resolver().url_patterns))\n"
)
WARM_PROBE = (
    "import json, os, sys\n"
    "os.environ['DJANGO_SETTINGS_MODULE'] = 'reviewapp.settings'\n"
    "import django\n"
    "django.setup()\n"
    "from reviewapp.core.warmup import warm_up\n"
    "warm_up()\n"
    f"{LAZY_VIEWS}"
    "print(json.dumps([len(found), sum(1 for v in found if v._view is None), 'numpy' in sys.modules]))\n"
)


def test_a_web_master_loads_what_pages_share_and_leaves_each_view_to_its_first_request():
    # Importing every view in the master made the web start 3.75-4.2x a bare Django project's (the goal: at most
    # 2x); numpy, reached by every page with figures, is the one heavy import pages share (~45 ms).
    total, unresolved, numpy_loaded = _probe(WARM_PROBE)
    assert total > 100 and unresolved == total and numpy_loaded


PAGES_PROBE = (
    "import json, os, sys\n"
    "os.environ['DJANGO_SETTINGS_MODULE'] = 'reviewapp.settings'\n"
    "os.environ.pop('DATABASE_URL', None)\n"
    "import django\n"
    "django.setup()\n"
    "from reviewapp.core.warmup import warm_up\n"
    "warm_up()\n"
    f"{LAZY_VIEWS}"
    "for view in found:\n"
    "    view.resolve()\n"
    "print(json.dumps(sorted(m for m in ('psycopg', 'django.contrib.postgres.forms', 'scipy', 'scipy.sparse',\n"
    "                                    'jsonschema') if sys.modules.get(m) is not None)))\n"
)


def test_a_web_process_on_sqlite_loads_no_psycopg_scipy_or_jsonschema_with_its_views():
    # Every view imported (as a worker has after serving each page once); these are not needed by any page: psycopg
    # came through DRF's compat import of django.contrib.postgres, scipy.sparse through the leaderboards' import of
    # the nearest-example baseline, jsonschema through the provider layer. Each loads where it is used.
    assert _probe(PAGES_PROBE) == []


VALIDATORS_PROBE = (
    "import json, os\n"
    "os.environ['DJANGO_SETTINGS_MODULE'] = 'reviewapp.settings'\n"
    "import django\n"
    "django.setup()\n"
    "from django.contrib.auth.password_validation import get_default_password_validators\n"
    "from reviewapp.core.warmup import warm_up\n"
    "warm_up()\n"
    "print(json.dumps(get_default_password_validators.cache_info().misses))\n"
)


def test_the_password_validators_are_built_before_the_first_request():
    # The password-change page's first request read the common-password list (a gzip of 20,000 words): +107 ms
    # over its warm median in the start-up bench. Built once in the master, a worker's first request finds it.
    assert _probe(VALIDATORS_PROBE) == 1


GC_AFTER_START_PROBE = (
    "import gc, json, os, runpy, sys\n"
    "os.environ['DJANGO_SETTINGS_MODULE'] = 'reviewapp.settings'\n"
    "{start}\n"
    "print(json.dumps([gc.isenabled(), gc.get_freeze_count()]))\n"
)


@pytest.mark.parametrize("start", [
    "import reviewapp.wsgi",
    "sys.argv = ['manage.py', 'check']; runpy.run_path('manage.py', run_name='__main__')",
])
def test_a_started_process_collects_garbage_again_with_its_start_up_objects_frozen(start):
    # reviewapp.startup pauses the collector while Django starts: it must be back on afterwards (a process that
    # never collected would grow without bound), with what start-up made frozen.
    enabled, frozen = _probe(GC_AFTER_START_PROBE.format(start=start))
    assert enabled is True and frozen > 50_000  # the settings, apps and models at least (about 87k for check)
