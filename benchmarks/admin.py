"""Read-only admin: these rows are evidence and are never edited by hand."""

from django.contrib import admin

from benchmarks.corpus.models import Provision, SourceSnapshot
from benchmarks.retrieval.models import RetrievalRun
from benchmarks.suites.models import Suite


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(SourceSnapshot)
class SourceSnapshotAdmin(ReadOnly):
    list_display = ["corpus", "source_key", "sha256", "provision_count", "retrieved_at", "parser_name"]
    list_filter = ["corpus"]
    exclude = ["raw"]


@admin.register(Provision)
class ProvisionAdmin(ReadOnly):
    list_display = ["citation", "variant", "heading", "repealed", "snapshot"]
    list_filter = ["corpus", "repealed"]
    search_fields = ["citation", "heading"]


@admin.register(Suite)
class SuiteAdmin(ReadOnly):
    list_display = ["name", "version", "corpus", "sha256", "frozen_at"]


@admin.register(RetrievalRun)
class RetrievalRunAdmin(ReadOnly):
    list_display = ["id", "suite", "engine", "configuration", "k", "status", "started_at"]
