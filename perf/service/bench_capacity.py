"""The capacity model's inputs and its check: per-request CPU of each page, then 1, 2 and 4 gunicorn processes.

1. Per-request cost, in-process (Django's test client, warm), on the load script's world (50 reviewers, a
   300-item pool, PostgreSQL scratch database): the reviewer's queue page, the queue API, the item page and a
   save (the htmx form post), ``ROUNDS`` each in alternation; CPU of this process (Python) and wall time (which
   adds PostgreSQL's work and the round trips, on the same cores). The statute leaderboard and the benchmark
   summary (report) are computed from plain inputs, every figure and export (what a cold page does).
2. The model: requests per second per core = 1 / (CPU per request, gunicorn's plus PostgreSQL's, measured from
   /proc on the load script's mix with one process: one item page and one save per item, 10% of saves sent
   twice); a gunicorn process holds the GIL, so P processes serve at most P / (gunicorn CPU per request), and
   all of them together at most (cores the load generator leaves) / (CPU per request).
3. The check: the load script's saturation phase (``perf/web/bench_review.py``: 50 reviewers, no think time)
   against 1, 2 and 4 gunicorn processes (4 threads each) on the same database, measured requests/s and the
   server's CPU per request (from /proc of the gunicorn process group and of the database's backends) beside the
   prediction, and the cores the server actually obtained (on a shared machine, often far fewer than idle).

Prints figures; asserts nothing. Needs PostgreSQL (BENCH_REVIEW_DATABASE_URL's server); skipped without it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from perf.figures import report  # noqa: E402
from perf.scratch_db import scratch_postgres  # noqa: E402
from perf.web import bench_review  # noqa: E402
from perf.web.review_world import free_port, review_world  # noqa: E402

BENCH = Path(__file__).stem
ROUNDS = int(os.environ.get("BENCH_CAPACITY_ROUNDS", "30"))
PROCESSES = tuple(int(n) for n in os.environ.get("BENCH_CAPACITY_PROCESSES", "1,2,4").split(","))
PHASE_SECONDS = float(os.environ.get("BENCH_CAPACITY_SECONDS", "12"))
CORES = os.cpu_count() or 1
TICK = os.sysconf("SC_CLK_TCK")


def _group_cpu(pgid: int) -> float:
    """CPU seconds (user + system) of every live process in the process group ``pgid``."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after the name: state, ppid, pgrp, ...
            total += (int(fields[11]) + int(fields[12])) / TICK
    return total


def _backend_cpu(database_url: str) -> float:
    """CPU seconds of the PostgreSQL backends connected to the scratch database (same machine; gunicorn keeps its
    connections for 60 s, so the same backends serve the whole phase)."""
    import psycopg

    name = database_url.rsplit("/", 1)[1]
    with psycopg.connect(database_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        pids = [row[0] for row in conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [name])]
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / TICK
    return total


