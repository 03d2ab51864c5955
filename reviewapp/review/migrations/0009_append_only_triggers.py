"""Judgment revisions, rulings, published guidelines, known answers and the account audit log refuse UPDATE and
DELETE in the database itself (triggers; see reviewapp.core.records.append_only)."""

from django.db import migrations

from reviewapp.core.records.append_only import append_only_triggers


class Migration(migrations.Migration):
    dependencies = [("reviewapp", "0008_revision_signin_method_invitations")]

    operations = [
        append_only_triggers("reviewapp_judgmentrevision", message="judgment revisions are append-only"),
        append_only_triggers("reviewapp_adjudication", message="rulings are append-only"),
        append_only_triggers("reviewapp_poolguidelines", message="guidelines versions are append-only"),
        append_only_triggers("reviewapp_knownanswer", message="known answers are append-only"),
        append_only_triggers("reviewapp_accountaudit", message="the account audit log is append-only"),
    ]
