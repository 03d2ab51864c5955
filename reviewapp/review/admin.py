"""Django admin for the review models: browsing only for judgments (append-only by design)."""

from __future__ import annotations

from django.contrib import admin

from reviewapp.review.agreement.models import Adjudication
from reviewapp.review.assignment.models import Assignment
from reviewapp.review.exchange.models import ImportedLabel, LabelSource
from reviewapp.review.judgments.models import Judgment, JudgmentRevision, ReviewItem
from reviewapp.review.pools.models import POOL_FROZEN_FIELDS, ReviewPool


class ReadOnlyAdmin(admin.ModelAdmin):
    """Revisions, adjudications and labels are append-only: the admin may look, never edit."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ReviewPool)
class ReviewPoolAdmin(admin.ModelAdmin):
    """Names and reviewer-facing texts stay editable; what decides labels is frozen once a judgment exists."""

    list_display = ("name", "kind", "reviewers_per_item", "created_at")
    readonly_fields = ("public_id", "kind", "declared_rule", "declared_params", "external_ref", "created_at")

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and obj.is_judged():
            fields += [field for field in POOL_FROZEN_FIELDS if field not in fields]
        return fields

    def has_delete_permission(self, request, obj=None) -> bool:
        # Deleting a judged pool would delete its judgments (labels are append-only).
        if obj is not None and obj.is_judged():
            return False
        return super().has_delete_permission(request, obj)


@admin.register(ReviewItem)
class ReviewItemAdmin(ReadOnlyAdmin):
    list_display = ("public_id", "pool", "query_id", "doc_id")
    list_filter = ("pool",)
    search_fields = ("public_id", "query_id", "doc_id")


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = ("item", "reviewer", "pool", "created_at")
    list_filter = ("pool",)


@admin.register(Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = ("item", "reviewer", "revision_count", "created_at")


@admin.register(JudgmentRevision)
class JudgmentRevisionAdmin(ReadOnlyAdmin):
    list_display = ("judgment", "number", "status", "grades", "created_at")
    list_filter = ("status",)


@admin.register(Adjudication)
class AdjudicationAdmin(ReadOnlyAdmin):
    list_display = ("item", "grade_type", "value", "adjudicator", "created_at")


@admin.register(LabelSource)
class LabelSourceAdmin(admin.ModelAdmin):
    list_display = ("name", "provisional", "created_at")


@admin.register(ImportedLabel)
class ImportedLabelAdmin(ReadOnlyAdmin):
    list_display = ("source", "query_id", "doc_id", "grade_type", "value")
    list_filter = ("source",)