def _costs(sessions: dict[str, str]) -> dict[str, tuple[float, float]]:
    """(CPU ms, wall ms) medians per request kind, in-process."""
    from django.conf import settings
    from django.test import Client

    settings.ALLOWED_HOSTS = ["*"]
    clients = []
    for _name, key in sorted(sessions.items())[:10]:
        client = Client()
        client.cookies["sessionid"] = key
        clients.append(client)
    # Each reviewer's own items (a reviewer sees only theirs).
    own = [[e["item"] for q in c.get("/api/v1/review/queue/").json() for e in q["items"]] for c in clients]

    def item_page(client: Client, item: str):
        return client.get(f"/review/workspace/items/{item}/")

    def save(client: Client, item: str):
        page = item_page(client, item).content.decode()
        revision = int(bench_review.REVISION.search(page).group(1))
        body = {"section": str((revision + 1) % 4), "passage": str((revision // 4 + 1) % 4),
                **dict(bench_review.SHOWN.findall(page)), "action": "save"}
        start_cpu, start = time.process_time(), time.perf_counter()
        client.post(f"/review/workspace/items/{item}/", data=body, HTTP_HX_REQUEST="true")
        return (time.process_time() - start_cpu) * 1000, (time.perf_counter() - start) * 1000

    def timed(call) -> tuple[float, float]:
        start_cpu, start = time.process_time(), time.perf_counter()
        call()
        return (time.process_time() - start_cpu) * 1000, (time.perf_counter() - start) * 1000

    kinds = {
        "reviewer queue page": lambda c, i: timed(lambda: c.get("/review/workspace/")),
        "queue API": lambda c, i: timed(lambda: c.get("/api/v1/review/queue/")),
        "item page": lambda c, i: timed(lambda: item_page(c, i)),
        "save (htmx post)": save,
    }
    samples: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
    for call in kinds.values():  # warm
        call(clients[0], own[0][0])
    for n in range(ROUNDS):
        client, items = clients[n % len(clients)], own[n % len(clients)]
        item = items[(n // len(clients)) % len(items)]
        for kind, call in kinds.items():
            samples[kind].append(call(client, item))

    from perf.scoring import bench_leaderboard, bench_report

    board_inputs, report_inputs = bench_leaderboard.synthetic_inputs(), bench_report.synthetic_inputs()
    heavy = {
        "statute leaderboard (6 systems, every figure and export)": lambda: bench_leaderboard.everything(board_inputs),
        "benchmark summary (report, every figure and export)": lambda: bench_report.full_report(
            lambda: bench_report.report_compute(report_inputs, replicates=bench_report.REPLICATES,
                                                seed=bench_report.SEED)),
    }
    for kind, call in heavy.items():
        call()
        samples[kind] = [timed(call) for _ in range(max(5, ROUNDS // 6))]
    return {kind: (statistics.median(s[0] for s in values), statistics.median(s[1] for s in values))
            for kind, values in samples.items()}


def _saturate(processes: int, cookies: dict[str, str], database_url: str) -> dict[str, float]:
    bench_review.WORKERS = processes
    bench_review.DATABASE_URL = database_url
    port = free_port()
    process = bench_review._start_gunicorn(port)
    try:
        bench_review._wait_up(port, process)
        base = f"http://127.0.0.1:{port}"
        expected: Counter = Counter()
        asyncio.run(bench_review._phase(base, cookies, 3.0, (0.0, 0.0), expected))  # warm, not measured
        server_before, client_before = _group_cpu(process.pid), time.process_time()
        database_before = _backend_cpu(database_url)
        stats = asyncio.run(bench_review._phase(base, cookies, PHASE_SECONDS, (0.0, 0.0), expected))
        server_cpu, client_cpu = _group_cpu(process.pid) - server_before, time.process_time() - client_before
        database_cpu = _backend_cpu(database_url) - database_before
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
    requests = len(stats["page"]) + len(stats["save"])
    return {"rate": requests / stats["elapsed"], "server_ms": server_cpu / requests * 1000,
            "database_ms": database_cpu / requests * 1000,
            "client_cores": client_cpu / stats["elapsed"], "errors": len(stats["errors"]), "load": stats["load"],
            "p95": max(bench_review._pct(stats["page"], 95), bench_review._pct(stats["save"], 95))}


def main() -> None:
    try:
        import psycopg

        psycopg.connect(bench_review.DATABASE_URL.rsplit("/", 1)[0] + "/postgres", connect_timeout=3).close()
    except Exception as exc:  # a benchmark, not a test: say why and stop
        print(f"{BENCH}: PostgreSQL not reachable ({exc}); skipped")
        return
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    with scratch_postgres(bench_review.DATABASE_URL, prefix="ci_perf_capacity") as url:
        world = review_world(database_url=url, reviewers=bench_review.REVIEWERS, items=bench_review.ITEMS)
        costs = _costs(world.sessions)
        for kind, (cpu, wall) in costs.items():
            report(bench=BENCH, what=f"capacity input: {kind}, per request (in-process, warm, PostgreSQL)",
                   ours=f"CPU {cpu:.1f} ms, wall {wall:.1f} ms", ratio=None,
                   peer=f"{1000 / wall:.0f} requests/s per core")
        # The model's per-request CPU: the server's (gunicorn, Python) and PostgreSQL's, measured on the load
        # script's mix with one process; the in-process figures above give each page's share of it.
        runs = {processes: _saturate(processes, world.sessions, url) for processes in PROCESSES}
        base = runs[min(PROCESSES)]
        server, database = base["server_ms"], base["database_ms"]
        report(bench=BENCH, what="capacity model: CPU per request of the load script's mix (item page + save)",
               ours=f"{server + database:.1f} ms ({server:.1f} ms gunicorn + {database:.1f} ms PostgreSQL)",
               peer=f"{1000 / (server + database):.0f} requests/s per core; one process at most "
                    f"{1000 / server:.0f} requests/s (it holds the GIL)")
        for processes, measured in runs.items():
            cores = max(0.1, CORES - measured["client_cores"])
            predicted = min(cores * 1000 / (server + database), processes * 1000 / server)
            obtained = measured["rate"] * (measured["server_ms"] + measured["database_ms"]) / 1000
            report(bench=BENCH, what=f"capacity check: {processes} gunicorn process{'es' if processes > 1 else ''} "
                                     "x 4 threads, PostgreSQL, 50 reviewers with no think time (saturation)",
                   ours=f"{measured['rate']:.0f} requests/s (server {measured['server_ms']:.1f} + database "
                        f"{measured['database_ms']:.1f} ms CPU a request, {obtained:.2f} cores obtained), p95 "
                        f"{measured['p95']:.0f} ms, {measured['errors']:.0f} errors",
                   peer=f"model on an idle machine {predicted:.0f} requests/s (min({cores:.2f} cores left by the "
                        f"load generator / {server + database:.1f} ms, {processes} x 1 / {server:.1f} ms))",
                   ratio=measured["rate"] / predicted, ratio_text=f"{measured['rate'] / predicted:.2f}x the model",
                   load=measured["load"])

if __name__ == "__main__":
    main()
