"""Pages on gunicorn as docker-compose runs it: each worker's first request, and the pages that list many rows.

Fills a scratch database with the real Hawaii statutes (read in place from ``DATA_DIR/statutes/hrs``), a suite
of HRS questions with its keyword retrieval run (k=30), and a finished rerank run of >= 1,014 grade rows
(graded by the loopback model server, the fake provider the tests use: no model, no network). Then starts
gunicorn with the ``web`` command of docker-compose.yml (``--preload``; only the bind address is loopback and
the worker count is ``--workers``) in the compose environment (PRODUCTION=1, static files collected as the
Dockerfile does; requests carry ``X-Forwarded-Proto: https`` as the TLS proxy in front would), logs in through
the login form as an admin and as a stakeholder, and measures:

(a) the first request each freshly forked worker serves versus a warm request of the same URL: gunicorn is
    started ``--rounds`` times; after each start, requests are sent one at a time (sync workers close every
    connection) until every worker has answered once; the access log's worker pid tells which request was a
    worker's first. Goal: the slowest first request of the home page < 100 ms; of the rerank run page (~60 ms
    warm by itself), < 100 ms more than its warm median.
(b) the HRS chapter 346 page and the rerank run page with its grades table (first and last page, a status
    filter, the stakeholder's view): warm median and p95 of ``--repeats`` requests each. Goal: p95 < 300 ms.

Also prints the SQL queries each page runs (in-process, django's CaptureQueriesContext). Reports each figure
through perf.figures.report(bench="pages"). SQLite in a temporary folder by default; with
BENCH_DATABASE_URL=postgres://... a database of this run's own on that server (perf/scratch_db.py), dropped by
this run only. The Redis cache compose uses (production settings refuse to start without a shared cache for the
login limit): BENCH_REDIS_URL, by default database 13 of the local server, emptied first. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from perf.figures import load_average, report  # noqa: E402
from perf.scratch_db import scratch_postgres  # noqa: E402

BIN = Path(sys.executable).parent
BENCH = "pages"
MIN_GRADES = 1014  # the grade rows of the run the issue measured
CHAPTER = "346"
PASSWORD = "bench-pages-" + secrets.token_hex(8)
ACCESS_FORMAT = "%(p)s %(s)s %(M)s %(U)s"  # worker pid, status, ms, path: tells a worker's first request
BOOTED = re.compile(r"Booting worker with pid: (\d+)")


def _options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (compose runs 4)")
    parser.add_argument("--rounds", type=int, default=3, help="gunicorn starts for the first-request figure")
    parser.add_argument("--repeats", type=int, default=20, help="warm requests per page")
    parser.add_argument("--queries", type=int, default=35, help="HRS questions in the suite (30 candidates each)")
    parser.add_argument("--parts", default="a,b", help="a = first requests, b = warm pages (default both)")
    return parser.parse_args(argv)


def compose_web_command() -> list[str]:
    """The ``web`` service's command in docker-compose.yml, as a list (read as YAML, as the slow-client test does)."""
    import yaml

    command = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]["web"].get("command")
    if not isinstance(command, list) or "gunicorn" not in command:
        raise SystemExit("bench_pages: no gunicorn command in docker-compose.yml's web service")
    return [str(part) for part in command]


def gunicorn_args(port: int, workers: int, access_log: Path) -> list[str]:
    """Compose's command with a loopback bind, ``workers`` workers and an access log naming each worker."""
    args = compose_web_command()
    args[0] = str(BIN / "gunicorn")
    args[args.index("--bind") + 1] = f"127.0.0.1:{port}"
    args[args.index("--workers") + 1] = str(workers)
    return [*args, "--access-logfile", str(access_log), "--access-logformat", ACCESS_FORMAT]


# --------------------------------------------------------------------------- the world


@dataclass(frozen=True)
class World:
    run_id: int
    grades: int
    pages: int  # pages of the grades table
    chapter_sections: int


