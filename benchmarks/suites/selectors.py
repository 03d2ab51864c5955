"""Reads of frozen suites."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, QuerySet

from benchmarks.suites.models import QueryKind, Suite, SuiteQuery


def suite_list() -> QuerySet[Suite]:
    return Suite.objects.annotate(n_queries=Count("queries")).order_by("name", "-version")


def suite_latest(*, name: str) -> Suite | None:
    """``name`` or ``name@version``."""
    if "@" in name:
        base, _, version = name.partition("@")
        return Suite.objects.filter(name=base, version=int(version)).first() if version.isdigit() else None
    return Suite.objects.filter(name=name).order_by("-version").first()


@dataclass
class SuiteGroup:
    label: str
    split: str
    kind: str
    families: dict[str, list[SuiteQuery]] = field(default_factory=dict)


def suite_detail(*, suite: Suite) -> list[SuiteGroup]:
    """Queries grouped: dev and held-out ranking queries by family, then each control kind."""
    groups = [
        SuiteGroup("Development ranking queries", "dev", QueryKind.RANKING),
        SuiteGroup("Held-out ranking queries", "heldout", QueryKind.RANKING),
        SuiteGroup("Outside-corpus controls", "", QueryKind.OUTSIDE_CORPUS),
        SuiteGroup("Exact-citation controls", "", QueryKind.EXACT_CITATION),
    ]
    queries = suite.queries.select_related("family", "expected_provision").prefetch_related("targets").order_by(
        "position")
    for query in queries:
        for group in groups:
            if query.kind == group.kind and (group.kind != QueryKind.RANKING or query.split == group.split):
                key = query.family.name if query.family else ""
                group.families.setdefault(key, []).append(query)
    return groups
