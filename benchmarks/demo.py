"""Demo data for the statute benchmark: real NRS, USC and HRS, the example suite, its retrieval runs.

Three offline statute systems beside keyword order (BM25): the MiniLM rerank (``labels/demo.py``), its hybrid
with BM25 by reciprocal rank fusion (a leaderboard system computed from those two runs, nothing stored), and
the first-stage configurations rm3-v1 and qld-v1, with keyword-v1 and heading-v1, compared on the suite's
known targets on the same leaderboard. When ``make demo`` started the bundled model server, the real model
(SmolLM2-135M on llama.cpp, ``rerank/demo.py``) reranks too, within a small budget, as a fourth system.
"""

from __future__ import annotations

import pathlib
import time

from django.contrib.auth import get_user_model

from benchmarks.comparisons.services import ComparisonError, comparison_declare
from benchmarks.corpus.services import statutes_import
from benchmarks.labels.demo import load_demo_review
from benchmarks.rerank.demo import load_model_rerank_demo
from benchmarks.rerank.models import RerankRun, RerankStatus
from benchmarks.retrieval.engines import (
    CONFIGURATIONS,
    DEFAULT_CONFIGURATION,
    QLD_CONFIGURATION,
    RM3_CONFIGURATION,
    engine_for_connection,
)
from benchmarks.retrieval.models import RetrievalRun, RunStatus
from benchmarks.retrieval.services import retrieval_run_create
from benchmarks.retrieval.suite_index import ENGINE as BM25_ENGINE
from benchmarks.suites.selectors import suite_latest
from benchmarks.suites.services import suite_import
from reviewapp.providers.model_server import served_model_id

EXAMPLE_SUITE = pathlib.Path(__file__).resolve().parent / "suites" / "nrs_v1.json"


def load_demo(*, data_dir: pathlib.Path, stdout) -> None:
    statutes = pathlib.Path(data_dir) / "statutes"
    for fmt, folder in (("nrs-html", "nrs"), ("uslm-xml", "usc"), ("hrs-json", "hrs")):
        started = time.perf_counter()
        outcomes = statutes_import(fmt=fmt, paths=[statutes / folder])
        new = sum(o.created for o in outcomes)
        sections = sum(o.snapshot.provision_count for o in outcomes)
        stdout.write(f"benchmarks: {folder} {sections} sections in {len(outcomes)} files "
                     f"({new} new snapshots, {time.perf_counter() - started:.1f} s)\n")
    suite, created = suite_import(raw=EXAMPLE_SUITE.read_bytes(), filename=str(EXAMPLE_SUITE), frozen_by="demo")
    stdout.write(f"benchmarks: suite {suite} {'frozen' if created else 'present'} (sha256 {suite.sha256[:12]})\n")
    # bm25-v1 (the default) is the same on every database; the other configurations are per engine.
    engine = BM25_ENGINE if CONFIGURATIONS[DEFAULT_CONFIGURATION].engine_independent else engine_for_connection().name
    run = RetrievalRun.objects.filter(suite=suite, engine=engine, configuration=DEFAULT_CONFIGURATION,
                                      status=RunStatus.DONE).order_by("id").first()
    if run is None:
        run = retrieval_run_create(suite=suite_latest(name=suite.name) or suite, configuration=DEFAULT_CONFIGURATION)
        stdout.write(f"benchmarks: retrieval run #{run.pk} {run.status} on {engine}\n")
    else:
        stdout.write(f"benchmarks: retrieval run #{run.pk} present on {engine}\n")
    # On a finished run: the local rerank run, its review pool and the calibration demo (benchmarks/labels/demo.py).
    if run.status == RunStatus.DONE:
        load_demo_review(retrieval_run=run, stdout=stdout)
        # The fourth statute system: the bundled real model, when `make demo` started its server.

        load_model_rerank_demo(retrieval_run=run, stdout=stdout)
    load_demo_first_stages(suite=run.suite, stdout=stdout)
    if run.status == RunStatus.DONE:
        load_demo_comparison(retrieval_run=run, stdout=stdout)


def load_demo_comparison(*, retrieval_run: RetrievalRun, stdout) -> None:
    """Declare the demo's systems one comparison before anyone reads a held-out figure: keyword order,
    the MiniLM rerank (its hybrid comes with it) and the other first-stage configurations of the suite. Idempotent:
    nothing is declared once any of them was declared or scored."""
    admin = get_user_model().objects.filter(username="admin").first()
    rerank = (RerankRun.objects.filter(retrieval_run=retrieval_run, provider="local", status=RerankStatus.DONE)
              .order_by("id").first())
    if admin is None or rerank is None:
        return
    stages = [RetrievalRun.objects.filter(suite=retrieval_run.suite, configuration=c, status=RunStatus.DONE)
              .order_by("id").first() for c in DEMO_FIRST_STAGES]
    model = (RerankRun.objects.filter(retrieval_run=retrieval_run, provider="openai_compatible",
                                      model_id=served_model_id(), status=RerankStatus.DONE).order_by("id").first())
    systems = [(retrieval_run, None), (retrieval_run, rerank), *([(retrieval_run, model)] if model else []),
               *((stage, None) for stage in stages if stage is not None and stage.pk != retrieval_run.pk)]
    try:
        declared = comparison_declare(systems=systems, user=admin, via="command")
    except ComparisonError as error:
        stdout.write(f"benchmarks: demo comparison not declared ({error})\n")
        return
    stdout.write(f"benchmarks: comparison #{declared.pk} declared: {len(systems)} systems planned together\n")


# The leaderboard's table of configurations on known targets: the engine-independent systems first.
DEMO_FIRST_STAGES = (RM3_CONFIGURATION, QLD_CONFIGURATION, "keyword-v1", "heading-v1")


def load_demo_first_stages(*, suite, stdout) -> None:
    """A finished run of each of DEMO_FIRST_STAGES on the demo suite, unless one is present. Idempotent."""
    for configuration in DEMO_FIRST_STAGES:
        started = time.perf_counter()
        config = CONFIGURATIONS[configuration]
        engine = BM25_ENGINE if config.engine_independent else engine_for_connection().name
        present = RetrievalRun.objects.filter(suite=suite, engine=engine, configuration=configuration,
                                              status=RunStatus.DONE).order_by("id").first()
        if present is not None:
            stdout.write(f"benchmarks: retrieval run #{present.pk} ({configuration}) present on {engine}\n")
            continue
        run = retrieval_run_create(suite=suite, configuration=configuration)
        stdout.write(f"benchmarks: retrieval run #{run.pk} ({configuration}) {run.status} on {engine} "
                     f"({time.perf_counter() - started:.1f} s)\n")
