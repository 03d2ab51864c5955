"""Demo data for the CUAD grader: the real CUAD (idempotent), the seed-42, 100-contract sample, and on it the
three offline systems (the local extractor's job, the nearest-labelled-example and rule baselines)."""

from __future__ import annotations

import pathlib

from grading.dataset.services import cuad_load, sample_create

DEMO_SAMPLE = {"n": 100, "min_per_type": 30, "seed": 42}


def load_demo(*, data_dir: pathlib.Path, stdout) -> None:
    result = cuad_load(path=pathlib.Path(data_dir) / "cuad" / "CUAD_v1.json")
    d = result.dataset
    verb = "loaded" if result.created else "already loaded"
    stdout.write(f"grading: CUAD {verb} ({d.n_contracts} contracts, {d.n_spans} spans, {result.seconds:.1f} s)\n")
    sample, created = sample_create(dataset=d, **DEMO_SAMPLE)
    stdout.write(
        f"grading: sample n={sample.n} seed={sample.seed} {'created' if created else 'present'}"
        f" (manifest sha256 {sample.manifest_sha256[:12]})\n"
    )
    # The console: a synthetic comparison run graded now, and the local heuristic extraction job queued.
    from grading.runs.demo import load_console_demo

    load_console_demo(data_dir=data_dir, stdout=stdout)
    # The two other offline systems of the CUAD leaderboard, built here in seconds (no worker needed).
    from grading.baselines.demo import load_baselines_demo

    load_baselines_demo(sample=sample, stdout=stdout)
    # The label audit of the local-extractor run (launched when that extraction job has finished).
    from grading.audits.demo import load_audit_demo

    load_audit_demo(data_dir=data_dir, stdout=stdout)
