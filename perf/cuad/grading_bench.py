"""The CUAD grading benchmark body (perf/cuad/bench_cuad_grading.py runs it on a throwaway database).

Only the bench runs it, so it lives beside the bench rather than in the grading job.
"""

from __future__ import annotations

import json
import os
import pathlib
import statistics
import time

REPEATS = 20


def _print(stdout, line: str) -> None:
    stdout.write(line + "\n")


def _build_run(contract_ids: list[int], seed: int = 7) -> bytes:
    import numpy as np

    from grading.dataset.models import Contract, Span

    rng = np.random.default_rng(seed)
    contracts = {c.pk: c for c in Contract.objects.filter(pk__in=contract_ids)}
    spans = list(Span.objects.filter(contract_id__in=contract_ids).select_related("category"))
    extractions = [
        {"contract": contracts[s.contract_id].title, "category": s.category.name, "text": s.text} for s in spans
    ]
    for i, s in enumerate(spans):
        text = contracts[s.contract_id].text
        length = max(40, min(len(s.text), 600))
        if i % 2 == 0:
            start = int(rng.integers(0, max(1, len(text) - length)))
            noise = text[start : start + length]
        else:
            words = s.text.split() or ["nothing"]
            noise = " ".join(rng.permutation([*words, "purple", "zeppelin", "saffron"]).tolist())
        if not noise.strip():
            noise = "fabricated clause text"
        extractions.append({"contract": contracts[s.contract_id].title, "category": s.category.name, "text": noise})
    return json.dumps({"model": "bench-noise", "extractions": extractions}).encode("utf-8")


def run_benchmark(*, data_dir: pathlib.Path, stdout) -> dict[str, float]:
    """Prints every figure; returns the headline ones (perf/cuad/bench_cuad_grading.py reports them)."""
    from grading.dataset.selectors import sample_contract_ids
    from grading.dataset.services import cuad_load, sample_create
    from grading.runs.selectors import run_pair_table
    from grading.runs.services import extraction_run_import, extraction_run_validate
    from grading.scorecard.selectors import run_scorecard
    from scoring.cuad.grading import Thresholds, grade

    load = cuad_load(path=data_dir / "cuad" / "CUAD_v1.json")
    _print(stdout, f"load_cuad (510 contracts, 13,823 spans, every span checked): {load.seconds:.2f} s")
    t0 = time.perf_counter()
    sample, _ = sample_create(dataset=load.dataset, n=100, min_per_type=30, seed=42)
    _print(stdout, f"sample_cuad n=100 min-per-type=30 seed=42: {time.perf_counter() - t0:.3f} s")
    ids = sample_contract_ids(sample=sample)
    raw = _build_run(ids)
    n_ext = len(json.loads(raw)["extractions"])

    t0 = time.perf_counter()
    extraction_run_validate(dataset=load.dataset, raw=raw)
    validate_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    run, _ = extraction_run_import(dataset=load.dataset, raw=raw, source_name="bench.json")
    import_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    card = run_scorecard(run=run, contract_ids=ids)
    grade_s = time.perf_counter() - t0
    c = card.overall.counts
    _print(
        stdout,
        f"run: {n_ext} extractions ({c['spans']} gold spans + as many noise), 100 contracts, "
        f"{sum(1 for r in card.rows if r.figures.counts['spans'])} categories with gold",
    )
    _print(
        stdout,
        f"grade end to end: {import_s + grade_s:.3f} s  (validate {validate_s:.3f} s is inside import; "
        f"import + pair scores + store {import_s:.3f} s, read back + grade + bootstrap {grade_s:.3f} s)",
    )
    _print(
        stdout,
        f"  outcomes: correct {c['correct']} partial {c['partial']} incorrect {c['incorrect']} "
        f"hallucinated {c['hallucinated']} missed {c['missed']}; P {card.overall.precision.estimate:.3f} "
        f"R {card.overall.recall.estimate:.3f} F1 {card.overall.f1.estimate:.3f}",
    )

    pairs = run_pair_table(run=run, contract_ids=ids, matcher="hungarian")
    settings = [Thresholds(0.7, 0.4, 0.8), Thresholds(0.8, 0.5, 0.9), Thresholds(0.6, 0.3, 0.7)]
    reclassify = []
    for i in range(REPEATS):
        t0 = time.perf_counter()
        grade(pairs.table, settings[i % len(settings)], replicates=1000, seed=0)
        reclassify.append(time.perf_counter() - t0)
    _print(
        stdout,
        f"re-classify at new thresholds from stored pair scores, incl. bootstrap B=1000 overall + 41 types: "
        f"median {statistics.median(reclassify) * 1000:.1f} ms, max {max(reclassify) * 1000:.1f} ms "
        f"over {REPEATS}",
    )
    times = []
    for i in range(5):
        t0 = time.perf_counter()
        run_scorecard(run=run, contract_ids=ids, thresholds=settings[i % 3], matcher="greedy")
        times.append(time.perf_counter() - t0)
    median_ms = statistics.median(times) * 1000
    _print(stdout, f"  same, including reading the stored pair scores from the database: median {median_ms:.1f} ms")
    return {"extractions": n_ext, "contracts": len(ids), "end_to_end_s": import_s + grade_s,
            "reclassify_ms": statistics.median(reclassify) * 1000, "reclassify_db_ms": median_ms}


