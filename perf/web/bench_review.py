"""Blinded review under load: 50 concurrent reviewers against gunicorn on PostgreSQL.

What it does (bounded; about a minute in all):
1. Creates its own database ``bench_review_<random>`` (server and prefix from BENCH_REVIEW_DATABASE_URL), dropped
   at the end by this run only, migrates,
   creates 50 reviewers, a 300-item pool, 2 reviewers per item (12 items each), and a logged-in
   session per reviewer (no password hashing in the measured path).
2. Starts gunicorn on 127.0.0.1 (gthread workers) with that database.
3. After a 5 s warm-up that is not measured (connections, template compilation), phase
   "reviewers": 50 concurrent reviewers, each loads an item page then saves a draft through
   the htmx form post, with a think time of 2-6 s between actions (still many times quicker than a
   lawyer reading a statute section; BENCH_REVIEW_THINK="lo,hi" changes it).
   Phase "saturation": the same with no think time at all, to show the ceiling.
   Every tenth save is sent twice with the same content (a double click).
4. Counts revisions in the database against what the clients saw: every save that changed the
   grades must be exactly one revision (none lost), every repeated save none (no duplicate).
Prints p50/p95/p99 of page load and save, throughput, and the integrity counts. No assertions
on timings; it exits non-zero only if a judgment was lost or duplicated or a request failed.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
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
from perf.web.review_world import free_port, review_world  # noqa: E402

BENCH = Path(__file__).stem
GOAL_MS = 150.0
DATABASE_URL = os.environ.get("BENCH_REVIEW_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench_review")
REVIEWERS = int(os.environ.get("BENCH_REVIEW_REVIEWERS", "50"))
ITEMS = int(os.environ.get("BENCH_REVIEW_ITEMS", "300"))
PHASE_SECONDS = float(os.environ.get("BENCH_REVIEW_SECONDS", "20"))
WORKERS = int(os.environ.get("BENCH_REVIEW_WORKERS", str(2 * (os.cpu_count() or 1) + 1)))
THREADS = int(os.environ.get("BENCH_REVIEW_THREADS", "4"))
THINK = tuple(float(x) for x in os.environ.get("BENCH_REVIEW_THINK", "2,6").split(","))


def _setup() -> tuple[dict[str, str], list[str]]:
    """Returns session cookie per reviewer and the pool's item ids."""
    world = review_world(database_url=DATABASE_URL, reviewers=REVIEWERS, items=ITEMS)
    return world.sessions, world.item_ids


