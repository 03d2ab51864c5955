import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('reviewapp', '0004_accounts_audit_tokens_synthetic'),
    ]

    operations = [
        migrations.CreateModel(
            name='AssignmentSkip',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('skipped_at', models.DateTimeField(auto_now_add=True)),
                ('assignment', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='skip',
                                                    to='reviewapp.assignment')),
            ],
        ),
    ]
