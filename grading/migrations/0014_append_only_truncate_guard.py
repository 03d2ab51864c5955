"""Contract texts, clause taxonomies and gold sets refuse TRUNCATE in the database
itself: on PostgreSQL a statement trigger, because row triggers do not fire on TRUNCATE.

See reviewapp.core.records.append_only; SQLite has no TRUNCATE, so there this migration does nothing."""

from django.db import migrations

from reviewapp.core.records.append_only import append_only_truncate_guards


class Migration(migrations.Migration):
    dependencies = [("grading", "0013_dataset_origin")]

    operations = [
        append_only_truncate_guards({
            "grading_contracttext": "contract texts are append-only",
            "grading_clausetaxonomy": "clause taxonomies are append-only",
            "grading_goldset": "gold sets are append-only",
        }),
    ]
