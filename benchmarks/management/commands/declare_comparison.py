"""Declare a comparison: systems planned together on a suite's held-out split, before any of them is scored there.

  manage.py declare_comparison --retrieval-run 3 --rerank-run 5 --rerank-run 6 --by alice   # keyword order too
  manage.py declare_comparison --retrieval-run 3 --rerank-run 5 --rerank-run 6 --no-keyword --by alice
  manage.py declare_comparison --retrieval-run 3 --keyword 7 --keyword 8 --rerank-run 5 --hybrid 5 --by alice
                                 # keyword orders of runs 3, 7 and 8 (bm25, rm3, qld...), rerank 5 and its hybrid
  manage.py declare_comparison --list                                                      # every declaration
  manage.py declare_comparison --cuad-run 3 --cuad-run 4 --by alice    # CUAD runs of one dataset (compare_cuad_runs)

Refused, writing nothing, for a system already scored on the held-out split (it was seen) or already declared.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from benchmarks.comparisons.selectors import comparison_list
from benchmarks.comparisons.services import ComparisonError, SystemChoice, comparison_declare
from benchmarks.reports.figures import PRIMARY_SPLIT
from benchmarks.rerank.models import RerankRun
from benchmarks.retrieval.models import RetrievalRun


class Command(BaseCommand):
    help = ("Declare systems of one suite (keyword orders of its retrieval runs, rerank runs, hybrids) one "
            "comparison on the held-out split, before any of them is scored there: the held-out ledger counts them "
            "as one look.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--retrieval-run", type=int)
        parser.add_argument("--rerank-run", type=int, action="append", default=[],
                            help="a rerank run (of any retrieval run of the suite); repeatable")
        parser.add_argument("--keyword", type=int, action="append", default=[],
                            help="the keyword order of another retrieval run of the suite; repeatable")
        parser.add_argument("--hybrid", type=int, action="append", default=[],
                            help="the hybrid (RRF with keyword order) of this rerank run; repeatable")
        parser.add_argument("--no-keyword", action="store_true",
                            help="leave out the retrieval run's keyword order (declared by default)")
        parser.add_argument("--split", default=PRIMARY_SPLIT)
        parser.add_argument("--by", default="", help="username of the admin declaring it (recorded)")
        parser.add_argument("--list", action="store_true", help="print every declared comparison and stop")
        parser.add_argument("--cuad-run", type=int, action="append", default=[],
                            help="a CUAD extraction run (the CUAD job declares it: compare_cuad_runs --declare)")
        parser.add_argument("--cuad-sample", type=int, help="with --cuad-run: the sample (default: the newest)")

    def handle(self, *args: Any, **o: Any) -> None:
        if o["list"]:
            for d in comparison_list():
                self.stdout.write(f"#{d.pk} {d.suite} {d.split}: {d.sentence} (via {d.declared_via}, sha256 "
                                  f"{d.sha256}): {'; '.join(d.labels)}")
            return
        if o["cuad_run"]:
            # The CUAD job declares its own comparisons; called by name, so the statute job imports nothing of it.
            args = ["--declare", *(a for pk in o["cuad_run"] for a in ("--run-id", str(pk))), "--by", o["by"]]
            args += ["--sample", str(o["cuad_sample"])] if o["cuad_sample"] is not None else []
            call_command("compare_cuad_runs", *args, stdout=self.stdout._out)
            return
        if o["retrieval_run"] is None and not (o["keyword"] or o["rerank_run"] or o["hybrid"]):
            raise CommandError("--retrieval-run (or --keyword, --rerank-run, --hybrid) is required (or --list)")
        if not o["by"]:
            raise CommandError("--by: name the admin declaring the comparison (it is recorded)")
        user = get_user_model().objects.filter(username=o["by"]).first()
        if user is None:
            raise CommandError(f"--by: no user {o['by']!r}")
        named = [*([o["retrieval_run"]] if o["retrieval_run"] is not None else []), *o["keyword"]]
        runs = RetrievalRun.objects.select_related("suite").in_bulk(named)
        missing = [pk for pk in named if pk not in runs]
        if missing:
            shown = ", ".join(f"#{pk}" for pk in missing)
            raise CommandError(f"--retrieval-run/--keyword: no retrieval run(s) {shown}")
        wanted = [pk for pk in named if not (o["no_keyword"] and pk == o["retrieval_run"])]
        reranks = RerankRun.objects.select_related("retrieval_run__suite").in_bulk([*o["rerank_run"], *o["hybrid"]])
        for flag, pks in (("--rerank-run", o["rerank_run"]), ("--hybrid", o["hybrid"])):
            missing = [pk for pk in pks if pk not in reranks]
            if missing:
                raise CommandError(f"{flag}: no rerank run(s) {', '.join(f'#{pk}' for pk in missing)}")
        systems: list[SystemChoice] = [(runs[pk], None) for pk in dict.fromkeys(wanted)]
        systems += [(reranks[pk].retrieval_run, reranks[pk]) for pk in o["rerank_run"]]
        systems += [(reranks[pk].retrieval_run, reranks[pk], True) for pk in o["hybrid"]]
        try:
            declared = comparison_declare(systems=systems, user=user, via="command",
                                          split=o["split"])
        except ComparisonError as error:
            raise CommandError(str(error)) from None
        declaration = next(d for d in comparison_list(suite_id=declared.suite_id) if d.pk == declared.pk)
        self.stdout.write(f"comparison #{declaration.pk} declared on {declaration.suite} {declaration.split}: "
                          f"{declaration.sentence}")
        for label in declaration.labels:
            self.stdout.write(f"  {label}")
        self.stdout.write(f"sha256 {declaration.sha256}")
        if declaration.base_run_id is not None:
            self.stdout.write("summary: " + reverse("benchmarks:summary", args=[declaration.base_run_id])
                              + f"?comparison={declaration.pk}")
