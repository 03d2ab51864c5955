"""Time of the full relevance metric set: 30 queries, two systems, 10,000 paired family replicates.

Target: under 300 ms. Pure scoring, no Django. Prints figures;
never asserts them.

What one "full metric set" is here: per-query Hit@1/5/10, RR and coverage for
the keyword order and the reranked order of the same 30 candidates; judged P@5
and pooled nDCG@5 for both systems; then paired family bootstrap intervals
(10,000 replicates, seed 20260920) for Hit@1, Hit@5, Hit@10, RR, P@5 and
nDCG@5, and a single-system interval for coverage.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np

from perf.figures import report
from scoring.ir.family_bootstrap import family_bootstrap, paired_family_bootstrap
from scoring.ir.ranking import judged_precision_at_5, pooled_ndcg_at_5, query_ranking_metrics

BENCH = Path(__file__).stem
N_QUERIES = 30
N_CANDIDATES = 30
N_FAMILIES = 10
REPLICATES = 10_000
SEED = 20260920


def _synthetic_suite(rng: np.random.Generator):
    queries = []
    for q in range(N_QUERIES):
        candidates = [f"q{q}-p{i}" for i in range(N_CANDIDATES)]
        targets = set(rng.choice([*candidates, "absent"], size=int(rng.integers(1, 4)), replace=False))
        reranked = list(rng.permutation(candidates))
        pool = set(candidates[:5]) | set(reranked[:5])
        labels = {d: int(rng.integers(0, 4)) for d in pool}
        if rng.random() < 0.2:
            labels[next(iter(pool))] = None  # an unjudged pool member: excluded from pooled nDCG
        queries.append((candidates, reranked, targets, pool, labels, f"family-{q % N_FAMILIES}"))
    return queries


def full_metric_set(queries) -> dict[str, object]:
    families = [q[5] for q in queries]
    per_system: dict[str, dict[str, list]] = {"keyword": {}, "reranked": {}}
    for candidates, reranked, targets, pool, labels, _ in queries:
        for system, ranked in (("keyword", candidates), ("reranked", reranked)):
            metrics = query_ranking_metrics(ranked, targets, candidates=candidates).as_dict()
            metrics["P@5"] = judged_precision_at_5(ranked, labels)
            metrics["nDCG@5"] = pooled_ndcg_at_5(ranked, pool, labels)
            for name, value in metrics.items():
                per_system[system].setdefault(name, []).append(value)
    results: dict[str, object] = {}
    for name in ("Hit@1", "Hit@5", "Hit@10", "RR", "P@5", "nDCG@5"):
        results[name] = paired_family_bootstrap(
            per_system["reranked"][name], per_system["keyword"][name], families, replicates=REPLICATES, seed=SEED
        )
    results["coverage"] = family_bootstrap(
        per_system["keyword"]["coverage"], families, replicates=REPLICATES, seed=SEED
    )
    return results


def main() -> None:
    queries = _synthetic_suite(np.random.default_rng(1))
    timings = []
    for _ in range(11):
        start = time.perf_counter()
        results = full_metric_set(queries)
        timings.append((time.perf_counter() - start) * 1000.0)
    hit5 = results["Hit@5"]
    print(
        f"relevance metrics: {N_QUERIES} queries x {N_CANDIDATES} candidates, 2 systems, "
        f"{N_FAMILIES} families, {REPLICATES} paired replicates, 6 paired metrics + coverage"
    )
    print(f"  first run      {timings[0]:8.1f} ms")
    median = statistics.median(timings[1:])
    print(f"  median of 10   {median:8.1f} ms   (target < 300 ms)")
    print(f"  max of 10      {max(timings[1:]):8.1f} ms")
    print(
        f"  check: Hit@5 difference {hit5.difference.estimate:+.3f} "
        f"[{hit5.difference.low:+.3f}, {hit5.difference.high:+.3f}]"
    )
    report(bench=BENCH, what=f"relevance metric set, {N_QUERIES} queries x 2 systems, {REPLICATES:,} paired "
           "replicates, 6 paired metrics + coverage", ours=f"{median:.0f} ms", value=median, goal_value=300.0,
           goal="< 300 ms")


if __name__ == "__main__":
    main()
