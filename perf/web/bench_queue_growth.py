"""How the queue page and the item page grow with what a reviewer holds: 100 / 1k / 10k / 100k items per reviewer.

The goal: at 10k and 100k items the median within 1.2x of the 100-item figure, the page under 100 KiB,
the same number of SQL queries; the search (``q=``) too, since it reads the query-text index within the
reviewer's own pools and caps its count. One reviewer per size (their only pool, a draft, a completed and a
skipped item in it), in-process (Django's test client, warm), on a scratch PostgreSQL database (prefix
``ci_perf_growth``) of
BENCH_QUEUE_DATABASE_URL's server, dropped after. The sizes are measured in alternation, ROUNDS requests each, so
that the machine's other load falls on every size alike. A filtered page (``status=todo``) and two searches are
measured against the same goal.
Prints, asserts nothing; exits 0 with a note when PostgreSQL is not reachable.
"""

from __future__ import annotations

import os
import statistics
import sys
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


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _world(size: int, group):
    """A reviewer holding ``size`` items, with a draft, a completed and a skipped one (placed as the services do)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from perf.web.review_world import queue_of
    from reviewapp.review.judgments.models import ReviewItem
    from reviewapp.review.judgments.services import item_shown_hashes, judgment_submit
    from reviewapp.review.workspace.services import assignment_skip_set

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


def _run(database_url: str) -> None:
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
        cursor.execute("ANALYZE")  # the statistics autovacuum would gather on a live database
    shape = {(size, name): _capture(clients[size], path) for size in SIZES for name, path in paths[size]}
    times: dict[tuple[int, str], list[float]] = {key: [] for key in shape}
    for _ in range(ROUNDS):
        for size in SIZES:
            for name, path in paths[size]:
                start = time.perf_counter()
                clients[size].get(path)
                times[size, name].append((time.perf_counter() - start) * 1000)
    for size in SIZES:
        print(f"  {size} items: " + "; ".join(
            f"{name} {statistics.median(times[size, name]):.1f} ms (p95 {_p95(times[size, name]):.1f}), "
            f"{shape[size, name][0] / 1024:.1f} KiB, {shape[size, name][1]} queries" for name, _ in PAGES), flush=True)
    base = min(SIZES)
    for size in SIZES:
        if size == base:
            continue
        for name, _ in PAGES:
            ms, p95 = statistics.median(times[size, name]), _p95(times[size, name])
            size_bytes, queries = shape[size, name]
            ms0, p95_0 = statistics.median(times[base, name]), _p95(times[base, name])
            queries0 = shape[base, name][1]
            # The page's size and query count are part of the goal: either off, and the goal is not met.
            shape_kept = size_bytes < 100 * 1024 and queries == queries0
            report(bench=BENCH, what=f"{name}, {size:,} items per reviewer",
                   ours=f"{ms:.1f} ms median (p95 {p95:.1f}), {size_bytes / 1024:.0f} KiB, {queries} queries",
                   peer=f"{base} items: {ms0:.1f} ms (p95 {p95_0:.1f}), {queries0} queries", ratio=ms / ms0,
                   goal_ratio=1.2 if shape_kept else 0.0,
                   goal="<= 1.2x the 100-item median, < 100 KiB, same queries")


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
