"""A declaration and a held-out computation of the same suite never interleave (PostgreSQL: the suite row lock).

Each side holds its transaction open while the other starts in a second thread: the other waits, then sees what
the first committed. Without the lock the declaration's check would miss the computation still in flight and
declare a system whose held-out figures were already computed for a reader. SQLite needs no test of its own:
its IMMEDIATE transactions take the database's write lock at BEGIN, so every writer waits for the one before.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from benchmarks.comparisons.models import DeclaredComparison
from benchmarks.comparisons.services import ComparisonError, comparison_declare
from tests.benchmarks.comparisons.test_declared_comparisons import runs  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgresql]


def _in_thread(target) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = target()
        except ComparisonError as error:
            outcome["error"] = str(error)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def _inputs(rerank):
    """The report inputs of a rerank run: computed before the race, so each side only takes the lock and writes."""
    from benchmarks.reports.selectors import report_build, rerank_scores_load

    scores, run = rerank_scores_load(pk=rerank.pk)
    return report_build(run=run, rerank=scores, replicates=1000).inputs


def _record(inputs):
    from benchmarks.reports.exposure import exposure_record_inputs

    return exposure_record_inputs(inputs, purpose="command")


def test_a_declaration_waits_for_a_computation_in_flight_and_then_refuses_the_system_it_scored(runs,  # noqa: F811
                                                                                                admin_user_):
    systems = [(runs["run"], runs["oracle"]), (runs["run"], runs["reverse"])]
    inputs = _inputs(runs["oracle"])
    with transaction.atomic():
        _record(inputs)  # appended, locked, not yet committed
        thread, outcome = _in_thread(lambda: comparison_declare(systems=systems, user=admin_user_, via="api"))
        thread.join(timeout=1.5)
        assert thread.is_alive(), "the declaration did not wait for the held-out computation in flight"
    thread.join(timeout=30)
    assert "already scored" in outcome.get("error", "") and f"rerank #{runs['oracle'].pk}" in outcome["error"]
    assert not DeclaredComparison.objects.exists()


def test_a_computation_waits_for_a_declaration_in_flight_and_then_counts_as_declared(runs,  # noqa: F811
                                                                                    admin_user_):
    systems = [(runs["run"], runs["oracle"]), (runs["run"], runs["reverse"])]
    inputs = _inputs(runs["reverse"])
    with transaction.atomic():
        declared = comparison_declare(systems=systems, user=admin_user_, via="api")
        thread, outcome = _in_thread(lambda: _record(inputs))
        thread.join(timeout=1.5)
        assert thread.is_alive(), "the held-out computation did not wait for the declaration in flight"
    thread.join(timeout=30)
    exposure = outcome["value"]
    assert exposure.fresh and exposure.declaration is not None and exposure.declaration.pk == declared.pk
