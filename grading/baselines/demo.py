"""Demo data: the two offline baselines on the demo sample, built now (the local extractor runs on the worker).

With the local MiniLM extractor's job (``grading.runs.demo``) these make the
three offline systems of the CUAD leaderboard. Idempotent: a second ``make demo``
finds the stored runs and builds nothing.
"""

from __future__ import annotations

import time

from grading.baselines.services import BASELINES, baseline_run_create
from grading.dataset.models import Sample


def load_baselines_demo(*, sample: Sample, stdout) -> float:
    """Build (or find) each baseline's run on ``sample``; returns the seconds spent."""
    started, cpu = time.perf_counter(), time.process_time()
    for key in BASELINES:
        result = baseline_run_create(sample=sample, key=key)
        verb = f"built in {result.seconds:.1f} s" if result.created else "present"
        stdout.write(f"grading baselines: {result.system.name} run #{result.run.pk} {verb} "
                     f"({result.run.n_extractions} extractions; {result.system.validation.lower()})\n")
    seconds = time.perf_counter() - started
    stdout.write(
        f"grading baselines: {seconds:.1f} s ({time.process_time() - cpu:.1f} s CPU); the CUAD leaderboard "
        "(/cuad/scorecard/leaderboard/) ranks them with the local MiniLM extractor once the worker has run its job\n"
    )
    return seconds
