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

REPO = pathlib.Path(__file__).resolve().parents[1]


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
        from django.core.management import call_command

        data_dir = pathlib.Path(os.environ.get("DATA_DIR", REPO.parent / "shared" / "data"))
        call_command("cuad_bench", "--data-dir", str(data_dir))


if __name__ == "__main__":
    main()