def _build_world(queries: int) -> World:
    """Migrate; import HRS; a suite of HRS questions, its retrieval run, a finished rerank run; two users."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    from benchmarks.corpus.models import Provision
    from benchmarks.corpus.selectors import corpus_current_snapshots
    from benchmarks.corpus.services import statutes_import
    from benchmarks.rerank import services as rerank
    from benchmarks.rerank.models import RerankGrade
    from benchmarks.rerank.views import GRADES_PER_PAGE
    from benchmarks.retrieval.services import retrieval_run_create
    from benchmarks.suites.services import suite_import
    from reviewapp.core.auth.roles import ensure_role_groups
    from reviewapp.providers.loopback import LoopbackServer

    call_command("migrate", verbosity=0)
    ensure_role_groups()
    started = time.perf_counter()
    statutes_import(fmt="hrs-json", paths=[Path(settings.DATA_DIR) / "statutes" / "hrs"])
    snapshots = corpus_current_snapshots(corpus="hrs")
    provisions = Provision.objects.filter(snapshot__in=snapshots, repealed=False).exclude(heading="")
    total = provisions.count()
    picked = list(provisions.order_by("id").values_list("citation", "heading")[:: max(1, total // queries)][:queries])
    families = [{"id": f"fam{k}", "split": "dev"} for k in range(3)]
    suite_queries = [{"id": f"q{i:02d}", "kind": "ranking", "split": "dev", "family": f"fam{i % 3}",
                      "text": f"What does the law provide about {heading.rstrip('.').lower()}?",
                      "targets": [citation]} for i, (citation, heading) in enumerate(picked)]
    suite, _ = suite_import(raw=json.dumps({"name": "bench-pages-hrs", "version": 1, "corpus": "hrs",
                                            "families": families, "queries": suite_queries}).encode(),
                            filename="bench_pages.json")
    retrieval = retrieval_run_create(suite=suite, k=30)
    with LoopbackServer() as model:
        run = rerank.rerank_run_create(retrieval_run=retrieval, provider="openai_compatible", model_id="loop/bench",
                                       base_url=model.url + "/v1", max_requests=100_000, concurrency=8,
                                       enqueue=False)
        status = rerank.rerank_run_execute(run_id=run.pk)
    grades = RerankGrade.objects.filter(run=run).count()
    print(f"  world: HRS {total} sections in {time.perf_counter() - started:.1f} s with suite, retrieval and "
          f"rerank run #{run.pk} ({status}, {grades} grade rows)", flush=True)
    if grades < MIN_GRADES:
        raise SystemExit(f"bench_pages: only {grades} grade rows (want >= {MIN_GRADES}); raise --queries")
    users = get_user_model()
    for name, role in (("bench_admin", "admin"), ("bench_stakeholder", "stakeholder")):
        user = users.objects.create_user(username=name, password=PASSWORD, is_staff=role == "admin")
        user.groups.add(Group.objects.get(name=role))
    chapter_sections = provisions.filter(chapter=CHAPTER).count()
    return World(run_id=run.pk, grades=grades, pages=-(-grades // GRADES_PER_PAGE),
                 chapter_sections=chapter_sections)


def _query_counts(world: World, urls: dict[str, tuple[str, str]]) -> dict[str, int]:
    """SQL queries each page runs, served in this process by django's test client."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    counts = {}
    for label, (user, url) in urls.items():
        client = Client(HTTP_X_FORWARDED_PROTO="https", HTTP_HOST="127.0.0.1")
        if user:
            client.force_login(get_user_model().objects.get(username=user))
        client.get(url)  # a warm cache, as in the timed requests
        with CaptureQueriesContext(connection) as queries:
            status = client.get(url).status_code
        counts[label] = len(queries)
        if status != 200:
            raise SystemExit(f"bench_pages: {url} answered {status} in process")
    return counts


# --------------------------------------------------------------------------- gunicorn and HTTP


