"""The capacity model's inputs and its check: CPU per request of each page, then 1, 2 and 4 gunicorn processes.

CPU seconds, not wall time: on a shared machine the wall time of a request grows with everyone else's load, the
CPU it consumes hardly does, so the model is built from CPU and the check compares CPU per request too.

1. Inputs, in-process (Django's test client, warm), on the load script's world (50 reviewers, a 300-item pool,
   a PostgreSQL scratch database): ``ROUNDS`` requests of each kind (the reviewer's queue page, the queue API,
   the item page, a save through the htmx form post), each kind's CPU summed over its requests: this process's
   (Python: Django, templates, the driver) and its PostgreSQL backend's (read from /proc, same machine). The
   statute leaderboard and the benchmark summary (report) are computed from plain inputs, every figure and export
   (what a cold page does; no database).
2. The model: CPU per request of the load script's mix (one item page and one save per item, every tenth save
   sent twice) from those inputs; requests per second per core = 1 / that. A gunicorn process runs Python under
   one GIL, so P processes serve at most P / (Python CPU per request), and all together at most (cores
   available) / (CPU per request, Python + PostgreSQL).
3. The check: the load script's saturation phase (``perf/web/bench_review.py``: 50 reviewers, no think time)
   against 1, 2 and 4 gunicorn processes (gthread, 4 threads each) on the same database; measured requests/s,
   the CPU per request consumed by the gunicorn process group and by the database's backends (from /proc) beside
   the model's, and the cores available to the server: the cores it obtained plus the machine's idle cores
   during the phase (/proc/stat), so that requests/s can be put per core actually available.

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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from perf.figures import report  # noqa: E402
from perf.scratch_db import scratch_postgres  # noqa: E402
from perf.web import bench_review  # noqa: E402
from perf.web.review_world import free_port, review_world  # noqa: E402

BENCH = Path(__file__).stem
ROUNDS = int(os.environ.get("BENCH_CAPACITY_ROUNDS", "40"))
PROCESSES = tuple(int(n) for n in os.environ.get("BENCH_CAPACITY_PROCESSES", "1,2,4").split(","))
PHASE_SECONDS = float(os.environ.get("BENCH_CAPACITY_SECONDS", "15"))
THREADS = 4
CORES = os.cpu_count() or 1
TICK = os.sysconf("SC_CLK_TCK")
# The load script's mix per item: one item page, one save, and every tenth save sent again (a double click).
MIX = {"item page": 1.0, "save (htmx post)": 1.1}


def _stat_cpu(pid: int | str) -> float:
    """CPU seconds (user + system) of one process, 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK  # fields after the name: state, ppid, pgrp, ...


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
        if int(fields[2]) == pgid:
            total += (int(fields[11]) + int(fields[12])) / TICK
    return total


def _backend_cpu(database_url: str) -> float:
    """CPU seconds of the PostgreSQL backends connected to the scratch database (same machine; gunicorn keeps its
    connections for 60 s, so the same backends serve the whole phase)."""
    import psycopg

    name = database_url.rsplit("/", 1)[1]
    with psycopg.connect(database_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        pids = [row[0] for row in conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [name])]
    return sum(_stat_cpu(pid) for pid in pids)


