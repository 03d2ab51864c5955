"""Everything at once on this machine: reviewers grading, a rerank run executing, a stakeholder reloading.

With PostgreSQL, Redis, gunicorn (4 workers) and a Celery worker, all on 127.0.0.1:
- ``--reviewers`` (50) concurrent reviewers grade for ``--duration`` seconds (60): each loads an item page,
  thinks (``--think``, 1-3 s), saves a changed draft through the htmx form post;
- meanwhile a rerank run executes on the Celery worker (openai-compatible provider = a loopback server in
  this process, answering after 50 ms), and a stakeholder reloads the CUAD scorecard once a second.
Prints throughput, p50/p95/p99 latency per page, errors, and the judgments sent (saves acknowledged as a new
revision) vs stored (revisions in the database); exits 1 if they differ or any request failed. No assertion
on timings. Traffic goes only to 127.0.0.1, every request has a 30 s timeout, the phase ends by itself.

Its own database (``bench_load_<random>``, created and dropped by this run) and Redis db 13. ``--sqlite``
runs the same code on the
embedded defaults (a SQLite file and the filesystem broker in a temporary folder), e.g. for CI with few
users: ``bench_load.py --sqlite --reviewers 5 --duration 5``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from perf.scratch_db import scratch_postgres  # noqa: E402

BIN = Path(sys.executable).parent
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_load"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/13"
TEXT = "The landlord shall return the deposit within thirty days of the end of the tenancy. "
WORDS = ["tenant", "landlord", "deposit", "court", "guardian", "child", "notice", "hearing", "appeal", "fee",
         "record", "agency", "report", "custody", "petition", "order", "judge", "filing", "service", "lien"]


def _options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    parser.add_argument("--reviewers", type=int, default=50)
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--think", default="1,3", help="think time between actions, 'lo,hi' seconds")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_LOAD_DATABASE_URL", DEFAULT_DATABASE_URL))
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_LOAD_REDIS_URL", DEFAULT_REDIS_URL))
    parser.add_argument("--sqlite", action="store_true", help="embedded defaults: SQLite + filesystem broker")
    return parser.parse_args(argv)


def _cuad_file(path: Path) -> None:
    """A small CUAD file in the official layout (offsets found by search, so they are right)."""
    rng = random.Random(7)
    data = []
    for c in range(20):
        sentences = [" ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "." for _ in range(30)]
        law = f"This Agreement is governed by the laws of State {c}."
        text = " ".join([*sentences[:10], law, *sentences[10:]])
        qas = [{"id": f"C{c}__Governing Law", "question": "Details: governing law",
                "answers": [{"text": law, "answer_start": text.index(law)}], "is_impossible": False},
               {"id": f"C{c}__Anti-Assignment", "question": "Details: assignment", "answers": [],
                "is_impossible": True}]
        data.append({"title": f"C{c}", "paragraphs": [{"context": text, "qas": qas}]})
    path.write_text(json.dumps({"version": "bench", "data": data}))


def _setup(opts: argparse.Namespace, loopback_url: str, tmp: Path) -> dict:
    """Migrate, then users + sessions, a review pool, the CUAD data with a run, a retrieval run to rerank."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    from benchmarks.corpus import ParsedProvision, ParsedSource
    from benchmarks.corpus.services import snapshot_import
    from benchmarks.retrieval.services import retrieval_run_create
    from benchmarks.suites.services import suite_import
    from grading.dataset.services import cuad_load, sample_create
    from grading.runs.services import extraction_run_import
    from reviewapp.core.auth.roles import ensure_role_groups
    from reviewapp.review.assignment.services import pool_assign
    from reviewapp.review.pools.services import pool_create

    call_command("migrate", verbosity=0)
    ensure_role_groups()
    User = get_user_model()

    def user(name: str, role: str):
        u = User.objects.create_user(username=name, password=None)
        u.groups.add(Group.objects.get(name=role))
        return u

    reviewers = [user(f"load_reviewer_{i:02d}", "reviewer") for i in range(opts.reviewers)]
    stakeholder = user("load_stakeholder", "stakeholder")
    items = [{"query_id": f"q{i // 10:03d}", "doc_id": f"doc-{i:04d}", "query_text": f"Question {i // 10}?",
              "source_heading": f"Sec. {i}", "source_text": TEXT * 10, "passage_caption": f"Sec. {i}",
              "passage_text": TEXT * 4} for i in range(opts.items)]
    pool = pool_create(name="load", kind="passage", items=items, declared_rule="bench: explicit list")
    pool_assign(pool=pool, reviewers=reviewers, per_item=2)

    cuad = tmp / "CUAD_v1.json"
    _cuad_file(cuad)
    dataset = cuad_load(path=cuad).dataset
    sample_create(dataset=dataset, n=20, min_per_type=1, seed=1)
    doc = json.loads(cuad.read_text())
    extractions = [{"contract": d["title"], "category": "Governing Law",
                    "text": d["paragraphs"][0]["qas"][0]["answers"][0]["text"]} for d in doc["data"]]
    extractions += [{"contract": d["title"], "category": "Anti-Assignment",
                     "text": d["paragraphs"][0]["context"][:80]} for d in doc["data"]]
    run, _ = extraction_run_import(dataset=dataset, raw=json.dumps({"model": "load", "extractions": extractions}))

    rng = random.Random(5)
    sections = tuple(
        ParsedProvision(citation=f"NRS 999.{100 + i * 10}", number=f"999.{100 + i * 10}", chapter="999",
                        chapter_title="LOAD", heading=" ".join(rng.sample(WORDS, 3)).capitalize() + ".",
                        body=" ".join(rng.choice(WORDS) for _ in range(50)) + ".")
        for i in range(80))
    source = ParsedSource(corpus="nrs", parser_name="bench", parser_version="1", title="load chapter",
                          official_url="https://example.invalid/", provisions=sections)
    snapshot_import(corpus="nrs", source_key="load.html", raw=b"load", retrieved_from="bench_load",
                    parse=lambda _raw: source, parser=("bench", "1"))
    queries = [{"id": f"q{i}", "kind": "ranking", "split": "dev", "family": "fam", "targets": [sections[i].citation],
                "text": f"When must the {WORDS[i % 20]} give {WORDS[(i + 5) % 20]} notice to the "
                        f"{WORDS[(i + 9) % 20]}?"}
               for i in range(12)]
    suite, _ = suite_import(raw=json.dumps({"name": "load", "version": 1, "corpus": "nrs",
                                            "families": [{"id": "fam", "split": "dev"}],
                                            "queries": queries}).encode(), filename="load.json")
    retrieval = retrieval_run_create(suite=suite, k=30)

    from perf.web.review_world import login_sessions

    sessions = login_sessions([*reviewers, stakeholder])
    return {"sessions": sessions, "stakeholder": stakeholder.username, "scorecard": f"/cuad/scorecard/?run={run.pk}",
            "retrieval_run": retrieval.pk, "loopback": loopback_url}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _spawn(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    with open(log, "w") as handle:
        return subprocess.Popen(args, cwd=REPO, env=env, stdout=handle, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def _wait_up(port: int, process: subprocess.Popen, log: Path) -> None:
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("gunicorn exited: " + log.read_text()[-2000:])
        try:
            if httpx.get(f"http://127.0.0.1:{port}/accounts/login/", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise SystemExit("gunicorn did not answer within 60 s")


SHOWN_HASH = re.compile(r'name="((?:query|source|passage)_hash)" value="([0-9a-f]{64})"')
REVISION = re.compile(r'data-revision="(\d+)"')


async def _reviewer(base: str, session_key: str, deadline: float, think: tuple[float, float], stats: dict,
                    seed: int) -> None:
    import httpx

    rng = random.Random(seed)
    await asyncio.sleep(rng.uniform(0, think[1]))  # reviewers do not all click in the same millisecond
    async with httpx.AsyncClient(base_url=base, cookies={"sessionid": session_key}, timeout=30) as client:
        started = time.perf_counter()
        try:
            queue = await client.get("/api/v1/review/queue/")
        except httpx.HTTPError as error:
            stats["errors"].append(f"queue: {type(error).__name__}")
            return
        stats["latency"]["review queue (API)"].append(time.perf_counter() - started)
        if queue.status_code != 200:
            stats["errors"].append(f"queue {queue.status_code}")
            return
        item_ids = [entry["item"] for q in queue.json() for entry in q["items"]]
        step = 0
        while time.monotonic() < deadline:
            item_id = item_ids[step % len(item_ids)]
            step += 1
            started = time.perf_counter()
            try:
                page = await client.get(f"/review/workspace/items/{item_id}/")
            except httpx.HTTPError as error:
                stats["errors"].append(f"GET item: {type(error).__name__}")
                continue
            stats["latency"]["item page"].append(time.perf_counter() - started)
            if page.status_code != 200 or not (found := REVISION.search(page.text)):
                stats["errors"].append(f"GET item {page.status_code}")
                continue
            revision = int(found.group(1))
            await asyncio.sleep(rng.uniform(*think))
            grades = {"section": str((revision + 1) % 4), "passage": str((revision // 4 + 1) % 4)}
            # The form sends back the hashes of the texts it showed (a grade on changed text is refused).
            grades.update(dict(SHOWN_HASH.findall(page.text)))
            token = client.cookies.get("csrftoken", "")
            started = time.perf_counter()
            try:
                saved = await client.post(f"/review/workspace/items/{item_id}/", data={**grades, "action": "save",
                                                                             "csrfmiddlewaretoken": token},
                                          headers={"HX-Request": "true", "X-CSRFToken": token})
            except httpx.HTTPError as error:  # not acknowledged: not counted as sent
                stats["errors"].append(f"POST save: {type(error).__name__}")
                continue
            stats["latency"]["save (htmx post)"].append(time.perf_counter() - started)
            if saved.status_code == 200 and "saved (revision" in saved.text:
                stats["sent"] += 1
            else:
                stats["errors"].append(f"POST save {saved.status_code}: {saved.text[:120]!r}")
            await asyncio.sleep(rng.uniform(*think))


async def _stakeholder(base: str, session_key: str, url: str, deadline: float, stats: dict) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=base, cookies={"sessionid": session_key}, timeout=30) as client:
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                page = await client.get(url)
            except httpx.HTTPError as error:
                stats["errors"].append(f"scorecard: {type(error).__name__}")
                continue
            stats["latency"]["CUAD scorecard"].append(time.perf_counter() - started)
            if page.status_code != 200:
                stats["errors"].append(f"scorecard {page.status_code}")
            await asyncio.sleep(1.0)


async def _load(base: str, setup: dict, opts: argparse.Namespace, think: tuple[float, float]) -> dict:
    stats: dict = {"latency": defaultdict(list), "errors": [], "sent": 0}
    deadline = time.monotonic() + opts.duration
    started = time.monotonic()
    reviewers = [(name, key) for name, key in sorted(setup["sessions"].items()) if name != setup["stakeholder"]]
    await asyncio.gather(
        _stakeholder(base, setup["sessions"][setup["stakeholder"]], setup["scorecard"], deadline, stats),
        *[_reviewer(base, key, deadline, think, stats, seed) for seed, (_, key) in enumerate(reviewers)],
    )
    stats["elapsed"] = time.monotonic() - started
    return stats


def _pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] * 1000 if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def main(argv: list[str] | None = None) -> int:
    opts = _options(argv)
    if opts.sqlite:
        return _run(opts)
    # A database of this run's own (the configured name is only a prefix), dropped by this run only.
    with scratch_postgres(opts.database_url, prefix=opts.database_url.rsplit("/", 1)[1]) as url:
        opts.database_url = url
        return _run(opts)


def _run(opts: argparse.Namespace) -> int:
    think = tuple(float(x) for x in opts.think.split(","))
    tmp = Path(tempfile.mkdtemp(prefix="bench_load-"))
    env = {**os.environ, "DEBUG": "0", "LOG_LEVEL": "WARNING", "VAR_DIR": str(tmp / "var"),
           "CELERY_TASK_ALWAYS_EAGER": "0", "OPENAI_COMPATIBLE_API_KEY": ""}
    if opts.sqlite:
        env["DATABASE_URL"] = f"sqlite:///{tmp / 'bench_load.sqlite3'}"
        env.pop("REDIS_URL", None)
    else:
        env["DATABASE_URL"] = opts.database_url
        env["REDIS_URL"] = opts.redis_url
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "VAR_DIR", "CELERY_TASK_ALWAYS_EAGER", "DEBUG")})
    if opts.sqlite:
        os.environ.pop("REDIS_URL", None)
    else:
        os.environ["REDIS_URL"] = opts.redis_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
    sys.path.insert(0, str(REPO))
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    from reviewapp.providers.loopback import LoopbackServer

    backend = "SQLite + filesystem broker" if opts.sqlite else \
        f"PostgreSQL {opts.database_url.rsplit('/', 1)[1]} + Redis {opts.redis_url.rsplit('/', 1)[1]}"
    print(f"bench_load: {opts.reviewers} reviewers + 1 stakeholder for {opts.duration:g} s, think "
          f"{think[0]:g}-{think[1]:g} s, gunicorn {opts.workers} workers x {opts.threads} threads, 1 Celery worker, "
          f"{backend}, {os.cpu_count()} CPUs, load average before {os.getloadavg()[0]:.1f}")
    failed = False
    with LoopbackServer(latency=0.05) as provider:
        setup = _setup(opts, provider.url, tmp)
        from django.db import connection

        from benchmarks.rerank import services as rerank
        from benchmarks.rerank.models import RerankRun
        from benchmarks.retrieval.models import RetrievalRun
        from reviewapp.review.judgments.models import JudgmentRevision

        connection.close()
        port = _free_port()
        gunicorn = _spawn([str(BIN / "gunicorn"), "reviewapp.wsgi:application", "--bind", f"127.0.0.1:{port}",
                           "--workers", str(opts.workers), "--worker-class", "gthread", "--threads",
                           str(opts.threads), "--timeout", "60", "--log-level", "warning",
                           # Reviewers think longer than gunicorn's 2 s default keep-alive; a proxy in front
                           # keeps connections open the same way.
                           "--keep-alive", "75"], env, tmp / "gunicorn.log")
        worker = _spawn([sys.executable, "-m", "celery", "-A", "reviewapp", "worker", "--pool=solo",
                         "--loglevel=WARNING", "--without-gossip", "--without-mingle", "--without-heartbeat"],
                        env, tmp / "worker.log")
        try:
            _wait_up(port, gunicorn, tmp / "gunicorn.log")
            stored_before = JudgmentRevision.objects.count()
            run = rerank.rerank_run_create(retrieval_run=RetrievalRun.objects.get(pk=setup["retrieval_run"]),
                                           provider="openai_compatible", model_id="loop/bench",
                                           base_url=provider.url + "/v1", concurrency=2)
            connection.close()
            stats = asyncio.run(_load(f"http://127.0.0.1:{port}", setup, opts, think))
            stored = JudgmentRevision.objects.count() - stored_before
            deadline = time.monotonic() + max(60.0, opts.duration)
            while not (current := RerankRun.objects.get(pk=run.pk)).is_finished and time.monotonic() < deadline:
                time.sleep(0.5)
        finally:
            _stop(gunicorn)
            _stop(worker)
        progress = rerank.rerank_run_progress(run=current)
    requests = sum(len(v) for v in stats["latency"].values())
    print(f"  {requests} requests in {stats['elapsed']:.1f} s = {requests / stats['elapsed']:.1f} requests/s; "
          f"{stats['sent'] / stats['elapsed']:.1f} judgments saved/s; errors {len(stats['errors'])}")
    for page, values in sorted(stats["latency"].items()):
        print(f"    {page:<20} n {len(values):>6}   p50 {_pct(values, 50):7.1f} ms   p95 {_pct(values, 95):7.1f} ms"
              f"   p99 {_pct(values, 99):7.1f} ms")
    for error in stats["errors"][:5]:
        print(f"    error: {error}")
    print(f"  rerank run {current.pk}: {current.status}, {progress.graded} of {current.candidates_planned} candidates "
          f"graded, {provider.max_count_per_body} max sends per request body (1 = none twice)")
    print(f"  judgments sent {stats['sent']}, stored {stored} ({'equal' if stats['sent'] == stored else 'DIFFER'})")
    print(f"  load average after {os.getloadavg()[0]:.1f}")
    failed = bool(stats["errors"]) or stats["sent"] != stored or current.status != "done" \
        or provider.max_count_per_body > 1
    print("RESULT " + json.dumps({"sent": stats["sent"], "stored": stored, "errors": len(stats["errors"]),
                                  "requests": requests, "rerank_status": current.status}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
