"""Budget raises and receipts refuse UPDATE and DELETE in the database itself (see reviewapp.core.records.append_only).

A receipt allows exactly one update, its completion: only while its status is still 'sent', and only of the
answer columns (the request it records stays as sent)."""

from django.db import migrations

from reviewapp.core.records.append_only import AllowedUpdate, append_only_triggers

RECEIPT_COMPLETION = AllowedUpdate(
    old_condition="OLD.status = 'sent'",
    frozen=("id", "ledger_id", "seq", "request_key", "attempt", "method", "request_url", "request_body",
            "request_bytes", "estimated_input_tokens", "sent_at"),
)


class Migration(migrations.Migration):
    dependencies = [("providers", "0003_ledger_budget_raise")]

    operations = [
        append_only_triggers("providers_budgetraise", message="budget raises are append-only"),
        append_only_triggers("providers_receipt", message="receipts are append-only (completed once, while sent)",
                             allowed=RECEIPT_COMPLETION),
    ]
