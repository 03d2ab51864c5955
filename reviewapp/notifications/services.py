"""Email notices: new items assigned, a reminder when items wait for days, disagreements waiting for adjudication.

One pass (``notices_send``) decides every notice due now and sends it; celery beat runs it every
``NOTIFY_SECONDS`` and ``manage.py send_notifications`` runs it by hand. A notice is decided once: its row
(``Notice``, unique per user, kind and key) is inserted before the email is sent, so a second sender running at
the same moment skips it, and a crash after the insert loses one email rather than sending two. A failed send is
recorded with the mail server's words and not retried by itself (a reminder's next period sends again).

What a reviewer's email says is blind like their queue: the pool's reviewer-facing title and counts, never the
pool's admin name, its systems or how its items were chosen.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from reviewapp.core.auth.roles import MANAGE_REVIEWS
from reviewapp.notifications.models import Notice, NotificationPreference
from reviewapp.review.agreement.disagreements import pool_open_disagreement_count
from reviewapp.review.assignment.selectors import assignment_marks, assignments_after, assignments_waiting
from reviewapp.review.pools.selectors import notice_pools
from reviewapp.review.workspace.queue import reviewer_queue_pages

# The kinds, as stored (NotificationKind's values; plain strings for the type checker).
ASSIGNMENT, REMINDER, ADJUDICATION = "assignment", "reminder", "adjudication"


@dataclass(frozen=True)
class Pending:
    user_id: int
    email: str
    kind: str
    key: str
    subject: str
    body: str
    upto: int = 0


@dataclass
class SendReport:
    sent: int = 0
    failed: int = 0
    skipped: int = 0  # decided by another sender at the same moment
    pending: list[Pending] = field(default_factory=list)


def _link(path: str) -> str:
    return f"{settings.SITE_URL.rstrip('/')}{path}" if settings.SITE_URL else path


def _recipients(user_ids: Iterable[int], kind: str) -> dict[int, str]:
    """Active users among ``user_ids`` with an email address who have not turned ``kind`` off: id -> address."""
    users = get_user_model().objects.filter(pk__in=set(user_ids), is_active=True).exclude(email="")
    off = set(NotificationPreference.objects.filter(user_id__in=set(user_ids), **{kind: False})
              .values_list("user_id", flat=True))
    return {user.pk: user.email for user in users if user.pk not in off}


def _assignment_notices() -> list[Pending]:
    latest = assignment_marks()
    if not latest:
        return []
    covered: dict[tuple[int, str], int] = {}
    for user_id, key, upto in Notice.objects.filter(kind=ASSIGNMENT).values_list("user_id", "key", "upto"):
        pool_public_id = key.partition(":")[0]
        covered[(user_id, pool_public_id)] = max(upto, covered.get((user_id, pool_public_id), 0))
    pools = {pool.pk: pool for pool in notice_pools()}
    recipients = _recipients({user for user, _ in latest}, ASSIGNMENT)
    out = []
    for (user_id, pool_pk), last in sorted(latest.items()):
        pool = pools[pool_pk]
        since = covered.get((user_id, pool.public_id), 0)
        if user_id not in recipients or last <= since:
            continue
        new = assignments_after(reviewer_id=user_id, pool_pk=pool_pk, after_id=since)
        title = pool.reviewer_title
        out.append(Pending(
            user_id=user_id, email=recipients[user_id], kind=ASSIGNMENT, key=f"{pool.public_id}:{last}", upto=last,
            subject=f"{new} new item{'s' if new != 1 else ''} to review: {title}",
            body=(f"{new} new item{'s' if new != 1 else ''} {'were' if new != 1 else 'was'} assigned to you in "
                  f"\"{title}\".\n\nYour queue: {_link('/review/workspace/')}\n\n"
                  f"Turn these emails off: {_link('/accounts/notifications/')}\n")))
    return out


def _reminder_notices(now: datetime) -> list[Pending]:
    days = settings.REVIEW_REMINDER_DAYS
    if days <= 0:
        return []
    waiting = assignments_waiting(assigned_before=now - timedelta(days=days))
    recipients = _recipients({user for user, _ in waiting}, REMINDER)
    period = (now.date() - datetime(1970, 1, 1).date()).days // days  # one reminder per pool per period
    users = get_user_model().objects.in_bulk(list(recipients))
    out = []
    for user_id in sorted(recipients):
        for queue in reviewer_queue_pages(reviewer=users[user_id], page_size=1):
            left = queue.total - queue.completed
            if left <= 0 or (user_id, queue.pool_id) not in waiting:
                continue
            out.append(Pending(
                user_id=user_id, email=recipients[user_id], kind=REMINDER, key=f"{queue.pool_id}:{period}",
                subject=f"{left} item{'s' if left != 1 else ''} still to review: {queue.title}",
                body=(f"{left} of your {queue.total} items in \"{queue.title}\" are still open "
                      f"({queue.completed} complete).\n\nYour queue: {_link('/review/workspace/')}\n\n"
                      f"Turn these emails off: {_link('/accounts/notifications/')}\n")))
    return out


def _managers() -> list[int]:
    codename = MANAGE_REVIEWS.split(".")[1]
    users = get_user_model().objects.filter(is_active=True).exclude(email="").filter(
        Q(is_superuser=True) | Q(groups__permissions__codename=codename)
        | Q(user_permissions__codename=codename)).distinct()
    return [user.pk for user in users if user.has_perm(MANAGE_REVIEWS)]


def _adjudication_notices(now: datetime) -> list[Pending]:
    managers = _recipients(_managers(), ADJUDICATION)
    if not managers:
        return []
    out = []
    for pool in notice_pools(multi_reviewer=True):
        waiting = pool_open_disagreement_count(public_id=pool.public_id)
        if not waiting:
            continue
        for user_id, email in sorted(managers.items()):
            out.append(Pending(
                user_id=user_id, email=email, kind=ADJUDICATION, key=f"{pool.public_id}:{now.date().isoformat()}",
                subject=f"{waiting} disagreement{'s' if waiting != 1 else ''} wait for adjudication: {pool.name}",
                body=(f"{waiting} item{'s' if waiting != 1 else ''} of \"{pool.name}\" "
                      f"{'have' if waiting != 1 else 'has'} completed grades that disagree.\n\n"
                      f"Adjudicate: {_link(f'/review/agreement/{pool.public_id}/disagreements/next/')}\n\n"
                      f"Turn these emails off: {_link('/accounts/notifications/')}\n")))
    return out


def notices_due(*, now: datetime | None = None) -> list[Pending]:
    """Every notice due now and not yet decided (reads only)."""
    now = now or timezone.now()
    due = [*_assignment_notices(), *_reminder_notices(now), *_adjudication_notices(now)]
    decided = set(Notice.objects.filter(key__in={p.key for p in due}).values_list("user_id", "kind", "key"))
    return [p for p in due if (p.user_id, p.kind, p.key) not in decided]


def notices_send(*, now: datetime | None = None, dry_run: bool = False) -> SendReport:
    """Decide and send every notice due; see the module's docstring for what happens when two senders run."""
    report = SendReport()
    for pending in notices_due(now=now):
        report.pending.append(pending)
        if dry_run:
            continue
        try:
            with transaction.atomic():
                notice = Notice.objects.create(user_id=pending.user_id, kind=pending.kind, key=pending.key,
                                               upto=pending.upto, subject=pending.subject[:200])
        except IntegrityError:
            report.skipped += 1
            continue
        try:
            send_mail(pending.subject, pending.body, None, [pending.email], fail_silently=False)
            report.sent += 1
        except Exception as error:  # the mail server's refusal, whatever its class: recorded, not retried
            Notice.objects.filter(pk=notice.pk).update(status=Notice.Status.FAILED, error=str(error)[:2000])
            report.failed += 1
    return report
