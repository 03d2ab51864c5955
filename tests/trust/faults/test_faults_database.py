"""The database connection drops during a judgment save: the reviewer sees an error, and the judgment is either
fully saved or not at all (never a revision without its judgment's head moving, nor the reverse).

On PostgreSQL the server really terminates the request's backend (pg_terminate_backend from a second
connection) at a chosen statement of the save; on SQLite the statement fails with the error a lost disk or
lock gives. Two points: just before the judgment head is moved (the revision is already inserted), and right
after it (so the COMMIT is what fails).
"""

from __future__ import annotations

import pytest
from django.db import OperationalError, connection
from django.test import Client


def _kill_own_backend() -> None:
    import psycopg

    pid = connection.connection.info.backend_pid
    cfg = connection.settings_dict
    with psycopg.connect(host=cfg.get("HOST") or "127.0.0.1", port=cfg.get("PORT") or 5432,
                         user=cfg.get("USER") or "postgres", dbname=cfg["NAME"], autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])


class DropAt:
    """An execute wrapper that drops the connection at the first UPDATE of the judgment head."""

    def __init__(self, when: str) -> None:
        self.when = when  # "before" the head update, or "after" it (the commit fails)
        self.fired = False

    def __call__(self, execute, sql, params, many, context):
        target = not self.fired and sql.lstrip().upper().startswith('UPDATE "REVIEWAPP_JUDGMENT"')
        if target and self.when == "before":
            self.fired = True
            self._drop()
        result = execute(sql, params, many, context)
        if target and self.when == "after":
            self.fired = True
            self._drop()
        return result

    def _drop(self) -> None:
        if connection.vendor == "postgresql":
            _kill_own_backend()
            if self.when == "after":
                return  # the COMMIT that follows finds the connection gone
        raise OperationalError("the connection to the database was lost (simulated)")


@pytest.fixture
def item(transactional_db, reviewer_user):
    from reviewapp.review.assignment.services import pool_assign
    from reviewapp.review.pools.services import pool_create_model

    text = "The landlord shall return the deposit within thirty days."
    pool = pool_create_model(
        name="faults", kind="passage", declared_rule="explicit",
        items=[{"query_id": "q1", "doc_id": "d1", "query_text": "When is a deposit returned?",
                "source_heading": "Deposits", "source_text": text, "passage_caption": "Deposits",
                "passage_text": text}],
    )
    pool_assign(pool=pool, reviewers=[reviewer_user], per_item=1)
    return pool.items.get()


def _state(item, reviewer) -> tuple:
    from reviewapp.review.judgments.models import Judgment, JudgmentRevision

    judgment = Judgment.objects.filter(item=item, reviewer=reviewer).first()
    revisions = list(JudgmentRevision.objects.filter(judgment__item=item).order_by("number")
                     .values_list("number", "status", "grades"))
    head = (judgment.revision_count, judgment.current_id) if judgment else (0, None)
    return head, revisions


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_dropped_connection_during_a_save_shows_an_error_and_saves_all_or_nothing(item, reviewer_user, when):
    from reviewapp.review.judgments.models import JudgmentRevision
    from reviewapp.review.workspace.services import judgment_submit

    judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 1, "passage": 1}, complete=False)
    before = _state(item, reviewer_user)

    client = Client(raise_request_exception=False)
    client.force_login(reviewer_user)
    url = f"/review/workspace/items/{item.public_id}/"
    dropper = DropAt(when)
    shown = {"query_hash": item.query_hash, "source_hash": item.source_hash, "passage_hash": item.passage_hash}
    with connection.execute_wrapper(dropper):
        response = client.post(url, {"section": "3", "passage": "2", "action": "complete", **shown})
    connection.close()  # the test client keeps Django from closing a broken connection by itself
    assert dropper.fired
    # The reviewer sees what is down (503, try again), not "saved" and not a bare 500.
    assert response.status_code == 503 and b"database is unreachable" in response.content
    assert response["Retry-After"]
    assert b"saved" not in response.content.lower()

    after = _state(item, reviewer_user)
    assert after == before  # not at all: no orphan revision, no head pointing nowhere
    head, revisions = after
    assert head == (len(revisions), JudgmentRevision.objects.get(judgment__item=item, number=len(revisions)).pk)

    # The reviewer saves again once the database is back: exactly one new revision, fully saved.
    retry = client.post(url, {"section": "3", "passage": "2", "action": "complete", **shown})
    assert retry.status_code == 302
    (count, current), revisions = _state(item, reviewer_user)
    assert count == len(revisions) == len(before[1]) + 1
    assert revisions[-1] == (count, "complete", {"section": 3, "passage": 2})
    assert JudgmentRevision.objects.get(pk=current).number == count