def _machine() -> tuple[float, float]:
    """(idle, all) CPU seconds of the whole machine since boot, from /proc/stat (idle includes iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (fields[3] + fields[4]) / TICK, sum(fields[:8]) / TICK


@dataclass(frozen=True)
class Cost:
    python_ms: float  # this process's CPU per request (Django, templates, the driver)
    database_ms: float  # its PostgreSQL backend's CPU per request
    wall_ms: float  # median wall time (grows with the machine's load; shown, not used by the model)

    @property
    def cpu_ms(self) -> float:
        return self.python_ms + self.database_ms


def _costs(sessions: dict[str, str]) -> dict[str, Cost]:
    """CPU per request of each kind, in-process: ``ROUNDS`` requests of a kind in a row, CPU summed over them."""
    from django.conf import settings
    from django.db import connection
    from django.test import Client

    settings.ALLOWED_HOSTS = ["*"]
    clients = []
    for _name, key in sorted(sessions.items())[:10]:
        client = Client()
        client.cookies["sessionid"] = key
        clients.append(client)
    # Each reviewer's own items (a reviewer sees only theirs).
    own = [[e["item"] for q in c.get("/api/v1/review/queue/").json() for e in q["items"]] for c in clients]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]

    def save_body(client: Client, item: str) -> dict[str, str]:
        page = client.get(f"/review/workspace/items/{item}/").content.decode()
        revision = int(bench_review.REVISION.search(page).group(1))
        return {"section": str((revision + 1) % 4), "passage": str((revision // 4 + 1) % 4),
                **dict(bench_review.SHOWN.findall(page)), "action": "save"}

    def save(client: Client, item: str) -> Callable[[], object]:
        body = save_body(client, item)  # the page a reviewer had open: not part of the save's cost
        return lambda: client.post(f"/review/workspace/items/{item}/", data=body, HTTP_HX_REQUEST="true")

    kinds: dict[str, Callable[[Client, str], Callable[[], object]]] = {
        "reviewer queue page": lambda c, i: lambda: c.get("/review/workspace/"),
        "queue API": lambda c, i: lambda: c.get("/api/v1/review/queue/"),
        "item page": lambda c, i: lambda: c.get(f"/review/workspace/items/{i}/"),
        "save (htmx post)": save,
    }

    def measure(calls: list[Callable[[], object]]) -> Cost:
        walls, python, database = [], 0.0, 0.0
        for call in calls:
            cpu, db = time.process_time(), _stat_cpu(backend)
            start = time.perf_counter()
            call()
            walls.append((time.perf_counter() - start) * 1000)
            python += time.process_time() - cpu
            database += _stat_cpu(backend) - db
        return Cost(python_ms=python / len(calls) * 1000, database_ms=database / len(calls) * 1000,
                    wall_ms=statistics.median(walls))

    costs: dict[str, Cost] = {}
    for kind, make in kinds.items():
        make(clients[0], own[0][0])()  # warm
        calls = []
        for n in range(ROUNDS):
            client, items = clients[n % len(clients)], own[n % len(clients)]
            calls.append(make(client, items[(n // len(clients)) % len(items)]))
        costs[kind] = measure(calls)

    from perf.scoring import bench_leaderboard, bench_report

    board_inputs, report_inputs = bench_leaderboard.synthetic_inputs(), bench_report.synthetic_inputs()
    heavy: dict[str, Callable[[], object]] = {
        "statute leaderboard (6 systems, every figure and export)": lambda: bench_leaderboard.everything(board_inputs),
        "benchmark summary (report, every figure and export)": lambda: bench_report.full_report(
            lambda: bench_report.report_compute(report_inputs, replicates=bench_report.REPLICATES,
                                                seed=bench_report.SEED)),
    }
    for kind, call in heavy.items():
        call()
        costs[kind] = measure([call] * max(5, ROUNDS // 6))
    return costs


def _saturate(processes: int, cookies: dict[str, str], database_url: str) -> dict[str, float]:
    bench_review.WORKERS = processes
    bench_review.THREADS = THREADS
    bench_review.DATABASE_URL = database_url
    port = free_port()
    process = bench_review._start_gunicorn(port)
    try:
        bench_review._wait_up(port, process)
        base = f"http://127.0.0.1:{port}"
        expected: Counter = Counter()
        asyncio.run(bench_review._phase(base, cookies, 3.0, (0.0, 0.0), expected))  # warm, not measured
        server_before, client_before = _group_cpu(process.pid), time.process_time()
        database_before, machine_before = _backend_cpu(database_url), _machine()
        stats = asyncio.run(bench_review._phase(base, cookies, PHASE_SECONDS, (0.0, 0.0), expected))
        server_cpu, client_cpu = _group_cpu(process.pid) - server_before, time.process_time() - client_before
        database_cpu = _backend_cpu(database_url) - database_before
        idle, _all = (after - before for after, before in zip(_machine(), machine_before, strict=True))
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
    requests = len(stats["page"]) + len(stats["save"])
    elapsed = stats["elapsed"]
    obtained = (server_cpu + database_cpu) / elapsed
    return {"rate": requests / elapsed, "server_ms": server_cpu / requests * 1000,
            "database_ms": database_cpu / requests * 1000, "obtained": obtained,
            # The cores the server could have had: those it used plus those nobody used.
            "available": min(CORES, obtained + idle / elapsed), "idle": idle / elapsed,
            "client_cores": client_cpu / elapsed, "errors": len(stats["errors"]), "load": stats["load"],
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
        for kind, cost in costs.items():
            report(bench=BENCH, what=f"capacity input: {kind}, CPU per request (in-process, warm, PostgreSQL)",
                   ours=f"{cost.cpu_ms:.1f} ms ({cost.python_ms:.1f} ms Python + {cost.database_ms:.1f} ms "
                        f"PostgreSQL; wall median {cost.wall_ms:.1f} ms)",
                   peer=f"{1000 / cost.cpu_ms:.0f} requests/s per core")
        # The model, from the inputs alone: the load script's mix, Python's share and PostgreSQL's.
        share = sum(MIX.values())
        python = sum(costs[k].python_ms * w for k, w in MIX.items()) / share
        database = sum(costs[k].database_ms * w for k, w in MIX.items()) / share
        report(bench=BENCH, what="capacity model: CPU per request of the load script's mix (item page + save, "
                                 "every tenth save twice), from the inputs",
               ours=f"{python + database:.1f} ms ({python:.1f} ms Python + {database:.1f} ms PostgreSQL)",
               peer=f"{1000 / (python + database):.0f} requests/s per core; one process at most "
                    f"{1000 / python:.0f} requests/s (it holds the GIL)")
        for processes in PROCESSES:
            run = _saturate(processes, world.sessions, url)
            measured = run["server_ms"] + run["database_ms"]
            predicted = min(run["available"] * 1000 / (python + database), processes * 1000 / python)
            report(bench=BENCH, what=f"capacity check, CPU per request: {processes} gunicorn process"
                                     f"{'es' if processes > 1 else ''} x {THREADS} threads, PostgreSQL, 50 reviewers "
                                     "with no think time (saturation)",
                   ours=f"{measured:.1f} ms ({run['server_ms']:.1f} ms gunicorn + {run['database_ms']:.1f} ms "
                        "PostgreSQL)",
                   peer=f"model {python + database:.1f} ms ({python:.1f} + {database:.1f})",
                   ratio=measured / (python + database), goal_ratio=1.25, goal="<= 1.25x the model",
                   load=run["load"])
            report(bench=BENCH, what=f"capacity check, throughput: {processes} gunicorn process"
                                     f"{'es' if processes > 1 else ''} x {THREADS} threads (saturation)",
                   ours=f"{run['rate']:.0f} requests/s on {run['available']:.2f} cores available "
                        f"({run['obtained']:.2f} used by the server, {run['idle']:.2f} idle; the load generator used "
                        f"{run['client_cores']:.2f}): {run['rate'] / run['available']:.0f} requests/s per available "
                        f"core; p95 {run['p95']:.0f} ms, {run['errors']:.0f} errors",
                   peer=f"model {predicted:.0f} requests/s (min({run['available']:.2f} cores / "
                        f"{python + database:.1f} ms, {processes} x 1 / {python:.1f} ms))",
                   ratio=run["rate"] / predicted, ratio_text=f"{run['rate'] / predicted:.2f}x the model",
                   load=run["load"])


if __name__ == "__main__":
    main()
