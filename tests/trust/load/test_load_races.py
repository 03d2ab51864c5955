"""Promises under concurrency, tried against a real gunicorn with threads on PostgreSQL and Redis.

Each test releases requests together from a barrier (tests/trust/race.py) and checks the promise after every
trial: what one request at a time keeps must hold when the same requests arrive at once. PostgreSQL only:
SQLite serialises every write transaction, so no two of these requests would ever overlap there (CI runs the
suite on PostgreSQL + Redis as well). The server is the session's one (``race_server`` in conftest.py, shared with
test_load_races_admin.py). The world is committed to the test database (the server is
another process and sees only committed rows) and flushed after each test.
"""

from __future__ import annotations

import itertools
from functools import partial

import pytest

from tests.trust.race import ACCOUNT_LIMIT, LOGIN_LIMIT, release_together

TRIALS = 5
BURST = 23  # far beyond the server's small limits (race.LOGIN_LIMIT, race.ACCOUNT_LIMIT)
PASSAGE_TEXT = " ".join(["The landlord shall return the deposit within thirty days of the end of the tenancy."] * 4)


pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgresql]


@pytest.fixture
def race(race_server):
    """A reviewer with a session and a token, a pool assigned to them; committed (the server is another process),
    flushed after the test by pytest-django, and the cache's counters cleared."""
    from tests.helpers import cache_clear

    world = _world()
    world["server"] = race_server
    try:
        yield world
    finally:
        cache_clear()


def _world() -> dict:
    from django.contrib.auth import get_user_model

    from perf.web.review_world import login_sessions
    from reviewapp.core.auth.credentials import api_token_create
    from reviewapp.review.assignment.services import pool_assign
    from reviewapp.review.pools.services import pool_create_model
    from tests.factories import make_user

    user_model = get_user_model()
    reviewer = make_user(user_model, "race_reviewer", "reviewer")
    items = [
        {"query_id": f"q{i:03d}", "doc_id": f"doc-{i:04d}", "query_text": f"Question {i}: when is a deposit returned?",
         "source_heading": f"Sec. {i}  Deposits", "source_text": PASSAGE_TEXT,
         "passage_caption": f"Sec. {i}  Deposits", "passage_text": PASSAGE_TEXT[:200]}
        for i in range(4 * TRIALS)
    ]
    pool = pool_create_model(name="races", kind="passage", items=items, declared_rule="race tests: explicit list")
    pool_assign(pool=pool, reviewers=[reviewer], per_item=1)
    item_ids = iter(pool.items.order_by("pk").values_list("public_id", flat=True))
    return {"reviewer": reviewer, "session": login_sessions([reviewer])[reviewer.username],
            "token": api_token_create(user=reviewer).key, "items": item_ids, "names": itertools.count()}


def _item(public_id: str):
    from reviewapp.review.judgments.models import ReviewItem

    return ReviewItem.objects.select_related("pool").get(public_id=public_id)


def _history(item, reviewer) -> list[tuple[str, dict]]:
    from reviewapp.review.judgments.models import JudgmentRevision

    return list(JudgmentRevision.objects.filter(judgment__item=item, judgment__reviewer=reviewer)
                .order_by("number").values_list("status", "grades"))


def _submit(item, reviewer, grades: dict, *, complete: bool) -> None:
    from reviewapp.review.workspace.services import item_shown_hashes, judgment_submit

    judgment_submit(item=item, reviewer=reviewer, grades=grades, complete=complete,
                             shown=item_shown_hashes(item))


def _judgment_body(item, grades: dict, *, complete: bool) -> dict:
    from reviewapp.review.workspace.services import item_shown_hashes

    return {"grades": grades, "complete": complete, **item_shown_hashes(item)}


def test_two_completes_after_a_reopen_leave_exactly_one_complete(race):
    """Two tabs complete a reopened judgment with different grades at once: one wins, the other is refused."""
    from reviewapp.review.workspace.services import judgment_reopen

    reviewer, server = race["reviewer"], race["server"]
    failures = []
    for trial in range(TRIALS):
        item = _item(next(race["items"]))
        _submit(item, reviewer, {"section": 0, "passage": 0}, complete=True)
        judgment_reopen(item=item, reviewer=reviewer)
        tabs = [server.client(token=race["token"]) for _ in range(2)]
        url = f"/api/v1/review/items/{item.public_id}/judgment/"
        responses = release_together([
            partial(tab.post, url, json=_judgment_body(item, {"section": n, "passage": n}, complete=True))
            for n, tab in enumerate(tabs, start=1)
        ])
        after_reopen = _history(item, reviewer)[2:]
        codes = sorted(response.status_code for response in responses)
        if codes != [201, 400] or [status for status, _ in after_reopen] != ["complete"]:
            failures.append((trial, codes, after_reopen))
    assert not failures, f"{len(failures)} of {TRIALS} trials broke the promise: {failures}"


def test_a_draft_saved_while_completing_never_overwrites_the_complete(race):
    """An autosave and a complete at once: either the draft comes first, or it is refused after the complete."""
    reviewer, server = race["reviewer"], race["server"]
    failures = []
    for trial in range(TRIALS):
        item = _item(next(race["items"]))
        _submit(item, reviewer, {"section": 0, "passage": 0}, complete=False)
        tabs = [server.client(token=race["token"]) for _ in range(2)]
        url = f"/api/v1/review/items/{item.public_id}/judgment/"
        responses = release_together([
            partial(tabs[0].post, url, json=_judgment_body(item, {"section": 3, "passage": 3}, complete=True)),
            partial(tabs[1].post, url, json=_judgment_body(item, {"section": 1, "passage": None}, complete=False)),
        ])
        statuses = [status for status, _ in _history(item, reviewer)]
        if statuses[-1] != "complete" or responses[0].status_code != 201:
            failures.append((trial, [r.status_code for r in responses], statuses))
    assert not failures, f"{len(failures)} of {TRIALS} trials broke the promise: {failures}"


