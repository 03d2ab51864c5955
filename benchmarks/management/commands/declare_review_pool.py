"""Declare a review pool from a rerank run (idempotent), optionally assign it and import provisional labels.

  manage.py declare_review_pool --rerank-run 3                       # top-5 keyword ∪ top-5 reranked, 2 reviewers
  manage.py declare_review_pool --rerank-run 3 --k 10 --reviewers 3 --assign reviewer,reviewer2,reviewer3
  manage.py declare_review_pool --rerank-run 3 --explicit pairs.txt  # one "query_id doc_id" per line
  manage.py declare_review_pool --rerank-run 3 --import-provisional  # also the suite's nominated targets
  manage.py declare_review_pool --rerank-run 3 --with-run 4 --with-run 5  # depth-k pool of keyword order and 3 runs
"""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from benchmarks.labels import pools as review_pools
from benchmarks.rerank.models import RerankRun
from reviewapp.review.pools.selectors import pool_item_keys


class Command(BaseCommand):
    help = "Declare the review pool of a rerank run: the union of the top k of keyword and reranked order per query."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--rerank-run", type=int, required=True)
        parser.add_argument("--k", type=int, default=review_pools.DEFAULT_K)
        parser.add_argument("--reviewers", type=int, default=review_pools.DEFAULT_REVIEWERS,
                            help="reviewers per item (default 2)")
        parser.add_argument("--explicit", type=Path, help="file of 'query_id doc_id' lines instead of the top-k union")
        parser.add_argument("--assign", default="", help="comma-separated usernames to assign now (balanced)")
        parser.add_argument("--with-run", type=int, action="append", default=[],
                            help="another rerank run of the same retrieval run to pool with it (depth-k pooling "
                                 "of keyword order and every run); repeatable")
        parser.add_argument("--import-provisional", action="store_true",
                            help="import the suite's nominated targets as provisional section labels")

    def handle(self, *args, **o) -> None:
        run = RerankRun.objects.select_related("suite").filter(pk=o["rerank_run"]).first()
        if run is None:
            raise CommandError(f"no rerank run #{o['rerank_run']}")
        explicit = None
        if o["explicit"]:
            explicit = []
            for number, line in enumerate(o["explicit"].read_text(encoding="utf-8").splitlines(), start=1):
                fields = line.split()
                if not fields:
                    continue
                if len(fields) != 2:
                    raise CommandError(f"{o['explicit']}, line {number}: expected 'query_id doc_id', got {line!r}")
                explicit.append((fields[0], fields[1]))
        names = [n.strip() for n in o["assign"].split(",") if n.strip()]
        User = get_user_model()
        people = list(User.objects.filter(username__in=names))
        missing = sorted(set(names) - {u.get_username() for u in people})
        if missing:
            raise CommandError(f"--assign: no such user(s): {', '.join(missing)}")
        others = list(RerankRun.objects.filter(pk__in=o["with_run"]))
        unknown = sorted(set(o["with_run"]) - {r.pk for r in others})
        if unknown:
            raise CommandError(f"--with-run: no rerank run(s) {', '.join(f'#{pk}' for pk in unknown)}")
        if others and explicit is not None:
            raise CommandError("--explicit belongs to one run; leave out --with-run")
        try:
            if others:
                result = review_pools.review_pool_declare_runs(rerank_runs=[run, *others], k=o["k"],
                                                               reviewers_per_item=o["reviewers"], reviewers=people)
            else:
                result = review_pools.review_pool_declare(rerank_run=run, k=o["k"], explicit=explicit,
                                                          reviewers_per_item=o["reviewers"], reviewers=people)
            if o["import_provisional"]:
                source, created = review_pools.provisional_labels_import(suite=run.suite)
                self.stdout.write(f"provisional labels: {source.name!r} "
                                  f"{'imported' if created else 'already present'} ({source.labels} labels)")
        except review_pools.ReviewPoolError as error:
            raise CommandError(str(error)) from None
        pool = result.pool
        self.stdout.write(f"pool {pool.public_id} {'declared' if result.created else 'already declared'}: "
                          f"{len(pool_item_keys(pool=pool))} items, {pool.reviewers_per_item} reviewers per item, "
                          f"{result.assigned} assignments added, {result.reused} reused from the same reviewers' "
                          f"judgments of the same texts in other pools ({result.reused_complete} complete)")
        self.stdout.write(f"rule: {pool.declared_rule}")
