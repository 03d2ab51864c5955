"""Email notices: assignment, reminder after N days, adjudication waiting; each can be turned off; each
is sent once however many senders run; a reviewer's email is as blind as their queue."""

from __future__ import annotations

import smtplib
from datetime import timedelta

import pytest
from django.core import mail
from django.core.management import call_command
from django.utils import timezone

from reviewapp.notifications import services
from reviewapp.notifications.models import Notice, NotificationPreference
from reviewapp.review.workspace.services import judgment_submit
from tests.factories import client_for
from tests.helpers import shown_hashes
from tests.reviewapp.review.conftest import assert_blind, make_items, make_pool

pytestmark = pytest.mark.django_db


class FailingBackend:
    """A mail server that refuses every message (the SMTP error a real one raises)."""

    def __init__(self, *args, **kwargs):
        pass

    def send_messages(self, messages):
        raise smtplib.SMTPRecipientsRefused({"rita@example.org": (550, b"mailbox unavailable")})


@pytest.fixture
def people(reviewer_user, reviewer2_user, admin_user_):
    for user, address in ((reviewer_user, "rita@example.org"), (reviewer2_user, "rob@example.org"),
                          (admin_user_, "alice@example.org")):
        user.email = address
        user.save()
    return reviewer_user, reviewer2_user, admin_user_


def _by_address() -> dict[str, list]:
    out: dict[str, list] = {}
    for message in mail.outbox:
        for address in message.to:
            out.setdefault(address, []).append(message)
    return out


def test_new_assignments_are_announced_once_and_blind(people):
    rita, rob, _ = people
    pool = make_pool(reviewers=[rita, rob])
    report = services.notices_send()
    assert report.sent == 2
    sent = _by_address()
    (message,) = sent["rita@example.org"]
    assert message.subject.startswith("12 new items to review: ")
    assert pool.reviewer_title in message.subject or "Review set" in message.subject
    assert_blind(message.subject + "\n" + message.body, where="the assignment email")
    assert "POOLNAMEMARK" not in message.body  # the admin-facing pool name is never in a reviewer's email
    # Nothing new: nothing sent. A second pool: one more email each, counting only its items.
    assert services.notices_send().sent == 0
    # The same texts again are never assigned twice (judge once): only the fourth query's 4 items are new.
    make_pool(reviewers=[rita, rob], items=make_items(n_queries=4, per_query=4), name="second pool")
    services.notices_send()
    later = [m for m in _by_address()["rita@example.org"] if m is not message]
    assert [m.subject.split(":")[0] for m in later] == ["4 new items to review"]


def test_a_user_who_turned_a_kind_off_or_has_no_address_gets_none(people):
    rita, rob, _ = people
    NotificationPreference.objects.create(user=rob, assignment=False)
    rita.email = ""
    rita.save()
    make_pool(reviewers=[rita, rob])
    assert services.notices_send().sent == 0 and not mail.outbox


def test_a_reminder_when_items_wait_for_days_once_a_period_with_what_is_left(people, settings):
    rita, rob, _ = people
    settings.REVIEW_REMINDER_DAYS = 3
    pool = make_pool(reviewers=[rita, rob])
    services.notices_send()
    mail.outbox.clear()
    assert services.notices_send(now=timezone.now() + timedelta(days=1)).sent == 0  # not waiting long enough
    item = pool.items.order_by("id").first()
    judgment_submit(item=item, reviewer=rita, grades={"section": 2, "passage": 1}, complete=True,
                                    shown=shown_hashes(item.public_id))
    # Noon, so that an hour later is the same day: a reminder's period is counted in whole days, and at 23:xx the
    # hour after could fall into the next period and rightly send again.
    later = (timezone.now() + timedelta(days=4)).replace(hour=12, minute=0)
    assert services.notices_send(now=later).sent == 2
    (reminder,) = _by_address()["rita@example.org"]
    assert reminder.subject.startswith("11 items still to review") and "(1 complete)" in reminder.body
    assert_blind(reminder.subject + "\n" + reminder.body, where="the reminder email")
    assert services.notices_send(now=later + timedelta(hours=1)).sent == 0
    assert services.notices_send(now=later + timedelta(days=3)).sent == 2  # the next period


def test_admins_hear_of_disagreements_waiting_once_a_day(people):
    rita, rob, _ = people
    pool = make_pool(reviewers=[rita, rob])
    services.notices_send()
    mail.outbox.clear()
    item = pool.items.order_by("id").first()
    for reviewer, grade in ((rita, 3), (rob, 0)):
        judgment_submit(item=item, reviewer=reviewer, grades={"section": grade, "passage": 1},
                                        complete=True, shown=shown_hashes(item.public_id))
    assert services.notices_send().sent == 1
    (message,) = mail.outbox
    assert message.to == ["alice@example.org"]
    assert message.subject == "1 disagreement wait for adjudication: POOLNAMEMARK pool"
    assert f"/review/agreement/{pool.public_id}/disagreements/next/" in message.body
    assert services.notices_send().sent == 0


def test_a_notice_decided_by_another_sender_meanwhile_is_not_sent_twice(people, monkeypatch):
    rita, rob, _ = people
    make_pool(reviewers=[rita, rob])
    due = services.notices_due()
    # Another sender decides rita's notice between this one's read and its send.
    first = next(p for p in due if p.user_id == rita.pk)
    Notice.objects.create(user_id=first.user_id, kind=first.kind, key=first.key, upto=first.upto, subject="x")
    monkeypatch.setattr(services, "notices_due", lambda now=None: due)
    report = services.notices_send()
    assert (report.sent, report.skipped) == (1, 1)
    assert [m.to for m in mail.outbox] == [["rob@example.org"]]


def test_a_refused_email_is_recorded_with_the_servers_words_and_not_retried(people, settings):
    rita = people[0]
    settings.EMAIL_BACKEND = f"{__name__}.FailingBackend"
    make_pool(reviewers=[rita], per_item=1)
    report = services.notices_send()
    assert (report.sent, report.failed) == (0, 1)
    notice = Notice.objects.get(user=rita)
    assert notice.status == "failed" and "mailbox unavailable" in notice.error
    assert services.notices_send().failed == 0  # decided: not retried by itself


def test_the_preferences_page_turns_kinds_off_and_offers_adjudication_to_admins_only(people):
    rita, _, alice = people
    client = client_for(rita)
    html = client.get("/accounts/notifications/").content.decode()
    assert 'name="assignment"' in html and 'name="reminder"' in html and 'name="adjudication"' not in html
    assert "rita@example.org" in html
    response = client.post("/accounts/notifications/", {"assignment": "on"})
    assert response.status_code == 302
    preference = NotificationPreference.objects.get(user=rita)
    assert (preference.assignment, preference.reminder) == (True, False)
    assert 'name="adjudication"' in client_for(alice).get("/accounts/notifications/").content.decode()


def test_the_command_lists_and_sends_and_beat_runs_the_same_task(people, settings, capsys):
    rita, rob, _ = people
    make_pool(reviewers=[rita, rob])
    call_command("send_notifications", "--dry-run")
    out = capsys.readouterr().out
    assert "assignment: rita@example.org: 12 new items to review" in out and "nothing sent" in out
    assert not mail.outbox
    call_command("send_notifications")
    assert "2 sent, 0 failed" in capsys.readouterr().out
    from reviewapp.notifications.tasks import notifications_send

    assert settings.CELERY_BEAT_SCHEDULE["notifications-send"]["task"] == notifications_send.name
