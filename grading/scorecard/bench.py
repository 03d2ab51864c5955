"""The CUAD grading benchmark body (see perf/bench_cuad_grading.py, which runs it on a throwaway database).

Kept in grading/ so the perf script reaches it through a management command
rather than importing the grading job from the benchmarks package.
"""

from __future__ import annotations

import json
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


def run_benchmark(*, data_dir: pathlib.Path, stdout) -> None:
    if True:
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
        times = []
        for i in range(REPEATS):
            t0 = time.perf_counter()
            grade(pairs.table, settings[i % len(settings)], replicates=1000, seed=0)
            times.append(time.perf_counter() - t0)
        _print(
            stdout,
            f"re-classify at new thresholds from stored pair scores, incl. bootstrap B=1000 overall + 41 types: "
            f"median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms over {REPEATS}",
        )
        times = []
        for i in range(5):
            t0 = time.perf_counter()
            run_scorecard(run=run, contract_ids=ids, thresholds=settings[i % 3], matcher="greedy")
            times.append(time.perf_counter() - t0)
        median_ms = statistics.median(times) * 1000
        _print(stdout, f"  same, including reading the stored pair scores from the database: median {median_ms:.1f} ms")
