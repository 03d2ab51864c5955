"""How the queue page and the item page grow with what a reviewer holds: 100 / 1k / 10k / 100k items per reviewer.

Issue #38's goal: at 10k items the median within 1.2x of the 100-item figure, the page under 100 KiB, the same
number of SQL queries. One reviewer per size (their only pool), in-process (Django's test client, warm, median of
ROUNDS requests), on a scratch PostgreSQL database (prefix ``ci_perf_growth``) of BENCH_QUEUE_DATABASE_URL's
server, dropped after. Prints, asserts nothing; exits 0 with a note when PostgreSQL is not reachable.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from perf.figures import report  # noqa: E402
from perf.scratch_db import scratch_postgres  # noqa: E402

BENCH = Path(__file__).stem
SERVER_URL = os.environ.get("BENCH_QUEUE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
SIZES = tuple(int(n) for n in os.environ.get("BENCH_GROWTH_SIZES", "100,1000,10000,100000").split(","))
ROUNDS = int(os.environ.get("BENCH_GROWTH_ROUNDS", "15"))


def _measure(client, path: str) -> tuple[float, int, int]:
    """Median ms, bytes and SQL queries of ``path`` (warm)."""
    from django.db import connection

    client.get(path)
    captured = []

    def count(execute, sql, params, many, context):
        captured.append(sql)
        return execute(sql, params, many, context)

    # Counted by a wrapper, not the debug log: each request start clears that log.
    with connection.execute_wrapper(count):
        body = client.get(path).content
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        client.get(path)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), len(body), len(captured)


def _run(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.management import call_command
    from django.test import Client

    from perf.review_world import queue_of
    from reviewapp.core.auth.roles import ensure_role_groups

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    ensure_role_groups()
    group = Group.objects.get(name="reviewer")
    figures = {}
    for size in SIZES:
        user = get_user_model().objects.create_user(username=f"growth_{size}", password=None)
        user.groups.add(group)
        order = queue_of(reviewer=user, items=size, title=f"Growth {size}")
        client = Client()
        client.force_login(user)
        queue = _measure(client, "/review/")
        item = _measure(client, f"/review/items/{order[len(order) // 2]}/")
        figures[size] = (queue, item)
        print(f"  {size} items: queue {queue[0]:.1f} ms, {queue[1] / 1024:.1f} KiB, {queue[2]} queries; "
              f"item {item[0]:.1f} ms, {item[2]} queries", flush=True)
    base = min(SIZES)
    for size in SIZES:
        if size == base:
            continue
        for index, name in ((0, "queue page"), (1, "item page")):
            ms, size_bytes, queries = figures[size][index]
            ms0, _, queries0 = figures[base][index]
            report(bench=BENCH, what=f"{name}, {size:,} items per reviewer",
                   ours=f"{ms:.1f} ms median, {size_bytes / 1024:.0f} KiB, {queries} queries",
                   peer=f"{base} items: {ms0:.1f} ms, {queries0} queries", ratio=ms / ms0, goal_ratio=1.2,
                   goal="<= 1.2x the 100-item median")


def main() -> None:
    try:
        import psycopg

        psycopg.connect(SERVER_URL, connect_timeout=3).close()
    except Exception as exc:  # a benchmark, not a test: say why and stop
        print(f"{BENCH}: PostgreSQL not reachable ({exc}); skipped")
        return
    with scratch_postgres(SERVER_URL, prefix="ci_perf_growth") as database_url:
        _run(database_url)


if __name__ == "__main__":
    main()
