"""Time of a five-run statute leaderboard: 30 ranking queries x 30 candidates, keyword order and five rerank runs.

Every figure (per-query Hit@1/5/10 and RR for six systems; per split one shared draw of 10,000 family
replicates for 24 means and 60 pairwise differences with p-values and Holm's adjustment), then every artifact
the page serves (JSON, CSV, per-query table, six TREC runs, qrels, the forest plot SVG). From plain inputs,
so the arithmetic is timed without a database. Prints figures; never asserts them.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")

import django

django.setup()

import numpy as np  # noqa: E402

from benchmarks.reports.exports.leaderboard import (  # noqa: E402
    leaderboard_as_json,
    leaderboard_csv,
    leaderboard_per_query,
    leaderboard_trec_qrels,
    leaderboard_trec_run,
)
from benchmarks.reports.figures import PRIMARY_METRIC, PRIMARY_SPLIT  # noqa: E402
from benchmarks.reports.inputs import (  # noqa: E402
    Candidate,
    QueryInput,
    RerankMeta,
    RerankScores,
    RetrievalMeta,
    SuiteMeta,
    rerank_apply,
)
from benchmarks.reports.leaderboard import LeaderboardInputs, RerankEntry, leaderboard_compute  # noqa: E402
from benchmarks.reports.reading.svg import leaderboard_forest_svg  # noqa: E402
from perf.figures import report  # noqa: E402

BENCH = Path(__file__).stem
REPLICATES = 10_000
SEED = 20260920
REPEATS = 5
RUNS = 5


def synthetic_inputs(seed: int = 1) -> LeaderboardInputs:
    rng = np.random.default_rng(seed)
    suite = SuiteMeta(None, "bench", 1, "nrs", "0" * 64, "0" * 64, "2026-09-20T00:00:00+00:00", ())
    retrieval = RetrievalMeta(1, "sqlite-fts5", "keyword-v1", "", 30, "p1", 300, "done", "", "0" * 64)
    queries = []
    for q in range(30):
        split = "dev" if q < 12 else "heldout"
        docs = rng.choice(300, size=30, replace=False)
        candidates = tuple(Candidate(f"NRS_{d}", int(d), f"NRS {d}", "heading", rank, float(31 - rank), False,
                                     "0" * 64) for rank, d in enumerate(docs, start=1))
        targets = tuple(f"NRS_{d}" for d in rng.choice(docs, size=2, replace=False))
        queries.append(QueryInput(f"q{q}", "text", "ranking", split, f"{split}-{q % 6}", targets, targets,
                                  candidates))
    entries = []
    for r in range(RUNS):
        meta = RerankMeta(10 + r, "local", "local heuristic", f"model-{r}", "v1", "0" * 64, "done")
        p_useful = {q.qid: {c.provision_id: float(rng.random()) for c in q.candidates} for q in queries}
        entries.append(RerankEntry(meta, rerank_apply(queries, RerankScores(meta, p_useful, {}))))
    return LeaderboardInputs(suite, retrieval, tuple(queries), tuple(entries))


def everything(inputs: LeaderboardInputs) -> int:
    board = leaderboard_compute(inputs, replicates=REPLICATES, seed=SEED)
    size = len(str(leaderboard_as_json(board))) + len(leaderboard_csv(board)) + len(leaderboard_per_query(board))
    size += len(leaderboard_trec_qrels(board))
    size += sum(len(leaderboard_trec_run(board, system=s.key)) for s in board.systems)
    size += len(leaderboard_forest_svg(board.forest_rows(), endpoint=f"{PRIMARY_SPLIT} {PRIMARY_METRIC}",
                                       replicates=board.replicates, seed=board.seed))
    return size


def main() -> None:
    inputs = synthetic_inputs()
    everything(inputs)  # warm-up: imports, numpy dispatch
    times, cpu = [], []
    for _ in range(REPEATS):
        start, start_cpu = time.perf_counter(), time.process_time()
        everything(inputs)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    # CPU time beside wall time: on a shared machine the wall time mostly measures the wait for a core.
    print(f"statute leaderboard, keyword + {RUNS} rerank runs, 30 queries x 30 candidates, "
          f"{REPLICATES:,} family replicates, every figure and export: "
          f"median {statistics.median(times):.0f} ms (CPU {statistics.median(cpu):.0f} ms), min {min(times):.0f} ms, "
          f"max {max(times):.0f} ms over {REPEATS} repeats (load average {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} CPUs)")
    report(bench=BENCH, what=f"statute leaderboard: keyword + {RUNS} rerank runs, {REPLICATES:,} family replicates, "
           "every figure and export",
           ours=f"median {statistics.median(times):.0f} ms (CPU {statistics.median(cpu):.0f} ms)")


if __name__ == "__main__":
    main()
