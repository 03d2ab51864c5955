from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from grading.dataset.cuad_file import CuadFileError
from grading.dataset.models import CuadDataset
from grading.dataset.selectors import (
    ScopeError,
    dataset_contract_ids,
    dataset_get,
    manifest_scope,
    sample_contract_ids,
    sample_default,
)
from grading.dataset.services import CuadLoadError, cuad_load, sample_create
from grading.runs.run_format import RunFormatError
from grading.runs.services import extraction_run_import
from grading.scorecard.selectors import PAPER_UNAVAILABLE, run_scorecard
from scoring.cuad.grading import Thresholds
from scoring.cuad.matching import MATCHERS


class Command(BaseCommand):
    help = (
        "Grade an extraction run (JSON or JSON Lines) against CUAD: two axes, optimal matching, contract bootstrap. "
        "With --cuad, first load that CUAD file and draw the seeded sample, in this one process (what load_cuad "
        "and sample_cuad do; both idempotent)."
    )

    # No system checks before it runs: they import the whole URL config (every view, the API schema tooling),
    # ~0.5 s of CPU in a command that grades one run file. `manage.py check` and CI run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--run", required=True, help="run file: JSON or JSON Lines")
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument("--manifest", default=None, help="sample manifest; gold = its contracts (default: all)")
        scope.add_argument("--split", default=None, metavar="PATH",
                           help="a split file: contract titles, one per line (e.g. CUAD's test split); gold = those")
        scope.add_argument("--cuad", default=None, metavar="PATH",
                           help="CUAD_v1.json (or the zip): load it if new, draw the seeded sample, grade on it")
        parser.add_argument("--dataset", default=None, metavar="ID",
                            help="a loaded dataset's id (a firm's gold set; default: the newest CUAD public one)")
        parser.add_argument("--n", type=int, default=100, help="with --cuad: contracts in the sample")
        parser.add_argument("--min-per-type", type=int, default=30, help="with --cuad: the sampler's target")
        parser.add_argument("--sample-seed", type=int, default=42, help="with --cuad: the sampler's seed")
        parser.add_argument("--manifest-out", default=None, metavar="PATH",
                            help="with --cuad: also write the sample's manifest here")
        parser.add_argument("--correct", type=float, default=0.70)
        parser.add_argument("--partial", type=float, default=0.40)
        parser.add_argument("--grounding", type=float, default=0.80)
        parser.add_argument("--matcher", choices=MATCHERS, default="hungarian")
        parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
        parser.add_argument("--replicates", type=int, default=1000, help="bootstrap replicates (B)")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args, **o):
        self._options = o
        if o["dataset"] and (o["cuad"] or o["manifest"]):
            raise CommandError("--dataset goes without --cuad and --manifest (they name their own dataset)")
        try:
            thresholds = Thresholds(correct=o["correct"], partial=o["partial"], grounding=o["grounding"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if o["manifest_out"] and not o["cuad"]:
            raise CommandError("--manifest-out goes with --cuad (sample_cuad --out writes a manifest otherwise)")
        run_path = Path(o["run"])
        try:
            raw = run_path.read_bytes()
        except OSError as exc:
            raise CommandError(f"{run_path}: {exc.strerror}") from exc
        contract_ids = None
        if o["cuad"]:
            dataset, contract_ids = self._load_and_sample(o)
        elif o["split"]:
            dataset, contract_ids = self._split(Path(o["split"]))
        elif o["manifest"]:
            try:
                dataset, contract_ids = manifest_scope(manifest=Path(o["manifest"]).read_bytes())
            except (OSError, ScopeError) as exc:
                raise CommandError(str(exc)) from exc
        else:
            dataset = self._dataset(o)
            sample = sample_default(dataset=dataset) if dataset.is_gold else None
            if sample is not None:  # a gold set's sample is all its contracts
                contract_ids = sample_contract_ids(sample=sample)
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

    def _dataset(self, o: dict) -> CuadDataset:
        dataset = dataset_get(dataset_id=o.get("dataset"))
        if dataset is None:
            raise CommandError(f"no dataset {o['dataset']}" if o.get("dataset")
                               else "no CUAD loaded; run load_cuad PATH first")
        return dataset

    def _split(self, path: Path) -> tuple:
        """The loaded dataset and the ids of the contracts a split file lists (one title a line)."""
        dataset = self._dataset(self._options)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{path}: {exc}") from exc
        # A title is the whole line, verbatim: four CUAD titles end with a space ("Sonos, Inc. - Manufacturing
        # Agreement "), and a title stripped of it names no contract.
        titles = [line for line in lines if line.strip() and not line.startswith("#")]
        ids = dataset_contract_ids(dataset=dataset, titles=titles)
        unknown = [title for title in titles if title not in ids]
        if unknown or not titles:
            raise CommandError(f"{path}: {len(unknown)} unknown contract title(s), e.g. {unknown[:3]} (titles are "
                               "matched verbatim, spaces included)" if unknown else f"{path}: lists no contract")
        return dataset, [ids[title] for title in dict.fromkeys(titles)]

    def _load_and_sample(self, o: dict) -> tuple:
        """``load_cuad PATH`` then ``sample_cuad``, in this process: the dataset and the sample's contract ids."""
        try:
            loaded = cuad_load(path=o["cuad"])
            sample, _ = sample_create(dataset=loaded.dataset, n=o["n"], min_per_type=o["min_per_type"],
                                      seed=o["sample_seed"])
        except (CuadFileError, CuadLoadError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        if o["manifest_out"]:
            Path(o["manifest_out"]).write_bytes(sample.manifest.encode("utf-8"))
        self.stderr.write(
            f"{'loaded' if loaded.created else 'already loaded'}: {loaded.dataset.source_name} "
            f"sha256 {loaded.dataset.sha256}; sample of {sample.n} (seed {sample.seed}, at least "
            f"{sample.min_per_type} per type) sha256 {sample.manifest_sha256}"
        )
        return loaded.dataset, sample_contract_ids(sample=sample)

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
        if card.paper is None:
            self.stdout.write(f"CUAD evaluate.py metric: {PAPER_UNAVAILABLE}")
            return
        self.stdout.write("CUAD evaluate.py metric (AUPR, precision at 80% and 90% recall; 95% contract bootstrap):")
        for name, f in [("ALL", card.paper.overall), *card.paper.per_category.items()]:
            self.stdout.write(
                f"{name[:38]:38} AUPR {pct(f.aupr.estimate)} [{pct(f.aupr.low)},{pct(f.aupr.high)}]"
                f"  P@80%R {pct(f.precision_at_80_recall.estimate)}  P@90%R {pct(f.precision_at_90_recall.estimate)}"
            )
