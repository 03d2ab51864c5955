from django.contrib import admin

from reviewapp.providers.models import Ledger, Receipt


@admin.register(Ledger)
class LedgerAdmin(admin.ModelAdmin):
    list_display = ("id", "purpose", "provider", "model_id", "max_requests", "max_input_tokens", "stop_reason")
    readonly_fields = [f.name for f in Ledger._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(Receipt)
class ReceiptAdmin(admin.ModelAdmin):
    list_display = ("id", "ledger", "seq", "request_key", "attempt", "status", "http_status", "latency_ms")
    list_filter = ("status",)
    readonly_fields = [f.name for f in Receipt._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