LEADERBOARD_BUDGET_MS = 50.0


def run_leaderboard_benchmark(*, data_dir: pathlib.Path, stdout, settings_count: int = 40) -> dict[str, float]:
    """Three runs on the real seed-42 sample (CUAD gold, and gold with injected errors at two seeds) ranked by
    ``leaderboard_view`` at random thresholds and both matchers: figures of every run, every pair, the clause type
    x model table, B = 1000 paired contract bootstrap. "cold" includes reading the pair scores from the database.
    Prints every figure; returns the headline ones (perf/cuad/bench_cuad_leaderboard.py reports them)."""
    import numpy as np

    from grading.dataset.models import Contract, Span
    from grading.dataset.selectors import sample_contract_ids
    from grading.dataset.services import cuad_load, sample_create
    from grading.runs.demo import synthetic_run
    from grading.runs.selectors import cache_clear
    from grading.runs.services import extraction_run_import
    from grading.scorecard.leaderboard import leaderboard_view
    from grading.scorecard.params import View
    from scoring.cuad.grading import Thresholds

    dataset = cuad_load(path=data_dir / "cuad" / "CUAD_v1.json").dataset
    sample, _ = sample_create(dataset=dataset, n=100, min_per_type=30, seed=42)
    ids = sample_contract_ids(sample=sample)
    titles = dict(Contract.objects.filter(pk__in=ids).values_list("id", "title"))
    gold = {
        "model": "gold",
        "extractions": [
            {"contract": titles[c], "category": k, "text": t}
            for c, k, t in Span.objects.filter(contract_id__in=ids).values_list("contract_id", "category__name", "text")
        ],
    }
    started = time.perf_counter()
    runs = [extraction_run_import(dataset=dataset, raw=json.dumps(gold))[0]]
    for seed in (7, 11):
        raw = synthetic_run(sample=sample, seed=seed)
        raw["model"] = f"gold with injected errors (seed {seed})"
        runs.append(extraction_run_import(dataset=dataset, raw=json.dumps(raw))[0])
    _print(stdout, f"runs: {', '.join(str(r.n_extractions) for r in runs)} extractions on {sample.n} contracts, "
                   f"imported with pair scores in {time.perf_counter() - started:.1f} s")

    rng = np.random.default_rng(0)
    views = []
    for _ in range(settings_count):
        correct = float(rng.uniform(0.3, 1.0))
        thresholds = Thresholds(correct, float(rng.uniform(0, correct)), float(rng.uniform(0.3, 1.0)))
        views.append(View(runs=runs, sample=sample, thresholds=thresholds,
                          matcher=("hungarian", "greedy")[int(rng.integers(2))]))
    cache_clear()
    t0 = time.perf_counter()
    lb = leaderboard_view(view=View(runs=runs, sample=sample, thresholds=Thresholds(), matcher="hungarian"))
    cold = (time.perf_counter() - t0) * 1000
    warm, cpu = [], []
    for view in views:
        t0, c0 = time.perf_counter(), time.process_time()
        leaderboard_view(view=view)
        warm.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    warm.sort()
    p95 = warm[min(len(warm) - 1, int(0.95 * len(warm)))]
    _print(stdout, "  " + "; ".join(f"#{e.rank} {e.run.model} F1 {e.standing.overall.f1.estimate:.3f}"
                                    for e in lb.entries))
    _print(
        stdout,
        f"CUAD leaderboard regrade (server, 3 runs x 100 contracts, every pair, 41 types, B=1000 paired): "
        f"cold {cold:.1f} ms; warm median {statistics.median(warm):.1f} ms, p95 {p95:.1f} ms, max {warm[-1]:.1f} ms "
        f"(n={len(warm)})  [budget < {LEADERBOARD_BUDGET_MS:.0f} ms]",
    )
    # Wall time on a shared machine includes waiting for a core; CPU time (all threads) says what the work costs.
    _print(stdout, f"  CPU time of the same regrades: median {statistics.median(cpu):.1f} ms; load average "
                   f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return {"median_ms": statistics.median(warm), "p95_ms": p95, "cpu_ms": statistics.median(cpu), "cold_ms": cold,
            "budget_ms": LEADERBOARD_BUDGET_MS}
