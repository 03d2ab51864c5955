"""Ranking measures (ir_measures names, trec_eval values) of TREC run files against a TREC qrels file.

Thin: parse the files, call scoring.ir.trec_evaluation, print. The
conventions (which queries count, run order, families file format) are in that
module's docstring and are printed with the results.

With ``--retrieval-run`` (and ``--rerank-run``), the runs the files were exported from, figures over that
suite's held-out queries are appended to the held-out exposure ledger like the report's; ``--json`` then carries
the same ``heldout_exposure`` entry as export_report's report.json (null when no held-out figure was computed),
and a configuration other than the first scored on the split is warned about on stderr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.management.base import BaseCommand, CommandError

from benchmarks.reports.models import HeldoutExposure
from benchmarks.rerank.models import RerankRun
from benchmarks.retrieval.models import RetrievalRun
from scoring.ir.trec_cli import HELP, MetricsError, add_file_arguments, as_json, evaluate_files, json_text, write_table
from scoring.ir.trec_evaluation import TrecEvaluation

if TYPE_CHECKING:
    from benchmarks.reports.exposure import Exposure


class Command(BaseCommand):
    help = HELP
    # No system checks before it runs: they import the whole URL config (every view, the API schema tooling),
    # 0.6 s of CPU and 32 MiB in a command that reads two files. `manage.py check` and CI run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        add_file_arguments(parser)
        parser.add_argument("--retrieval-run", type=int,
                            help="the retrieval run the files were exported from: figures over its suite's held-out "
                                 "queries are appended to the held-out exposure ledger (and the entry printed)")
        parser.add_argument("--rerank-run", type=int, help="the rerank run the files were exported from (with "
                                                           "--retrieval-run)")

    def handle(self, *args, **options):
        try:
            evaluation = evaluate_files(options["qrels"], options["run"], families_path=options["families"],
                                        replicates=options["replicates"], seed=options["seed"],
                                        measures=options["measure"], rel_level=options["rel_level"])
        except MetricsError as exc:
            raise CommandError(str(exc)) from exc

        exposure = self._exposure(evaluation, retrieval_run=options["retrieval_run"], rerank_run=options["rerank_run"])
        if exposure is not None and not exposure.fresh:
            self.stderr.write(f"warning: {exposure.warning}")
        if options["json"]:
            out = as_json(evaluation, options["families"])
            # The same ledger entry export_report's report.json carries; None when no held-out figure was computed.
            out["heldout_exposure"] = exposure.as_json() if exposure is not None else None
            self.stdout.write(json_text(out))
            return
        write_table(evaluation, options["families"], self.stdout.write)
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
        # local import: the report modules behind it are needed only when an exposure is recorded, and the
        # metrics process stays free of them (tests/test_cold_start.py)
        from benchmarks.reports.exposure import ExposureRunError, exposure_record_runs

        try:
            return exposure_record_runs(retrieval_run=run, rerank_run=rerank, qids=evaluation.queries,
                                        purpose=HeldoutExposure.Purpose.COMMAND)
        except ExposureRunError as exc:
            raise CommandError(str(exc)) from None
