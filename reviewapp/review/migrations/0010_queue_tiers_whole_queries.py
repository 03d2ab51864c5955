"""Pools declared under the fewest-judgment work order keep tiers that split queries: the passages most systems
ranked first came first in every reviewer's queue. Give every item of such a pool its query's tier, queries in a
keyed shuffle of their ids (the rule ``benchmarks.labels.pooling.query_tiers`` now applies at declaration), so
open queues become blind too. Pools whose tiers are already whole queries are left alone."""

import hashlib

from django.db import migrations


def whole_query_tiers(apps, schema_editor):
    ReviewItem = apps.get_model("reviewapp", "ReviewItem")
    ReviewPool = apps.get_model("reviewapp", "ReviewPool")
    for pool in ReviewPool.objects.filter(items__priority__gt=0).distinct().iterator():
        tiers: dict[str, set[int]] = {}
        for query_id, priority in ReviewItem.objects.filter(pool=pool).values_list("query_id", "priority"):
            tiers.setdefault(query_id, set()).add(priority)
        if all(len(found) == 1 for found in tiers.values()):
            continue

        def key(query_id: str, seed: str = pool.public_id) -> tuple[str, str]:
            return hashlib.sha256(f"queue-order:{seed}:{query_id}".encode()).hexdigest(), query_id

        for n, query_id in enumerate(sorted(tiers, key=key), start=1):
            ReviewItem.objects.filter(pool=pool, query_id=query_id).update(priority=n)


class Migration(migrations.Migration):
    dependencies = [
        ("reviewapp", "0009_append_only_triggers"),
    ]

    operations = [
        migrations.RunPython(whole_query_tiers, migrations.RunPython.noop),
    ]
