"""Reads of people: the reviewer accounts an admin manages."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import Count, Q

from reviewapp.core.auth.roles import MODEL_OUTPUT_PERMISSIONS, SYNTHETIC
from reviewapp.review.judgments.models import Judgment


@dataclass(frozen=True)
class ReviewerAccount:
    """A reviewer account as the admin's reviewer page shows it (never a password or token)."""

    pk: int
    username: str
    name: str
    active: bool
    assigned: int
    complete: int


def reviewer_accounts() -> list[ReviewerAccount]:
    """Every account in the reviewer role, active or not, with its workload. Synthetic demo accounts and accounts
    that see model output are not reviewers and are not listed."""
    User = get_user_model()

    def holds(codenames: list[str]) -> Q:
        return (Q(groups__permissions__codename__in=codenames, groups__permissions__content_type__app_label="reviewapp")
                | Q(user_permissions__codename__in=codenames,
                    user_permissions__content_type__app_label="reviewapp"))

    excluded = [perm.split(".")[1] for perm in (*MODEL_OUTPUT_PERMISSIONS, SYNTHETIC)]
    rows = (User.objects.filter(holds(["grade_passages"]), is_staff=False, is_superuser=False)
            .exclude(pk__in=User.objects.filter(holds(excluded)).values("pk")).distinct()
            .annotate(n_assigned=Count("review_assignments", distinct=True)).order_by(User.USERNAME_FIELD))
    complete = dict(Judgment.objects.filter(current__status="complete").values("reviewer_id")
                    .annotate(n=Count("id")).values_list("reviewer_id", "n"))
    return [ReviewerAccount(pk=user.pk, username=user.get_username(), name=user.get_full_name(),
                            active=user.is_active, assigned=user.n_assigned, complete=complete.get(user.pk, 0))
            for user in rows]
