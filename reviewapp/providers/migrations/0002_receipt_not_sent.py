from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("providers", "0001_initial"),
    ]

    operations = [
        migrations.AlterField(
            model_name="ledger",
            name="max_requests",
            field=models.PositiveIntegerField(
                help_text="requests sent, every attempt counts"
            ),
        ),
        migrations.AlterField(
            model_name="receipt",
            name="status",
            field=models.CharField(
                choices=[
                    ("sent", "sent, no answer yet"),
                    ("answered", "answered and validated"),
                    ("failed", "failed"),
                    ("unknown", "sent, answer unknown"),
                    ("not_sent", "not sent (nothing left this machine)"),
                ],
                db_index=True,
                default="sent",
                max_length=16,
            ),
        ),
    ]
