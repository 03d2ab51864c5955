"""CUAD grading speed on the real CUAD: one 100-contract, 41-category run end to end, then re-classification.

Targets: grading end to end under 2 s; re-classifying at new
thresholds from stored pair scores under 50 ms including the bootstrap
(B = 1000, overall and per clause type). Prints figures; never asserts them.

The run: every gold span of the seed-42, 100-contract sample plus as many
noise extractions (half verbatim passages of the same contract that are not
gold, half shuffled words, i.e. fabricated), as JSON. "End to end" = parse and
validate the run, compute pair scores (grounding, F1 matrices, Hungarian and
greedy assignments), store run and extractions, read them back and grade.

Uses a throwaway SQLite database (or BENCH_DATABASE_URL) so it never writes
into a developer's database.
"""

from __future__ import annotations

import os
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
BENCH = pathlib.Path(__file__).stem


def _setup_django(tmp: str) -> None:
    os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL", f"sqlite:///{tmp}/bench_cuad.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _setup_django(tmp)
        from perf.cuad.grading_bench import run_benchmark
        from perf.figures import report

        data_dir = pathlib.Path(os.environ.get("DATA_DIR", REPO.parent / "shared" / "data"))
        f = run_benchmark(data_dir=data_dir, stdout=sys.stdout)
    report(bench=BENCH, what=f"CUAD: grade {f['contracts']} contracts x 41 types, {f['extractions']:,} extractions, "
           "end to end", ours=f"{f['end_to_end_s']:.2f} s", value=f["end_to_end_s"], goal_value=2.0, goal="< 2 s")
    report(bench=BENCH, what="CUAD: re-classify at new thresholds from stored pair scores, incl. bootstrap",
           ours=f"{f['reclassify_ms']:.0f} ms ({f['reclassify_db_ms']:.0f} ms incl. database read)",
           value=f["reclassify_ms"], goal_value=50.0, goal="< 50 ms")


if __name__ == "__main__":
    main()
