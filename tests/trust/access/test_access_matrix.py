"""Every URL pattern, visited as anonymous, reviewer, stakeholder and admin, answers what tests/trust/matrix.py says.

A URL pattern without a matrix entry fails (add it to tests/trust/matrix.py); unsafe methods from a role that
may not use them are refused and write nothing.
"""

from __future__ import annotations

import json

import pytest
from django.apps import apps

from tests.trust.fixtures import ROLES, client_for
from tests.trust.matrix import (
    ADMIN_LOGIN,
    API_ANON,
    LOGIN,
    MATRIX,
    admin_model_route,
    admin_model_urls,
    walk_routes,
)

pytestmark = pytest.mark.django_db
REFUSALS = (403, LOGIN, ADMIN_LOGIN, API_ANON)


def _clients(world) -> dict:
    return {role: client_for(world.users.get(role)) for role in ROLES}


def _fill(value, world):
    if isinstance(value, str):
        return world.fmt(value)
    if isinstance(value, dict):
        return {k: _fill(v, world) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, world) for v in value]
    return value


def _mismatch(response, expected) -> str | None:
    status = response.status_code
    if expected is None:
        return None
    if expected == LOGIN:
        location = response.get("Location", "")
        if status == 302 and location.startswith("/accounts/login/"):
            return None
        return f"expected 302 to /accounts/login/, got {status} {location}".strip()
    if expected == ADMIN_LOGIN:
        location = response.get("Location", "")
        if status == 302 and location.startswith("/admin/login/"):
            return None
        return f"expected 302 to /admin/login/, got {status} {location}".strip()
    allowed = {expected} if isinstance(expected, int) else set(expected)
    return None if status in allowed else f"expected {sorted(allowed)}, got {status}"


def _row_counts() -> dict[str, int]:
    return {m._meta.label: m._default_manager.count() for m in apps.get_models()
            if m._meta.managed and m._meta.label != "sessions.Session"}


def test_every_url_pattern_has_an_entry_in_the_matrix():
    routes = [route for route, _ in walk_routes()]
    missing = [r for r in routes if r not in MATRIX and admin_model_route(r) is None]
    assert not missing, "URL patterns with no expected answer per role; add them to tests/trust/matrix.py:\n  " + \
        "\n  ".join(missing)
    stale = sorted(set(MATRIX) - set(routes))
    assert not stale, f"matrix entries for patterns that no longer exist (remove them): {stale}"


def test_every_role_gets_its_expected_answer_on_every_url_pattern(world):
    clients = _clients(world)
    failures = []
    for route, entry in MATRIX.items():
        url = world.fmt(entry.url)
        for role in ROLES:
            response = clients[role].get(url)
            problem = _mismatch(response, entry.get[role])
            if problem:
                failures.append(f"GET {url} ({route}) as {role}: {problem}")
            if entry.location and response.get("Location") != world.fmt(entry.location):
                failures.append(f"GET {url} ({route}) as {role}: sent to {response.get('Location')}, "
                                f"not {world.fmt(entry.location)}")
    assert not failures, f"{len(failures)} wrong answers:\n" + "\n".join(failures)


SUPERUSER_ONLY = {"auth.User", "auth.Group", "reviewapp.ApiToken", "reviewapp.AccountAudit"}


def test_django_admin_model_pages_are_for_the_admin_role_only(world):
    clients = _clients(world)
    failures = []
    for label, url, _model in admin_model_urls():
        for role in ("anonymous", "reviewer", "stakeholder"):
            problem = _mismatch(clients[role].get(url), ADMIN_LOGIN)
            if problem:
                failures.append(f"GET {url} ({label}) as {role}: {problem}")
        status = clients["admin"].get(url).status_code
        expected = {200} if label.endswith("changelist") else {200, 302, 403}
        if _model._meta.label in SUPERUSER_ONLY:  # accounts, tokens and their audit log: superusers only
            expected = {302, 403} if label.endswith(" object") else {403}  # ".../<pk>/" redirects to its page
        if status not in expected:
            failures.append(f"GET {url} ({label}) as admin: expected {sorted(expected)}, got {status}")
    assert not failures, "\n".join(failures)


def test_unsafe_methods_from_a_role_without_the_permission_are_refused_and_write_nothing(world):
    clients = _clients(world)
    failures = []
    checked = 0
    for route, entry in MATRIX.items():
        if entry.post is None:
            continue
        url = world.fmt(entry.url)
        data = _fill(entry.data, world)
        for role, expected in entry.post.items():
            if expected is None:  # a role that may POST here: not exercised by the matrix
                continue
            before = _row_counts()
            if entry.json:
                response = clients[role].post(url, json.dumps(data), content_type="application/json")
            else:
                response = clients[role].post(url, data)
            checked += 1
            problem = _mismatch(response, expected)
            if problem:
                failures.append(f"POST {url} ({route}) as {role}: {problem}")
            after = _row_counts()
            changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
            if changed:
                failures.append(f"POST {url} ({route}) as {role} wrote rows: {changed}")
    assert checked >= 40
    assert not failures, "\n".join(failures)


def test_every_other_method_is_refused_or_not_allowed_for_roles_without_the_permission(world):
    """PUT/PATCH/DELETE to every pattern: never a success for a role that may not even read it."""
    clients = _clients(world)
    failures = []
    for route, entry in MATRIX.items():
        url = world.fmt(entry.url)
        for role in ROLES:
            if entry.get[role] not in REFUSALS:
                continue
            before = _row_counts()
            for method in ("put", "patch", "delete"):
                status = getattr(clients[role], method)(url, "{}", content_type="application/json").status_code
                if status < 300 or status >= 500:
                    failures.append(f"{method.upper()} {url} ({route}) as {role}: {status}")
            if _row_counts() != before:
                failures.append(f"PUT/PATCH/DELETE {url} ({route}) as {role} wrote rows")
    assert not failures, "\n".join(failures)


def test_the_admin_pages_of_every_pool_and_run_of_the_world_answer(world):
    """The matrix visits one object per pattern; these are the others (a pool declared from a rerank run, the
    CUAD audit's pool, the planted run), each of which once had its own way to fail."""
    admin = client_for(world.users["admin"])
    for pool_id in (world.pool_id, world.marker_pool_id, world.audit_pool_id):
        for url in (f"/review/pools/{pool_id}/", f"/review/agreement/{pool_id}/qrels.txt",
                    f"/review/agreement/{pool_id}/judgments.jsonl"):
            assert admin.get(url).status_code == 200, url
    for pk in (world.rerank_pk, world.planted_rerank_pk):
        for url in (f"/benchmarks/rerank/{pk}/", f"/benchmarks/labels/rerank/{pk}/human-metrics/",
                    f"/benchmarks/labels/rerank/{pk}/calibration/", f"/benchmarks/labels/rerank/{pk}/review-pool/"):
            assert admin.get(url).status_code == 200, url
