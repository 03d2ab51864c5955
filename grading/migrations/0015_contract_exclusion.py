"""A contract taken back out of its set before labelling: an append-only record with its reason."""

import django.db.models.deletion
from django.db import migrations, models

from reviewapp.core.records.append_only import append_only_triggers


class Migration(migrations.Migration):

    dependencies = [
        ('grading', '0014_append_only_truncate_guard'),
    ]

    operations = [
        migrations.CreateModel(
            name='ContractExclusion',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('reason', models.TextField()),
                ('excluded_by', models.CharField(max_length=150)),
                ('excluded_at', models.DateTimeField(auto_now_add=True)),
                ('member', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='exclusion', to='grading.setcontract')),
            ],
            options={
                'ordering': ['id'],
            },
        ),
        append_only_triggers("grading_contractexclusion", message="contract exclusions are append-only"),
    ]
