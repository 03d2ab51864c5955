from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from grading.dataset.selectors import dataset_get
from grading.scorecard.selftest import cuad_selftest
from scoring.cuad.matching import MATCHERS


class Command(BaseCommand):
    help = "Inject known errors of every kind into a synthetic run from CUAD gold; fail unless the grader flags each."

    def add_arguments(self, parser):
        parser.add_argument("--contracts", type=int, default=20, help="contracts the synthetic run covers")
        parser.add_argument("--per-kind", type=int, default=3, help="injections of each kind")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--matcher", choices=MATCHERS, default="hungarian")
        parser.add_argument("--dataset", default=None, metavar="ID",
                            help="a loaded dataset's id (a firm's gold set; default: the newest CUAD public one)")

    def handle(self, *args, contracts: int, per_kind: int, seed: int, matcher: str, **options):
        dataset = dataset_get(dataset_id=options.get("dataset"))
        if dataset is None:
            raise CommandError(f"no dataset {options['dataset']}" if options.get("dataset")
                               else "no CUAD loaded; run load_cuad PATH first")
        result = cuad_selftest(dataset=dataset, n_contracts=contracts, per_kind=per_kind, seed=seed, matcher=matcher)
        self.stdout.write(result.table())
        if not result.ok:
            raise CommandError("the grader missed at least one injected error (see the table)")
