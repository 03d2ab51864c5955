from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from grading.dataset.selectors import dataset_get
from grading.dataset.services import sample_create


class Command(BaseCommand):
    help = "Seeded CUAD contract sample (greedy clause-type coverage, then length spread); writes the manifest."

    # No system checks before it runs: they import the whole URL config (every view, the API schema tooling),
    # ~0.5 s of CPU in a command that reads the loaded contracts. `manage.py check` and CI run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--n", type=int, default=100)
        parser.add_argument("--min-per-type", type=int, default=30)
        parser.add_argument("--seed", type=int, default=42)
        parser.add_argument("--out", default=None, help="manifest path (default: print it)")
        parser.add_argument("--dataset", default=None, metavar="ID",
                            help="a loaded dataset's id (a firm's gold set; default: the newest CUAD public one)")

    def handle(self, *args, n: int, min_per_type: int, seed: int, out: str | None, **options):
        dataset = dataset_get(dataset_id=options.get("dataset"))
        if dataset is None:
            raise CommandError(f"no dataset {options['dataset']}" if options.get("dataset")
                               else "no CUAD loaded; run load_cuad PATH first")
        try:
            sample, _ = sample_create(dataset=dataset, n=n, min_per_type=min_per_type, seed=seed)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        data = sample.manifest.encode("utf-8")
        if out is None:
            self.stdout.write(sample.manifest, ending="")
            return
        Path(out).write_bytes(data)
        manifest = json.loads(data)
        per_type = manifest["per_type"]
        self.stdout.write(
            f"wrote {out}: {len(manifest['contracts'])} contracts "
            f"({sum(c['phase'] == 'coverage' for c in manifest['contracts'])} by coverage), "
            f"per-type contracts min {min(per_type.values())} / median {sorted(per_type.values())[len(per_type) // 2]}"
            f" / max {max(per_type.values())}; below {min_per_type}: "
            + (
                ", ".join(
                    f"{t} {per_type[t]}/{manifest['available_per_type'][t]}" for t in manifest["types_below_target"]
                )
                or "none"
            )
            + f"; sha256 {sample.manifest_sha256}"
        )
