"""Tables every part of the product shares: the role-permission holder and worker heartbeats.

They keep the ``reviewapp`` app label (and so their table names and the content type that the
role permissions hang on) from before the project package was split into core and review.
"""

from __future__ import annotations

from django.db import models


class Access(models.Model):
    """Holder of the role permissions; groups in the data migration hold them."""

    class Meta:
        app_label = "reviewapp"
        managed = False
        default_permissions = ()
        permissions = [
            ("grade_passages", "Can grade passages blind"),
            ("view_reports", "Can read reports, calibration pages and scorecards"),
            ("launch_runs", "Can launch benchmark, extraction and audit runs"),
            ("manage_reviews", "Can declare review pools, assign and adjudicate"),
        ]

    def __str__(self) -> str:
        return "role permissions"


class WorkerHeartbeat(models.Model):
    """Written by the ``worker_ping`` task: proof that a worker consumed the queue."""

    token = models.CharField(max_length=64, unique=True)
    hostname = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "reviewapp"

    def __str__(self) -> str:
        return f"{self.token} by {self.hostname}"
