"""Rank several extraction runs on a CUAD sample: per-run figures, every pairwise F1 difference, Holm-adjusted p.

Or declare stored runs one comparison (its summary ranks every one of them):

  manage.py compare_cuad_runs --declare --run-id 3 --run-id 4 --run-id 5 --by alice [--sample 2]
  manage.py compare_cuad_runs --list-declared
"""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from grading.comparisons.services import CuadComparisonError, cuad_comparison_declare, cuad_comparison_list
from grading.dataset.models import Sample
from grading.dataset.selectors import ScopeError, manifest_scope
from grading.runs.models import ExtractionRun
from grading.runs.run_format import RunFormatError
from grading.runs.selectors import run_pair_table, run_scope_ids
from grading.runs.services import extraction_run_import
from grading.scorecard.exports import board_meta_json, pair_json, standing_json
from grading.scorecard.leaderboard import board_grade, board_verdict
from scoring.cuad.grading import Thresholds
from scoring.cuad.matching import MATCHERS
from scoring.stats.units import p_value_text


class Command(BaseCommand):
    help = (
        "Compare two or more extraction runs on a sample manifest: P/R/F1 and hallucination rate per run, every "
        "pairwise F1 difference with a paired contract-bootstrap interval (the same draws for every pair) and "
        "Holm-adjusted p-values."
    )

    def add_arguments(self, parser):
        parser.add_argument("--run", action="append", default=[], metavar="FILE",
                            help="run file (JSON or JSON Lines); repeat for each run, at least two")
        parser.add_argument("--manifest", help="sample manifest; the runs are graded on its contracts")
        parser.add_argument("--declare", action="store_true",
                            help="declare the stored runs --run-id one comparison (recorded, append-only)")
        parser.add_argument("--run-id", type=int, action="append", default=[], help="a stored run; repeatable")
        parser.add_argument("--sample", type=int, help="with --declare: the sample (default: the dataset's newest)")
        parser.add_argument("--by", default="", help="with --declare: username of the admin declaring it")
        parser.add_argument("--list-declared", action="store_true", help="print every declared comparison")
        parser.add_argument("--correct", type=float, default=0.70)
        parser.add_argument("--partial", type=float, default=0.40)
        parser.add_argument("--grounding", type=float, default=0.80)
        parser.add_argument("--matcher", choices=MATCHERS, default="hungarian")
        parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
        parser.add_argument("--replicates", type=int, default=1000, help="bootstrap replicates B (default 1000)")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args, **o):
        if o["declare"] or o["list_declared"]:
            self._declared(o)
            return
        if not o["manifest"]:
            raise CommandError("--manifest: required to compare run files (or --declare stored runs)")
        paths = [Path(p) for p in o["run"]]
        if len(paths) < 2:
            raise CommandError(f"--run: a comparison needs at least two run files (got {len(paths)})")
        if o["replicates"] < 1:
            raise CommandError(f"--replicates: must be at least 1 (got {o['replicates']})")
        try:
            thresholds = Thresholds(correct=o["correct"], partial=o["partial"], grounding=o["grounding"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        manifest_path = Path(o["manifest"])
        try:
            raw_manifest = manifest_path.read_bytes()
        except OSError as exc:
            raise CommandError(f"--manifest {manifest_path}: {exc.strerror}") from exc
        try:
            dataset, manifest_ids = manifest_scope(manifest=raw_manifest)
        except ScopeError as exc:
            raise CommandError(f"--manifest {manifest_path}: {exc}") from exc

        runs = []
        for path in paths:
            try:
                raw = path.read_bytes()
            except OSError as exc:
                raise CommandError(f"--run {path}: {exc.strerror}") from exc
            try:
                run, _ = extraction_run_import(dataset=dataset, raw=raw, source_name=path.name,
                                               default_model=path.stem)
            except RunFormatError as exc:
                raise CommandError(f"--run {path}: {exc}") from exc
            runs.append(run)

        # Each run is graded on the manifest's contracts it attempted; the comparison on those all attempted.
        declared = [run_scope_ids(run=run) for run in runs]
        common = [pk for pk in manifest_ids if all(d is None or pk in d for d in declared)]
        if not common:
            covers = "; ".join(
                f"{p} declares {len(d)} contract(s), {sum(pk in d for pk in manifest_ids)} in the manifest"
                for p, d in zip(paths, declared, strict=True) if d is not None
            )
            raise CommandError(f"--run: the runs share no contract of the manifest ({covers})")
        notice = ""
        own = [sum(1 for pk in manifest_ids if d is None or pk in d) for d in declared]
        if any(n != len(common) for n in own):
            notice = (
                f"the runs attempted different contracts of the manifest ({', '.join(map(str, own))}); they are "
                f"compared on the {len(common)} they all attempted"
            )
            self.stderr.write(f"note: {notice}")
        pair_tables = [run_pair_table(run=run, contract_ids=common, matcher=o["matcher"]) for run in runs]
        for path, run, pairs in zip(paths, runs, pair_tables, strict=True):
            outside = run.n_extractions - len(pairs.extraction_ids)
            if outside:
                self.stderr.write(f"note: {path}: {outside} extraction(s) outside the compared contracts, not graded")

        board = board_grade([p.table for p in pair_tables], thresholds, replicates=o["replicates"], seed=o["seed"])
        labels = _labels(runs, paths)
        result = {
            "verdict": board_verdict(board, names=labels).as_json(),
            "runs": [
                {"rank": rank, "model": runs[i].model, "file": str(paths[i]), **standing_json(board.standings[i])}
                for rank, i in enumerate(board.order, start=1)
            ],
            "pairs": [
                {"a": labels[d.a], "b": labels[d.b], "a_file": str(paths[d.a]), "b_file": str(paths[d.b]),
                 **pair_json(d)}
                for d in board.pairs
            ],
            **board_meta_json(board),
            "matcher": o["matcher"],
            "notice": notice,
        }
        if o["json"]:
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
            return
        self._table(result)

    def _table(self, result: dict) -> None:
        def pct(x):
            return "   -  " if x is None else f"{x * 100:5.1f}%"

        def pp(x):
            return "   -   " if x is None else f"{x * 100:+6.1f}"

        def p3(x):
            return p_value_text(x, replicates=result["bootstrap"]["replicates"])

        def ci_text(low, high, fmt, note):
            text = f" [{fmt(low)},{fmt(high)}]" if low is not None else ""
            return f"{text} ({note})" if note else text

        b = result["bootstrap"]
        self.stdout.write(
            f"{result['contracts']} contracts, matcher {result['matcher']}, thresholds {result['thresholds']}, "
            f"paired contract bootstrap B={b['replicates']} seed {b['seed']}"
        )
        self.stdout.write(f"verdict: {result['verdict']['sentence']}")
        if result["units"]["note"]:
            self.stdout.write(f"note: {result['units']['note']}")
        for r in result["runs"]:
            ci = r["ci"]["f1"]
            h = r["hallucination_rate"]
            self.stdout.write(
                f"{r['rank']:>2}. {r['model'][:40]:40} P {pct(r['precision'])}  R {pct(r['recall'])}  "
                f"F1 {pct(r['f1'])}{ci_text(ci[0], ci[1], pct, r['interval_note'])}  hallucinated {pct(h['estimate'])}"
            )
        for p in result["pairs"]:
            self.stdout.write(
                f"{p['a'][:30]:30} - {p['b'][:30]:30} F1 {pp(p['f1_diff'])} pp "
                f"{ci_text(p['ci'][0], p['ci'][1], pp, p['note'])}  p {p3(p['p_value'])}  Holm p {p3(p['p_adjusted'])}"
            )
        self.stdout.write(f"multiple comparisons: {result['method']}")

    def _declared(self, o) -> None:

        if o["list_declared"]:
            for d in cuad_comparison_list():
                self.stdout.write(f"#{d.pk} {d.sentence} (via {d.declared_via}, sha256 {d.sha256}): "
                                  f"{'; '.join(d.labels)}; summary {d.summary_url}")
            return
        user = get_user_model().objects.filter(username=o["by"]).first() if o["by"] else None
        if user is None:
            raise CommandError(f"--by: no user {o['by']!r}" if o["by"] else "--by: name the admin declaring it")
        runs = ExtractionRun.objects.select_related("dataset").in_bulk(o["run_id"])
        missing = [pk for pk in o["run_id"] if pk not in runs]
        if missing:
            raise CommandError(f"--run-id: no run(s) {', '.join(f'#{pk}' for pk in missing)}")
        sample = None
        if o["sample"] is not None:
            sample = Sample.objects.filter(pk=o["sample"]).first()
            if sample is None:
                raise CommandError(f"--sample: no sample #{o['sample']}")
        try:
            declared = cuad_comparison_declare(runs=[runs[pk] for pk in o["run_id"]], user=user, via="command",
                                               sample=sample)
        except CuadComparisonError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"CUAD comparison #{declared.pk} declared: {declared.sentence}")
        for label in declared.labels:
            self.stdout.write(f"  {label}")
        self.stdout.write(f"sha256 {declared.sha256}")
        self.stdout.write(f"summary: {declared.summary_url}")


def _labels(runs, paths) -> list[str]:
    """Each run's model name; the file name is added where two runs share a model name."""
    models = [run.model for run in runs]
    return [m if models.count(m) == 1 else f"{m} ({p.name})" for m, p in zip(models, paths, strict=True)]