class Gunicorn:
    """One gunicorn (compose's command) in its own process group; stopped by its own group id."""

    def __init__(self, *, port: int, workers: int, env: dict, tmp: Path, tag: str) -> None:
        self.port, self.workers = port, workers
        self.log, self.access = tmp / f"gunicorn-{tag}.log", tmp / f"access-{tag}.log"
        self.access.touch()
        with open(self.log, "w") as handle:
            self.process = subprocess.Popen(gunicorn_args(port, workers, self.access), cwd=REPO, env=env,
                                            stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_booted(self, timeout: float = 90.0) -> None:
        """Until every worker has said it booted (then each sits in accept, none has served anything)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit("bench_pages: gunicorn exited: " + self.log.read_text()[-2000:])
            if len(set(BOOTED.findall(self.log.read_text()))) >= self.workers:
                time.sleep(0.3)
                return
            time.sleep(0.05)
        raise SystemExit(f"bench_pages: {self.workers} workers did not boot within {timeout:g} s")

    def access_lines(self) -> list[str]:
        return self.access.read_text().splitlines()

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


class Browser:
    """Requests as a browser behind the TLS proxy sends them: cookies kept by hand (they are Secure)."""

    def __init__(self, port: int) -> None:
        import httpx

        self.base = f"http://127.0.0.1:{port}"
        self.origin = f"https://127.0.0.1:{port}"
        self.client = httpx.Client(base_url=self.base, timeout=60, follow_redirects=False)
        self.cookies: dict[str, str] = {}

    def get(self, url: str):
        started = time.perf_counter()
        response = self.client.get(url, headers=self._headers())
        elapsed = (time.perf_counter() - started) * 1000
        self.client.cookies.clear()
        return response, elapsed

    def login(self, username: str) -> None:
        page, _ = self.get("/accounts/login/")
        self.cookies.update(dict(page.cookies.items()))
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        response = self.client.post("/accounts/login/", data={"username": username, "password": PASSWORD,
                                                             "csrfmiddlewaretoken": token},
                                    headers={**self._headers(), "Origin": self.origin,
                                             "Referer": self.origin + "/accounts/login/"})
        self.client.cookies.clear()
        if response.status_code != 302 or "sessionid" not in response.cookies:
            raise SystemExit(f"bench_pages: login of {username} answered {response.status_code}")
        self.cookies.update(dict(response.cookies.items()))

    def _headers(self) -> dict[str, str]:
        headers = {"X-Forwarded-Proto": "https"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return headers

    def close(self) -> None:
        self.client.close()


def _pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _first_requests(opts, env: dict, tmp: Path, browsers: dict[str, str], url: str, who: str,
                    start_port: int) -> tuple[list[float], list[float]]:
    """First-request ms of each freshly forked worker, and warm ms of the same URL, over ``--rounds`` starts."""
    from perf.web.review_world import free_port

    first, warm = [], []
    for round_ in range(opts.rounds):
        port = free_port() if start_port == 0 else start_port
        server = Gunicorn(port=port, workers=opts.workers, env=env, tmp=tmp, tag=f"cold-{who}-{round_}")
        browser = Browser(port)
        browser.cookies.update(json.loads(browsers[who]))
        try:
            server.wait_booted()
            seen: set[str] = set()
            for sent in range(1, 30 * opts.workers + 1):
                response, ms = browser.get(url)
                if response.status_code != 200:
                    raise SystemExit(f"bench_pages: {url} answered {response.status_code} as {who}")
                lines = _wait_for_lines(server, sent)
                pid = lines[sent - 1].split()[0]
                (warm if pid in seen else first).append(ms)
                seen.add(pid)
                if len(seen) == opts.workers and sent >= opts.workers + 5:
                    break
            for _ in range(opts.repeats):
                warm.append(browser.get(url)[1])
            if len(seen) < opts.workers:
                print(f"    round {round_}: only {len(seen)} of {opts.workers} workers were reached", flush=True)
        finally:
            browser.close()
            server.stop()
    return first, warm


def _wait_for_lines(server: Gunicorn, n: int) -> list[str]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        lines = server.access_lines()
        if len(lines) >= n:
            return lines
        time.sleep(0.005)
    raise SystemExit("bench_pages: the access log did not record a request")


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    opts = _options(argv)
    url = os.environ.get("BENCH_DATABASE_URL", "")
    with ExitStack() as stack:
        tmp = Path(tempfile.mkdtemp(prefix="bench_pages-"))
        stack.callback(shutil.rmtree, tmp, ignore_errors=True)
        if url.startswith("postgres"):
            prefix = "bench_pages"
            database_url = stack.enter_context(scratch_postgres(url, prefix=prefix))
        elif url:
            raise SystemExit("bench_pages: BENCH_DATABASE_URL must be postgres://...; unset means SQLite")
        else:
            database_url = f"sqlite:///{tmp / 'bench_pages.sqlite3'}"
        return _run(opts, database_url, tmp)
    return 0


def _run(opts: argparse.Namespace, database_url: str, tmp: Path) -> int:
    redis_url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
    import redis

    redis.Redis.from_url(redis_url).flushdb()  # sign-in counts of an earlier run would refuse this one's logins
    # The compose environment (x-app-env): production settings, a key of this run's own, no TLS redirect.
    env = {**os.environ, "DATABASE_URL": database_url, "VAR_DIR": str(tmp / "var"), "PRODUCTION": "1",
           "REQUIRE_SECRET_KEY": "1", "SECRET_KEY": secrets.token_urlsafe(48), "ALLOWED_HOSTS": "127.0.0.1",
           "SECURE_SSL_REDIRECT": "0", "DEBUG": "0", "LOG_LEVEL": "WARNING", "CELERY_TASK_ALWAYS_EAGER": "0",
           "OPENAI_COMPATIBLE_API_KEY": "", "DJANGO_SETTINGS_MODULE": "reviewapp.settings"}
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    os.environ.pop("REDIS_URL", None)
    os.environ.update(env)
    engine = "PostgreSQL" if database_url.startswith("postgres") else "SQLite"
    print(f"bench_pages: gunicorn as docker-compose runs it (--preload, {opts.workers} workers), {engine}"
          f"{' + Redis cache' if redis_url else ''}, {os.cpu_count()} CPUs, load average before "
          f"{load_average():.2f}", flush=True)
    import logging

    import django

    django.setup()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    from django.core.management import call_command
    from django.db import connection

    world = _build_world(opts.queries)
    call_command("collectstatic", interactive=False, verbosity=0)  # as the Dockerfile does
    run = f"/benchmarks/rerank/{world.run_id}/"
    chapter = f"/benchmarks/corpus/hrs/chapter/{CHAPTER}/"
    pages = {
        f"HRS chapter {CHAPTER} ({world.chapter_sections} sections), admin": ("bench_admin", chapter),
        f"HRS chapter {CHAPTER}, last page, stakeholder": ("bench_stakeholder", chapter + "?page=999"),
        f"rerank run page, {world.grades} grades, page 1, admin": ("bench_admin", run),
        f"rerank run page, grades page {world.pages} (last), admin": ("bench_admin", f"{run}?page={world.pages}"),
        "rerank run page, grades filtered to graded, stakeholder": ("bench_stakeholder", f"{run}?status=graded"),
        "rerank run page, not-sent filter, stakeholder": ("bench_stakeholder", f"{run}?status=not_sent"),
    }
    queries = _query_counts(world, pages)
    connection.close()

    from perf.web.review_world import free_port

    port = free_port()
    server = Gunicorn(port=port, workers=opts.workers, env=env, tmp=tmp, tag="login")
    sessions = {}
    try:
        server.wait_booted()
        for who in ("bench_admin", "bench_stakeholder"):
            browser = Browser(port)
            browser.login(who)
            sessions[who] = json.dumps(browser.cookies)
            browser.close()
    finally:
        server.stop()

    parts = set(opts.parts.split(","))
    print(f"  (a) first request of each freshly forked worker vs warm, {opts.rounds} gunicorn starts x "
          f"{opts.workers} workers", flush=True)
    # The home page is the goal's own case (a light page: the first request is all start-up cost). The rerank
    # page costs ~60 ms warm by itself, so its figure is what its first request costs beyond a warm one.
    for who, label, url, extra in (("bench_admin", "home page, admin", "/", False),
                                   ("bench_admin", "rerank run page, admin", run, True)) if "a" in parts else ():
        first, warm = _first_requests(opts, env, tmp, sessions, url, who, 0)
        cold, hot = statistics.median(first), statistics.median(warm)
        ours = f"first {cold:.0f} ms median, {max(first):.0f} ms max of {len(first)} workers"
        if extra:
            report(bench=BENCH, what=f"worker's first request beyond a warm one: {label} ({url})",
                   ours=f"{max(first) - hot:.0f} ms more at worst ({ours})", peer=f"warm {hot:.0f} ms median",
                   ratio=cold / hot, value=max(first) - hot, goal_value=100, goal="first request < warm + 100 ms")
        else:
            report(bench=BENCH, what=f"worker's first request: {label} ({url})", ours=ours,
                   peer=f"warm {hot:.0f} ms median", ratio=cold / hot, value=max(first), goal_value=100,
                   goal="first request < 100 ms")

    if "b" not in parts:
        return 0
    print(f"  (b) warm pages, {opts.repeats} requests each (p95 is the goal figure)", flush=True)
    server = Gunicorn(port=port, workers=opts.workers, env=env, tmp=tmp, tag="warm")
    try:
        server.wait_booted()
        browsers = {}
        for who, cookies in sessions.items():
            browsers[who] = Browser(port)
            browsers[who].cookies.update(json.loads(cookies))
        for label, (who, url) in pages.items():
            for _ in range(2 * opts.workers):  # every worker has served this page once
                response, _ = browsers[who].get(url)
                if response.status_code != 200:
                    raise SystemExit(f"bench_pages: {url} answered {response.status_code} as {who}")
            times = [browsers[who].get(url)[1] for _ in range(opts.repeats)]
            size = len(response.content) // 1024
            report(bench=BENCH, what=f"{label} ({url})",
                   ours=f"p95 {_pct(times, 95):.0f} ms, median {statistics.median(times):.0f} ms",
                   peer=f"{queries[label]} SQL queries, {size} KiB", value=_pct(times, 95), goal_value=300,
                   goal="p95 < 300 ms")
        for browser in browsers.values():
            browser.close()
    finally:
        server.stop()
    print(f"  load average after {load_average():.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
