"""Hit@1/5/10 and RR of TREC run files against a TREC qrels file, with family bootstrap intervals.

Thin: parse the files, call scoring.ir.trec_evaluation, print. The
conventions (which queries count, run order, families file format) are in that
module's docstring and are printed with the results.

With ``--retrieval-run`` (and ``--rerank-run``), the runs the files were exported from, figures over that
suite's held-out queries are appended to the held-out exposure ledger like the report's; ``--json`` then carries
the same ``heldout_exposure`` entry as export_report's report.json (null when no held-out figure was computed),
and a configuration other than the first scored on the split is warned about on stderr.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from django.core.management.base import BaseCommand, CommandError

from benchmarks.reports.models import HeldoutExposure
from benchmarks.rerank.models import RerankRun
from benchmarks.retrieval.models import RetrievalRun
from scoring.ir.family_bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED
from scoring.ir.ranking import TrecFormatError, read_qrels, read_run
from scoring.ir.trec_evaluation import METRICS, TrecEvaluation, evaluate_trec_runs, read_families
from scoring.stats.multiple import MULTIPLE_COMPARISON_METHOD

if TYPE_CHECKING:
    from benchmarks.reports.exposure import Exposure

RUN_ORDER_NOTE = "runs ordered by score descending, ties by docid descending (trec_eval); rank column ignored"
POPULATION_NOTE = "mean over every qrels query; a query the run does not answer, or with no relevant document, scores 0"


def _interval(bootstrap) -> dict[str, float]:
    return {"estimate": bootstrap.estimate, "low": bootstrap.low, "high": bootstrap.high, "level": bootstrap.level}


def _run_name(path: str, earlier: list[str]) -> str:
    # The same file given twice still needs two keys in the JSON.
    repeats = earlier.count(path)
    return path if repeats == 0 else f"{path} (#{repeats + 1})"


def _families_note(evaluation: TrecEvaluation, families_path: str | None) -> str:
    if families_path is None:
        return f"no families file: each of the {len(evaluation.queries)} queries is its own family"
    return f"{evaluation.families} families from {families_path}"


def _finite(x: float) -> float | None:
    return None if math.isnan(x) else x


def pairs_json(evaluation: TrecEvaluation) -> list[dict]:
    """Every pair of runs (a - b, a the later run), per metric: difference, interval, p and Holm-adjusted p."""
    out: dict[tuple[str, str], dict] = {}
    for pair in evaluation.pairs:
        entry = out.setdefault((pair.a, pair.b), {"a": pair.a, "b": pair.b, "metrics": {}})
        difference = pair.bootstrap.difference
        entry["metrics"][pair.metric] = {
            "diff": difference.estimate, "ci": [difference.low, difference.high], "level": difference.level,
            "p_value": _finite(pair.p_value), "p_adjusted": _finite(pair.p_adjusted),
        }
    return list(out.values())


def as_json(evaluation: TrecEvaluation, families_path: str | None) -> dict:
    return {
        "runs": {
            run.name: {
                "per_query": run.per_query,
                "mean": {metric: run.intervals[metric].interval.estimate for metric in METRICS},
                "ci": {metric: _interval(run.intervals[metric].interval) for metric in METRICS},
                "queries_not_in_run": run.unanswered,
                "run_queries_not_in_qrels": run.ignored,
            }
            for run in evaluation.runs
        },
        "differences": [
            {
                "run": name,
                "baseline": baseline,
                "ci": {metric: _interval(result[metric].difference) for metric in METRICS},
            }
            for name, baseline, result in evaluation.differences
        ],
        "pairs": pairs_json(evaluation),
        "multiple_comparisons": MULTIPLE_COMPARISON_METHOD + "; Holm's family is the pairs of one metric",
        "queries": len(evaluation.queries),
        "queries_without_relevant_documents": evaluation.queries_without_targets,
        "families": _families_note(evaluation, families_path),
        "replicates": evaluation.replicates,
        "seed": evaluation.seed,
        "interval": "percentile 95% bootstrap over query families",
        "notes": [POPULATION_NOTE, RUN_ORDER_NOTE],
    }


class Command(BaseCommand):
    help = (
        "Hit@1, Hit@5, Hit@10 and RR of TREC runs ('qid Q0 docid rank score tag') against TREC qrels "
        "('qid 0 docid rel', relevant = rel >= 1), with percentile bootstrap intervals over query families. "
        "Families file: one 'qid family' per line; without it each query is its own family."
    )
    # No system checks before it runs: they import the whole URL config (every view, the API schema tooling),
    # 0.6 s of CPU and 32 MiB in a command that reads two files. `manage.py check` and CI run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--qrels", required=True, help="TREC qrels file: qid 0 docid rel")
        parser.add_argument("--run", action="append", required=True, help="TREC run file (repeat for several runs)")
        parser.add_argument("--families", help="file of 'qid family' lines; default: each query its own family")
        parser.add_argument("--replicates", type=int, default=DEFAULT_REPLICATES)
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
        parser.add_argument("--retrieval-run", type=int,
                            help="the retrieval run the files were exported from: figures over its suite's held-out "
                                 "queries are appended to the held-out exposure ledger (and the entry printed)")
        parser.add_argument("--rerank-run", type=int, help="the rerank run the files were exported from (with "
                                                           "--retrieval-run)")

    def handle(self, *args, **options):
        if options["replicates"] < 1:
            raise CommandError("--replicates must be at least 1")
        try:
            qrels = read_qrels(options["qrels"])
            # A generator: each run file is read, scored and released before the next one is read.
            runs = ((_run_name(path, options["run"][:i]), read_run(path)) for i, path in enumerate(options["run"]))
            families = read_families(options["families"]) if options["families"] else None
            evaluation = evaluate_trec_runs(
                qrels, runs, families=families, replicates=options["replicates"], seed=options["seed"]
            )
        except TrecFormatError as exc:
            raise CommandError(str(exc)) from exc
        except OSError as exc:
            raise CommandError(f"{exc.filename}: {exc.strerror}") from exc
        except ValueError as exc:
            raise CommandError(str(exc)) from exc

        exposure = self._exposure(evaluation, retrieval_run=options["retrieval_run"], rerank_run=options["rerank_run"])
        if exposure is not None and not exposure.fresh:
            self.stderr.write(f"warning: {exposure.warning}")
        if options["json"]:
            out = as_json(evaluation, options["families"])
            # The same ledger entry export_report's report.json carries; None when no held-out figure was computed.
            out["heldout_exposure"] = exposure.as_json() if exposure is not None else None
            self.stdout.write(json.dumps(out, indent=2, sort_keys=True))
            return
        self._print_table(evaluation, options["families"])
        if exposure is not None:
            self.stdout.write("")
            self.stdout.write(f"held-out split scored {exposure.times} times with {exposure.configurations} distinct "
                              f"configurations; this one first at {exposure.first_scored_at}")

    def _exposure(self, evaluation: TrecEvaluation, *, retrieval_run: int | None,
                  rerank_run: int | None) -> Exposure | None:
        if retrieval_run is None:
            if rerank_run is not None:
                raise CommandError("--rerank-run needs --retrieval-run (the run it reranks)")
            return None
        run = RetrievalRun.objects.select_related("suite").filter(pk=retrieval_run).first()
        if run is None:
            raise CommandError(f"--retrieval-run: no retrieval run #{retrieval_run}")
        rerank = None
        if rerank_run is not None:
            rerank = RerankRun.objects.select_related("ledger").filter(pk=rerank_run).first()
            if rerank is None:
                raise CommandError(f"--rerank-run: no rerank run #{rerank_run}")
        # Imported here: the report modules behind it are needed only when an exposure is recorded.
        from benchmarks.reports.exposure import ExposureRunError, exposure_record_runs

        try:
            return exposure_record_runs(retrieval_run=run, rerank_run=rerank, qids=evaluation.queries,
                                        purpose=HeldoutExposure.Purpose.COMMAND)
        except ExposureRunError as exc:
            raise CommandError(str(exc)) from None

    def _print_table(self, evaluation: TrecEvaluation, families_path: str | None) -> None:
        write = self.stdout.write
        write(f"{len(evaluation.queries)} qrels queries; {_families_note(evaluation, families_path)}")
        write(f"percentile 95% intervals, {evaluation.replicates} replicates, seed {evaluation.seed}")
        write(f"note: {POPULATION_NOTE}")
        write(f"note: {RUN_ORDER_NOTE}")
        if evaluation.queries_without_targets:
            write(f"note: {len(evaluation.queries_without_targets)} qrels queries have no relevant document")
        for run in evaluation.runs:
            write("")
            write(f"run {run.name}")
            if run.unanswered:
                write(f"  {len(run.unanswered)} qrels queries not in this run (scored 0)")
            if run.ignored:
                write(f"  {len(run.ignored)} run queries not in the qrels (ignored)")
            for metric in METRICS:
                iv = run.intervals[metric].interval
                write(f"  {metric:<7} {iv.estimate:.4f}  [{iv.low:.4f}, {iv.high:.4f}]")
        for name, baseline, result in evaluation.differences:
            write("")
            write(f"paired difference {name} - {baseline}")
            for metric in METRICS:
                iv = result[metric].difference
                write(f"  {metric:<7} {iv.estimate:+.4f}  [{iv.low:+.4f}, {iv.high:+.4f}]")
        if evaluation.pairs:
            write("")
            write(f"every pair of runs: {MULTIPLE_COMPARISON_METHOD}; Holm's family is the pairs of one metric")
            for pair in evaluation.pairs:
                iv = pair.bootstrap.difference
                write(f"  {pair.metric:<7} {pair.a} - {pair.b}  {iv.estimate:+.4f}  [{iv.low:+.4f}, {iv.high:+.4f}]"
                      f"  p={pair.p_value:.4f}  Holm p={pair.p_adjusted:.4f}")