def _start_gunicorn(port: int) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": DATABASE_URL, "DEBUG": "0", "LOG_LEVEL": "WARNING"}
    env.pop("REDIS_URL", None)
    return subprocess.Popen(
        [str(REPO / ".venv" / "bin" / "gunicorn"), "reviewapp.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", str(WORKERS), "--worker-class", "gthread", "--threads", str(THREADS),
         "--log-level", "warning", "--timeout", "60"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )


def _wait_up(port: int, process: subprocess.Popen) -> None:
    import httpx

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("gunicorn exited: " + process.stderr.read().decode()[-2000:])
        try:
            if httpx.get(f"http://127.0.0.1:{port}/accounts/login/", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise SystemExit("gunicorn did not answer within 30 s")


REVISION = re.compile(r'data-revision="(\d+)"')
# The hashes of the texts shown travel back with every grade (label integrity): a save without them is refused.
SHOWN = re.compile(r'<input type="hidden" name="(\w+_hash)" value="([0-9a-f]+)">')


async def _reviewer(base: str, username: str, session_key: str, deadline: float, think: tuple[float, float],
                    stats: dict, expected: Counter, seed: int) -> None:
    import httpx

    rng = random.Random(seed)
    if think[1]:
        # Reviewers do not all click in the same millisecond: stagger the start over one think time.
        await asyncio.sleep(rng.uniform(0, think[1]))
    async with httpx.AsyncClient(base_url=base, cookies={"sessionid": session_key}, timeout=30) as client:
        queue = (await client.get("/api/v1/review/queue/")).json()
        item_ids = [entry["item"] for q in queue for entry in q["items"]]
        step = 0
        while time.monotonic() < deadline:
            item_id = item_ids[step % len(item_ids)]
            started = time.perf_counter()
            page = await client.get(f"/review/workspace/items/{item_id}/")
            stats["page"].append(time.perf_counter() - started)
            if page.status_code != 200:
                stats["errors"].append(f"GET {page.status_code}")
                continue
            revision = int(REVISION.search(page.text).group(1))
            # A grade pair that differs from the last one saved on this item, so the save is a change.
            grades = {"section": str((revision + 1) % 4), "passage": str((revision // 4 + 1) % 4)}
            if think[1]:
                await asyncio.sleep(rng.uniform(*think))
            body = {**grades, **dict(SHOWN.findall(page.text)), "action": "save",
                    "csrfmiddlewaretoken": client.cookies.get("csrftoken", "")}
            headers = {"HX-Request": "true", "X-CSRFToken": client.cookies.get("csrftoken", "")}
            repeats = 2 if step % 10 == 9 else 1
            for attempt in range(repeats):
                started = time.perf_counter()
                saved = await client.post(f"/review/workspace/items/{item_id}/", data=body, headers=headers)
                stats["save"].append(time.perf_counter() - started)
                if saved.status_code != 200 or (attempt == 0 and "saved (revision" not in saved.text):
                    stats["errors"].append(f"POST {saved.status_code}: {saved.text[:200]}")
                    break
                if attempt == 0:
                    expected[(username, item_id)] += 1
                else:
                    stats["double_submits"] += 1
                    if "Nothing changed" not in saved.text:
                        stats["errors"].append("a repeated save was not recognised as unchanged")
            step += 1
            if think[1]:
                await asyncio.sleep(rng.uniform(*think))


async def _phase(base: str, cookies: dict[str, str], seconds: float, think: tuple[float, float],
                 expected: Counter) -> dict:
    stats: dict = {"page": [], "save": [], "errors": [], "double_submits": 0}
    deadline = time.monotonic() + seconds
    started = time.monotonic()
    await asyncio.gather(*[
        _reviewer(base, name, key, deadline, think, stats, expected, seed)
        for seed, (name, key) in enumerate(sorted(cookies.items()))
    ])
    stats["elapsed"] = time.monotonic() - started
    stats["load"] = os.getloadavg()[0]  # at the end of this phase: the next phase would change it
    return stats


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0] * 1000
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def _report(name: str, stats: dict) -> None:
    """Prints the phase's detail (the headline figures are reported by ``_headline``)."""
    requests = len(stats["page"]) + len(stats["save"])
    print(f"  phase {name}: {len(stats['page'])} page loads, {len(stats['save'])} saves "
          f"({stats['double_submits']} double submits) in {stats['elapsed']:.1f} s, "
          f"{requests / stats['elapsed']:.0f} requests/s, errors {len(stats['errors'])}")
    for kind in ("page", "save"):
        values = stats[kind]
        print(f"    {kind:<5} p50 {_pct(values, 50):7.1f} ms   p95 {_pct(values, 95):7.1f} ms   "
              f"p99 {_pct(values, 99):7.1f} ms   max {max(values) * 1000 if values else float('nan'):7.1f} ms")
    for error in stats["errors"][:5]:
        print(f"    error: {error}")


def _headline(what: str, stats: dict, *, goal: bool) -> None:
    page, save = _pct(stats["page"], 95), _pct(stats["save"], 95)
    rate = (len(stats["page"]) + len(stats["save"])) / stats["elapsed"]
    ours = f"page p95 {page:.0f} ms, save p95 {save:.0f} ms ({rate:.0f} requests/s)"
    if goal:
        report(bench=BENCH, what=what, ours=ours, value=max(page, save), goal_value=GOAL_MS,
               goal=f"p95 < {GOAL_MS:.0f} ms", load=stats["load"])
    else:
        report(bench=BENCH, what=what, ours=ours, load=stats["load"])


def main() -> int:
    global DATABASE_URL
    # A database of this run's own (the configured name is only a prefix), dropped by this run only.
    with scratch_postgres(DATABASE_URL, prefix=DATABASE_URL.rsplit("/", 1)[1]) as url:
        DATABASE_URL = url
        return _run()


def _run() -> int:
    print(f"bench_review: {REVIEWERS} reviewers, {ITEMS} items x 2 reviewers, gunicorn {WORKERS} workers x "
          f"{THREADS} threads, PostgreSQL {DATABASE_URL.rsplit('/', 1)[1]}, {PHASE_SECONDS:.0f} s per phase, "
          f"{os.cpu_count()} CPUs; load average before {os.getloadavg()[0]:.1f} (the load generator shares the CPUs)")
    cookies, _ = _setup()
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    port = free_port()
    process = _start_gunicorn(port)
    failed = False
    try:
        _wait_up(port, process)
        base = f"http://127.0.0.1:{port}"
        expected: Counter = Counter()
        # Warm-up, not measured: gunicorn threads open their database connections, templates compile.
        warmup = asyncio.run(_phase(base, cookies, 5.0, THINK, expected))
        reviewers = asyncio.run(_phase(base, cookies, PHASE_SECONDS, THINK, expected))
        _report(f"reviewers (think time {THINK[0]:g}-{THINK[1]:g} s between actions)", reviewers)
        saturation = asyncio.run(_phase(base, cookies, PHASE_SECONDS, (0.0, 0.0), expected))
        _report("saturation (no think time)", saturation)
        failed = bool(warmup["errors"] or reviewers["errors"] or saturation["errors"])
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)

    from django.db.models import Count, Max

    from reviewapp.review.judgments.models import Judgment, JudgmentRevision

    actual = Counter()
    gaps = 0
    for row in (Judgment.objects.values("reviewer__username", "item__public_id", "revision_count")
                .annotate(n=Count("revisions"), top=Max("revisions__number"))):
        actual[(row["reviewer__username"], row["item__public_id"])] = row["n"]
        gaps += row["n"] != row["top"] or row["n"] != row["revision_count"]
    lost = sum(max(0, expected[k] - actual[k]) for k in set(expected) | set(actual))
    duplicated = sum(max(0, actual[k] - expected[k]) for k in set(expected) | set(actual))
    print(f"  load average after: {os.getloadavg()[0]:.1f}")
    print(f"  integrity: {sum(expected.values())} changing saves acknowledged, "
          f"{JudgmentRevision.objects.count()} revisions stored; lost {lost}, duplicated {duplicated}, "
          f"numbering gaps {gaps}")
    world = f"blinded review, {REVIEWERS} reviewers on gunicorn + PostgreSQL"
    _headline(f"{world}, {THINK[0]:g}-{THINK[1]:g} s between actions", reviewers, goal=True)
    _headline(f"{world}, no think time (saturation)", saturation, goal=False)
    # Integrity as figures: a count must be 0 (value < 1), whatever the speed.
    report(bench=BENCH, what=f"{world}: judgments lost (both phases)", ours=f"{lost}", value=lost, goal_value=1,
           goal="0")
    report(bench=BENCH, what=f"{world}: judgments duplicated or revision numbering gaps (both phases)",
           ours=f"{duplicated} duplicated, {gaps} gaps", value=duplicated + gaps, goal_value=1, goal="0")
    return 1 if failed or lost or duplicated or gaps else 0


if __name__ == "__main__":
    sys.exit(main())