def test_two_reopens_at_once_make_one_draft(race):
    reviewer, server = race["reviewer"], race["server"]
    failures = []
    for trial in range(TRIALS):
        item = _item(next(race["items"]))
        _submit(item, reviewer, {"section": 2, "passage": 2}, complete=True)
        tabs = [server.client(token=race["token"]) for _ in range(2)]
        url = f"/api/v1/review/items/{item.public_id}/judgment/reopen/"
        responses = release_together([partial(tab.post, url) for tab in tabs])
        codes = sorted(response.status_code for response in responses)
        history = _history(item, reviewer)
        if codes != [200, 201] or [status for status, _ in history] != ["complete", "draft"]:
            failures.append((trial, codes, history))
    assert not failures, f"{len(failures)} of {TRIALS} trials broke the promise: {failures}"


def test_two_undos_at_once_each_undo_the_state_they_found(race):
    """As one after the other: the first restores the state before the latest change, the second undoes that."""
    reviewer, server = race["reviewer"], race["server"]
    failures = []
    for trial in range(TRIALS):
        item = _item(next(race["items"]))
        first, second = {"section": 0, "passage": 0}, {"section": 1, "passage": 1}
        _submit(item, reviewer, first, complete=False)
        _submit(item, reviewer, second, complete=False)
        tabs = [server.client(session_key=race["session"]) for _ in range(2)]
        url = f"/review/workspace/items/{item.public_id}/"
        responses = release_together([partial(tab.post, url, data={"action": "undo"}) for tab in tabs])
        grades = [grade for _, grade in _history(item, reviewer)]
        codes = [response.status_code for response in responses]
        if any(code >= 400 for code in codes) or grades != [first, second, first, second]:
            failures.append((trial, codes, grades))
    assert not failures, f"{len(failures)} of {TRIALS} trials broke the promise: {failures}"


def _login_burst(race, *, username: str, password: str, addresses: list[str]) -> list[str]:
    """Each attempt from its own client and address, released together; what each page said."""
    server = race["server"]
    clients = [server.client(headers={"X-Forwarded-For": address}) for address in addresses]
    responses = release_together([
        lambda client=client: client.post("/accounts/login/", data={"username": username, "password": password})
        for client in clients
    ])
    return [_login_outcome(response) for response in responses]


def _login_outcome(response) -> str:
    if response.status_code == 302:
        return "signed in"
    if "Too many failed sign-in attempts" in response.text:
        return "refused unchecked"
    if "Please enter a correct username and password" in response.text:
        return "checked, wrong"
    return f"unexpected {response.status_code}"


def _new_account(race) -> str:
    from django.contrib.auth import get_user_model

    from tests.factories import make_user

    return make_user(get_user_model(), f"race_login_{next(race['names'])}", "reviewer").username


def test_a_burst_of_wrong_passwords_is_checked_at_most_the_limit_then_the_account_is_locked(race):
    failures = []
    for trial in range(3):
        username = _new_account(race)
        outcomes = _login_burst(race, username=username, password="wrong", addresses=["203.0.113.7"] * BURST)
        checked = outcomes.count("checked, wrong")
        right = _login_burst(race, username=username, password="pw-" + username, addresses=["203.0.113.7"])
        if checked > LOGIN_LIMIT or checked + outcomes.count("refused unchecked") != BURST or right != [
                "refused unchecked"]:
            failures.append((trial, checked, right))
    assert not failures, f"{len(failures)} of 3 trials broke the promise (trial, checked, then): {failures}"


def test_wrong_passwords_spread_over_addresses_are_capped_per_account(race):
    username = _new_account(race)
    outcomes = _login_burst(race, username=username, password="wrong",
                            addresses=[f"198.51.100.{i}" for i in range(1, BURST + 1)])
    assert outcomes.count("checked, wrong") <= ACCOUNT_LIMIT, outcomes
    # The owner, from an address that never failed, is refused too until the window passes.
    assert _login_burst(race, username=username, password="pw-" + username,
                        addresses=["192.0.2.1"]) == ["refused unchecked"]


def test_a_burst_of_bad_tokens_locks_the_address_with_no_failure_lost(race):
    """Exactly the limit of bad tokens at once: every failure counts, so a valid token is refused after."""
    server = race["server"]
    failures = []
    for trial in range(TRIALS):
        address = f"203.0.113.{100 + trial}"
        clients = [server.client(token=f"not-a-token-{i}", headers={"X-Forwarded-For": address})
                   for i in range(LOGIN_LIMIT)]
        responses = release_together([lambda client=client: client.get("/api/v1/me/") for client in clients])
        # Refused as not authenticated (403: DRF answers so when session authentication comes first).
        codes = [response.status_code for response in responses]
        valid = server.client(token=race["token"], headers={"X-Forwarded-For": address}).get("/api/v1/me/")
        if codes != [403] * LOGIN_LIMIT or "Too many failed token attempts" not in valid.text:
            failures.append((trial, codes, valid.status_code))
    assert not failures, f"{len(failures)} of {TRIALS} trials broke the promise: {failures}"
    elsewhere = server.client(token=race["token"], headers={"X-Forwarded-For": "192.0.2.50"}).get("/api/v1/me/")
    assert elsewhere.status_code == 200
