"""Write a run's TREC files (and, with a rerank run, the report's exports) to a folder.

  manage.py export_report --retrieval-run 3 --out out/          # keyword.trec, qrels.trec
  manage.py export_report --retrieval-run 3 --rerank-run 7 --out out/
                                            # + reranked.trec, report.json, report.csv (as the report page)

keyword.trec has every query of the suite, controls included, in the stored keyword order
(scores = list length - rank + 1, so trec_eval reads that order; ``--engine-scores`` writes the
engine's scores instead). qrels.trec lists each nominated target in every version of its section.
report.json, report.csv and reranked.trec are the report page's exports for that rerank run with
its default parameters (secondary baseline "auto", the default bootstrap replicates and seed).
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404

from benchmarks.reports.exports.report import report_as_json, report_csv, report_trec_run
from benchmarks.reports.exposure import exposure_record
from benchmarks.reports.models import HeldoutExposure
from benchmarks.reports.params import ReportParameterError
from benchmarks.reports.selectors import report_build, report_request_parse
from benchmarks.rerank.models import RerankRun
from benchmarks.retrieval.models import RetrievalRun, RunStatus
from benchmarks.retrieval.selectors import retrieval_run_qrels, retrieval_run_trec


class Command(BaseCommand):
    help = "Write keyword.trec and qrels.trec of a retrieval run (and a rerank run's report exports) to --out."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--retrieval-run", type=int, required=True)
        parser.add_argument("--rerank-run", type=int, help="also write reranked.trec, report.json, report.csv")
        parser.add_argument("--out", type=Path, required=True, help="folder (created if missing)")
        parser.add_argument("--engine-scores", action="store_true",
                            help="keyword.trec with the engine's scores instead of rank-derived ones")

    def handle(self, *args, retrieval_run: int, rerank_run: int | None, out: Path, engine_scores: bool,
               **options) -> None:
        run = RetrievalRun.objects.select_related("suite").filter(pk=retrieval_run).first()
        if run is None:
            raise CommandError(f"no retrieval run #{retrieval_run}")
        if run.status != RunStatus.DONE:
            raise CommandError(f"retrieval run #{run.pk} is {run.status}; only a finished run can be exported")
        files: dict[str, str] = {
            "keyword.trec": retrieval_run_trec(run=run, scores="engine" if engine_scores else "rank"),
            "qrels.trec": retrieval_run_qrels(run=run),
        }
        if rerank_run is not None:
            files.update(self._report_files(run=run, rerank_run=rerank_run))
        out.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (out / name).write_text(text, encoding="utf-8")
            self.stdout.write(f"wrote {out / name} ({len(text.encode('utf-8'))} bytes)")

    def _report_files(self, *, run: RetrievalRun, rerank_run: int) -> dict[str, str]:
        rerank = RerankRun.objects.filter(pk=rerank_run).first()
        if rerank is None:
            raise CommandError(f"no rerank run #{rerank_run}")
        if rerank.retrieval_run_id != run.pk:
            raise CommandError(f"rerank run #{rerank.pk} reranks retrieval run #{rerank.retrieval_run_id}, "
                               f"not #{run.pk}")
        try:
            parsed = report_request_parse(source="rerank", pk=rerank.pk, params={})
            report = report_build(run=parsed.run, rerank=parsed.rerank, secondary=parsed.secondary,
                                  replicates=parsed.replicates, seed=parsed.seed)
        except (ReportParameterError, Http404) as exc:
            raise CommandError(f"cannot build the report of rerank run #{rerank.pk}: {exc}") from None
        report = exposure_record(report, purpose=HeldoutExposure.Purpose.COMMAND)
        if report.exposure is not None and not report.exposure.fresh:
            self.stderr.write(f"warning: {report.exposure.warning}")
        # The same JSON as the page's report.json (JsonResponse: DjangoJSONEncoder, ensure_ascii off, indent 1).
        as_json = json.dumps(report_as_json(report), cls=DjangoJSONEncoder, ensure_ascii=False, indent=1)
        return {"reranked.trec": report_trec_run(report, system="reranked"), "report.json": as_json,
                "report.csv": report_csv(report)}
