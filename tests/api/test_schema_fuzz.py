"""Requests generated from the API's OpenAPI schema, against every GET operation: the schema is the contract.

schemathesis draws path ids, query parameters and pages from what the schema declares (types, ranges, enums,
nullability) and sends them to the application in-process (WSGI) as a signed-in admin, over a little data.
Every answer must be no 5xx, JSON, of a status and a shape the schema declares for it; a request the schema
calls valid must not be refused as out of range. The budget is fixed (examples per operation, seeded) so the
run takes the same time in CI every day.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import ignored_auth, negative_data_rejection, positive_data_acceptance

from tests.benchmarks.conftest import import_synthetic
from tests.factories import make_user
from tests.grading.console_support import load

EXAMPLES_PER_OPERATION = 12
# Operations whose query names things the schema cannot enumerate or relate: a CUAD sample id must name an
# existing sample, ``type`` a clause type of the loaded dataset, and ``partial`` may not exceed ``correct``.
# A 400 naming the parameter is their documented answer (grading.scorecard.params.parse_view), so for these
# alone "a schema-valid request is accepted" is not checked; every other check is.
DATA_DEPENDENT = {
    "GET /api/v1/cuad/dataset/": "sample and dataset must exist",
    "GET /api/v1/cuad/explorer/": "sample must exist, type must be a loaded clause type, partial <= correct",
    "GET /api/v1/cuad/leaderboard/": "sample must exist, type must be a loaded clause type, partial <= correct",
    "GET /api/v1/cuad/scorecard/": "sample must exist, type must be a loaded clause type, partial <= correct",
}


@pytest.fixture
def api_schema(django_user_model, tmp_path):
    from reviewapp.core.auth.credentials import api_token_create
    from reviewapp.wsgi import application

    # A little of everything a GET can read: a corpus, a CUAD sample with two runs.
    import_synthetic([(f"999.{100 + i}", f"Heading {i}.", f"Body of section {i}.") for i in range(3)])
    load(tmp_path)
    admin = make_user(django_user_model, "fuzz_admin", "admin")
    headers = {"Authorization": f"Token {api_token_create(user=admin, name='schema fuzz').key}"}
    # As Django's test client does: a request's start and end must not close the test's database connection
    # (inside the test's transaction, PostgreSQL's would be dropped).
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", application, headers=headers)
        yield schema.include(method="GET"), headers
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


def _check(operation, headers: dict[str, str], excluded: list):
    """The seeded, fixed-budget property run of one operation."""

    @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy())
    def check(case):
        # The token is fixed, so "a request with broken credentials is refused" is not this test's question;
        # refusing schema-invalid data is not promised for every parameter (unknown ones are ignored).
        case.call_and_validate(headers=headers, excluded_checks=excluded)

    return check


@pytest.mark.django_db
def test_every_get_operation_answers_as_its_schema_declares(api_schema):
    schema, headers = api_schema
    failures: dict[str, str] = {}
    operations, labels = 0, set()
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        labels.add(operation.label)
        excluded = [ignored_auth, negative_data_rejection]
        if operation.label in DATA_DEPENDENT:
            excluded.append(positive_data_acceptance)

        check = _check(operation, headers, excluded)
        try:
            check()
        except KeyboardInterrupt:
            raise
        except BaseException as failure:  # schemathesis's FailureGroup is a BaseExceptionGroup; every operation
            failures[operation.label] = str(failure)[:3000]  # is tried and the failures are listed together
    assert operations > 40 and set(DATA_DEPENDENT) <= labels
    assert failures == {}, "\n\n".join(f"{k}: {v}" for k, v in failures.items())
