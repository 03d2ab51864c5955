"""How the queue page and the item page grow with what a reviewer holds: 100 / 1k / 10k / 100k items per reviewer.

The goal: at 10k and 100k items the median within 1.2x of the 100-item figure (a search within 1.5x), the page
under 100 KiB, the same number of SQL queries. One reviewer per size (their only pool, a draft, a completed and a
skipped item in it), in-process (Django's test client, warm), on each engine: a scratch PostgreSQL database
(prefix ``ci_perf_growth``) of BENCH_QUEUE_DATABASE_URL's server, dropped after, and a SQLite file in a temporary
folder (``BENCH_GROWTH_ENGINES=postgresql`` or ``sqlite`` for one). The sizes are measured in alternation, ROUNDS
requests each, so that the machine's other load falls on every size alike. A filtered page (``status=todo``) and
two searches (``q=``: one every item matches, one ten items match) are measured beside them; 1k / 10k / 100k are
the growth table's 1x / 10x / 100x. The goal is judged on CPU per request, this process's (Django) plus its
PostgreSQL backend's (from /proc, nanoseconds): on a shared machine wall time grows with everyone else's load, CPU
hardly does. Wall medians are printed beside it.
Prints, asserts nothing; the PostgreSQL half is left out with a note when PostgreSQL is not reachable.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from perf.figures import report  # noqa: E402
from perf.scratch_db import scratch_postgres  # noqa: E402

BENCH = Path(__file__).stem
SERVER_URL = os.environ.get("BENCH_QUEUE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
SIZES = tuple(int(n) for n in os.environ.get("BENCH_GROWTH_SIZES", "100,1000,10000,100000").split(","))
ROUNDS = int(os.environ.get("BENCH_GROWTH_ROUNDS", "21"))
ENGINES = tuple(os.environ.get("BENCH_GROWTH_ENGINES", "postgresql,sqlite").split(","))


def _capture(client, path: str) -> tuple[int, int]:
    """Bytes and SQL queries of ``path`` (warm)."""
    from django.db import connection

    client.get(path)
    captured = []

    def count(execute, sql, params, many, context):
        captured.append(sql)
        return execute(sql, params, many, context)

    # Counted by a wrapper, not the debug log: each request start clears that log.
    with connection.execute_wrapper(count):
        body = client.get(path).content
    return len(body), len(captured)


def _backend_pid() -> int | None:
    """The PostgreSQL backend serving this process's connection (same machine), None on SQLite."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _run_ns(pid: int | None) -> int:
    """Nanoseconds ``pid`` has run on a CPU (/proc/<pid>/schedstat; a backend is one thread), 0 without one."""
    if pid is None:
        return 0
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _world(size: int, group):
    """A reviewer holding ``size`` items, with a draft, a completed and a skipped one (placed as the services do)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from perf.web.review_world import queue_of
    from reviewapp.review.judgments.models import ReviewItem
    from reviewapp.review.workspace.services import assignment_skip_set, item_shown_hashes, judgment_submit

    user = get_user_model().objects.create_user(username=f"growth_{size}", password=None)
    user.groups.add(group)
    order = queue_of(reviewer=user, items=size, title=f"Growth {size}", rare_word="escrow")
    items = {i.public_id: i for i in ReviewItem.objects.filter(public_id__in=order[:3])}
    for n, complete in ((0, False), (1, True)):
        item = items[order[n]]
        judgment_submit(item=item, reviewer=user, grades={"section": 1, "passage": 1}, complete=complete,
                                 shown=item_shown_hashes(item))
    assignment_skip_set(reviewer=user, item=items[order[2]], skipped=True)
    client = Client()
    client.force_login(user)
    return client, order


# Two searches: one every item matches (the count stops at its cap, the page is the first 50 matches in order)
# and one that ten items match (found through the query-text index, not by reading the queue).
PAGES = (("queue page", "/review/workspace/"), ("item page", None),
         ("queue page, filtered", "/review/workspace/?status=todo"),
         ("queue page, searched (every item matches)", "/review/workspace/?q=deposit+returned"),
         ("queue page, searched (ten items match)", "/review/workspace/?q=escrow+deposit"))
# The growth table's rows (perf/run.py, FIRM_SCALE) these pages fill, and the goal of each page.
ROWS = {"queue page": "queue page", "queue page, searched (every item matches)": "queue search, every item matches",
        "queue page, searched (ten items match)": "queue search, ten items match"}
GOAL_RATIO = {"queue page, searched (every item matches)": 1.5, "queue page, searched (ten items match)": 1.5}


def _run(database_url: str, engine: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import Group
    from django.core.management import call_command
    from django.db import connection

    from reviewapp.core.auth.roles import ensure_role_groups

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    ensure_role_groups()
    group = Group.objects.get(name="reviewer")
    paths: dict[int, list[tuple[str, str]]] = {}
    clients = {}
    for size in SIZES:
        client, order = _world(size, group)
        clients[size] = client
        paths[size] = [(name, path or f"/review/workspace/items/{order[len(order) // 2]}/") for name, path in PAGES]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # the statistics autovacuum (SQLite: the optimizer) would gather on a live database
    shape = {(size, name): _capture(clients[size], path) for size in SIZES for name, path in paths[size]}
    backend = _backend_pid()
    times: dict[tuple[int, str], list[float]] = {key: [] for key in shape}
    cpus: dict[tuple[int, str], list[float]] = {key: [] for key in shape}
    for _ in range(ROUNDS):
        for size in SIZES:
            for name, path in paths[size]:
                start, cpu, database = time.perf_counter(), time.process_time(), _run_ns(backend)
                clients[size].get(path)
                times[size, name].append((time.perf_counter() - start) * 1000)
                cpus[size, name].append((time.process_time() - cpu) * 1000 + (_run_ns(backend) - database) / 1e6)
    for size in SIZES:
        print(f"  {engine}, {size} items: " + "; ".join(
            f"{name} CPU {statistics.median(cpus[size, name]):.1f} ms, wall {statistics.median(times[size, name]):.1f}"
            f" ms (p95 {_p95(times[size, name]):.1f}), {shape[size, name][0] / 1024:.1f} KiB, {shape[size, name][1]} "
            "queries" for name, _ in PAGES), flush=True)
    base = min(SIZES)
    scales = {10 * base: "1x", 100 * base: "10x", 1000 * base: "100x"}
    for size in SIZES:
        if size == base:
            continue
        for name, _ in PAGES:
            ms, wall = statistics.median(cpus[size, name]), statistics.median(times[size, name])
            size_bytes, queries = shape[size, name]
            ms0, wall0 = statistics.median(cpus[base, name]), statistics.median(times[base, name])
            queries0 = shape[base, name][1]
            # The page's size and query count are part of the goal: either off, and the goal is not met.
            shape_kept = size_bytes < 100 * 1024 and queries == queries0
            goal = GOAL_RATIO.get(name, 1.2)
            report(bench=BENCH, what=f"{name} ({engine}), {size:,} items per reviewer",
                   ours=f"CPU {ms:.1f} ms a request (wall median {wall:.1f} ms), {size_bytes / 1024:.0f} KiB, "
                        f"{queries} queries",
                   peer=f"{base} items: CPU {ms0:.1f} ms (wall {wall0:.1f} ms), {queries0} queries", ratio=ms / ms0,
                   goal_ratio=goal if shape_kept else 0.0,
                   goal=f"CPU <= {goal}x the {base}-item page's, < 100 KiB, same queries",
                   row=f"{ROWS[name]} ({engine})" if name in ROWS else "", scale=scales.get(size, ""),
                   cell=f"CPU {ms:.1f} ms vs {ms0:.1f} ms: {ms / ms0:.2f}x"
                        + ("" if shape_kept else f" ({size_bytes / 1024:.0f} KiB, {queries} queries)"))


def _run_engine(engine: str) -> None:
    """One engine in a process of its own: Django is set up once per process, on one database."""
    if engine == "sqlite":
        with tempfile.TemporaryDirectory(prefix="bench_queue_growth-") as folder:
            _run(f"sqlite:///{folder}/growth.sqlite3", "SQLite")
        return
    try:
        import psycopg

        psycopg.connect(SERVER_URL, connect_timeout=3).close()
    except Exception as exc:  # a benchmark, not a test: say why and stop
        print(f"{BENCH}: PostgreSQL not reachable ({exc}); skipped")
        return
    with scratch_postgres(SERVER_URL, prefix="ci_perf_growth") as database_url:
        _run(database_url, "PostgreSQL")


def main() -> None:
    if len(sys.argv) > 1:
        _run_engine(sys.argv[1])
        return
    failed = [engine for engine in ENGINES
              if subprocess.run([sys.executable, __file__, engine], cwd=REPO, check=False).returncode]
    if failed:
        raise SystemExit(f"{BENCH}: failed on {', '.join(failed)}")


if __name__ == "__main__":
    main()
