from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from grading.dataset.selectors import ScopeError, dataset_current, manifest_scope
from grading.runs.run_format import RunFormatError
from grading.runs.services import extraction_run_import
from grading.scorecard.selectors import run_scorecard
from scoring.cuad.grading import Thresholds
from scoring.cuad.matching import MATCHERS


class Command(BaseCommand):
    help = "Grade an extraction run (JSON or JSON Lines) against CUAD: two axes, optimal matching, contract bootstrap."

    # No system checks before it runs: they import the whole URL config (every view, the API schema tooling),
    # ~0.5 s of CPU in a command that grades one run file. `manage.py check` and CI run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--run", required=True, help="run file: JSON or JSON Lines")
        parser.add_argument("--manifest", default=None, help="sample manifest; gold = its contracts (default: all)")
        parser.add_argument("--correct", type=float, default=0.70)
        parser.add_argument("--partial", type=float, default=0.40)
        parser.add_argument("--grounding", type=float, default=0.80)
        parser.add_argument("--matcher", choices=MATCHERS, default="hungarian")
        parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
        parser.add_argument("--replicates", type=int, default=1000, help="bootstrap replicates (B)")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args, **o):
        try:
            thresholds = Thresholds(correct=o["correct"], partial=o["partial"], grounding=o["grounding"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        contract_ids = None
        if o["manifest"]:
            try:
                dataset, contract_ids = manifest_scope(manifest=Path(o["manifest"]).read_bytes())
            except (OSError, ScopeError) as exc:
                raise CommandError(str(exc)) from exc
        else:
            dataset = dataset_current()
            if dataset is None:
                raise CommandError("no CUAD loaded; run load_cuad PATH first")
        run_path = Path(o["run"])
        try:
            raw = run_path.read_bytes()
        except OSError as exc:
            raise CommandError(f"{run_path}: {exc.strerror}") from exc
        try:
            run, _ = extraction_run_import(
                dataset=dataset, raw=raw, source_name=run_path.name, default_model=run_path.stem
            )
        except RunFormatError as exc:
            raise CommandError(f"{run_path}: {exc}") from exc
        card = run_scorecard(
            run=run,
            contract_ids=contract_ids,
            thresholds=thresholds,
            matcher=o["matcher"],
            seed=o["seed"],
            replicates=o["replicates"],
        )
        outside = run.n_extractions - card.overall.counts["extractions"]
        if outside:
            self.stderr.write(
                f"note: {outside} extraction(s) are for contracts outside the manifest and are not graded"
            )
        if o["json"]:
            self.stdout.write(json.dumps(card.as_json(), indent=2, ensure_ascii=False))
            return
        self._table(card)

    def _table(self, card):
        def pct(x):
            return "   -  " if x != x else f"{x * 100:5.1f}%"

        def line(name, f):
            c = f.counts
            return (
                f"{name[:38]:38} P {pct(f.precision.estimate)} [{pct(f.precision.low)},{pct(f.precision.high)}]"
                f"  R {pct(f.recall.estimate)}  F1 {pct(f.f1.estimate)}"
                f"  C{c['correct']:>4} P{c['partial']:>4} I{c['incorrect']:>4} H{c['hallucinated']:>4}"
                f" M{c['missed']:>4} / {c['extractions']} ext, {c['spans']} spans"
            )

        self.stdout.write(
            f"run {card.run_id} ({card.model}), {card.n_contracts} contracts, matcher {card.matcher}, "
            f"thresholds {card.thresholds.as_dict()}, bootstrap B={card.replicates} seed {card.seed}"
        )
        self.stdout.write(line("ALL", card.overall))
        for row in card.rows:
            self.stdout.write(line(row.category, row.figures))
