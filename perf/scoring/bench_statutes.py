"""Statute benchmark performance: full HRS import time and keyword retrieval latency.

Targets: HRS import (5,473 sections) under 30 s; keyword retrieval
median under 20 ms per query over the HRS corpus, on the engine of the
database in use. Runs in a throw-away test database (Django's test database
machinery, under a database name made up by this run), so it never touches real data
nor anyone else's test database: SQLite by default, PostgreSQL when
DATABASE_URL points at it. Prints the figures; asserts nothing.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")

from perf.figures import report
from perf.questions import QUESTIONS
from perf.scratch_db import scratch_test_database

BENCH = Path(__file__).stem
REPEATS = 5
ENGINE_LABELS = {"sqlite-fts5": "SQLite", "postgresql-fts": "PostgreSQL"}


def main() -> None:
    import django

    django.setup()
    from django.conf import settings

    from benchmarks.corpus.selectors import corpus_current_snapshots
    from benchmarks.corpus.services import statutes_import
    from benchmarks.retrieval.engines import CONFIGURATIONS, engine_for_connection, keyword_search

    hrs_dir = Path(settings.DATA_DIR) / "statutes" / "hrs"
    with scratch_test_database("bench_statutes"):
        engine = engine_for_connection()
        started = time.perf_counter()
        outcomes = statutes_import(fmt="hrs-json", paths=[hrs_dir])
        import_seconds = time.perf_counter() - started
        sections = sum(o.snapshot.provision_count for o in outcomes)
        snapshot_ids = [s.pk for s in corpus_current_snapshots(corpus="hrs")]

        started = time.perf_counter()
        statutes_import(fmt="hrs-json", paths=[hrs_dir])
        noop_seconds = time.perf_counter() - started

        medians = {}
        for name in ("keyword-v1", "heading-v1"):
            config = CONFIGURATIONS[name]
            for question in QUESTIONS:  # warm caches once, as a server would be
                keyword_search(text=question, snapshot_ids=snapshot_ids, k=30, configuration=config)
            per_query, fallbacks = [], 0
            for question in QUESTIONS:
                times = []
                for _ in range(REPEATS):
                    t0 = time.perf_counter()
                    outcome = keyword_search(text=question, snapshot_ids=snapshot_ids, k=30, configuration=config)
                    times.append((time.perf_counter() - t0) * 1000)
                fallbacks += outcome.fallback_used
                per_query.append(statistics.median(times))
            medians[name] = statistics.median(per_query)
            print(f"{engine.name} {name}: retrieval median {statistics.median(per_query):.2f} ms/query, "
                  f"p90 {sorted(per_query)[int(0.9 * len(per_query)) - 1]:.2f} ms, max {max(per_query):.2f} ms "
                  f"over {len(QUESTIONS)} questions x {REPEATS} (k=30; {fallbacks} used the fallback) "
                  f"[target < 20 ms median]")
        print(f"{engine.name}: HRS import {sections} sections in {import_seconds:.2f} s [target < 30 s]; "
              f"re-import of identical bytes (no-op) {noop_seconds:.2f} s")
    # The engine is part of what: a SQLite run and a PostgreSQL run are two rows, not one figure twice.
    label = ENGINE_LABELS.get(engine.name, engine.name)
    report(bench=BENCH, what=f"HRS import, {sections:,} sections ({label})", ours=f"{import_seconds:.1f} s",
           value=import_seconds, goal_value=30.0, goal="< 30 s")
    report(bench=BENCH, what=f"keyword retrieval over HRS, median per query (keyword-v1, {label})",
           ours=f"{medians['keyword-v1']:.1f} ms", value=medians["keyword-v1"], goal_value=20.0, goal="< 20 ms")


if __name__ == "__main__":
    main()
