"""Reads of frozen suites (their versions, differences and exports) and of suite drafts."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, QuerySet

from benchmarks.corpus.models import Provision
from benchmarks.corpus.selectors import corpus_citation_pattern, corpus_current_snapshots, corpus_known
from benchmarks.retrieval.engines import CONFIGURATIONS, keyword_search
from benchmarks.suites.citations import citation_parse
from benchmarks.suites.diff import SuiteDiff, definition_diff
from benchmarks.suites.files import suite_dump
from benchmarks.suites.models import NominatedTarget, QueryKind, Suite, SuiteDraft, SuiteQuery


def suite_list() -> QuerySet[Suite]:
    return Suite.objects.annotate(n_queries=Count("queries")).order_by("name", "-version")


def suite_latest(*, name: str) -> Suite | None:
    """``name`` or ``name@version``."""
    if "@" in name:
        base, _, version = name.partition("@")
        return Suite.objects.filter(name=base, version=int(version)).first() if version.isdigit() else None
    return Suite.objects.filter(name=name).order_by("-version").first()


@dataclass(frozen=True)
class TargetVersions:
    """A nominated target: its citation and the docid of every version of its section in the pinned snapshots."""

    query_id: int
    qid: str
    citation: str
    docids: tuple[str, ...]


def suite_target_versions(*, suite: Suite) -> list[TargetVersions]:
    """Every nominated target of the suite, in query then nomination order, with all versions of its section.

    A section printed in two versions (NRS 1.510 and NRS 1.510~v2) is one target: a hit on either version
    is a hit, and coverage counts the citation once. Only the suite's pinned snapshots are searched, so
    importing another snapshot of the same code never adds a version.
    """
    rows = list(NominatedTarget.objects.filter(query__suite=suite).order_by("query__position", "id")
                .values_list("query_id", "query__qid", "citation", "provision__citation"))
    versions: dict[str, list[str]] = {}
    for citation, variant in (Provision.objects.filter(snapshot__in=suite.snapshots.all(),
                                                       citation__in={row[3] for row in rows})
                              .order_by("citation", "variant", "id").values_list("citation", "variant")):
        docid = Provision(citation=citation, variant=variant).docid
        if docid not in versions.setdefault(citation, []):
            versions[citation].append(docid)
    return [TargetVersions(query_id, qid, citation, tuple(versions.get(section, ())))
            for query_id, qid, citation, section in rows]


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


# --------------------------------------------------------------------------- versions and exports


def suite_previous(*, suite: Suite) -> Suite | None:
    """The frozen version of the same suite just before this one."""
    return Suite.objects.filter(name=suite.name, version__lt=suite.version).order_by("-version").first()


def suite_versions(*, suite: Suite) -> QuerySet[Suite]:
    return Suite.objects.filter(name=suite.name).order_by("version")


def suite_definition(*, suite: Suite) -> dict[str, Any]:
    return json.loads(suite.definition)


PROVISIONAL_CAVEAT = ("Nominated targets are provisional and incomplete known positives; metrics on them are not "
                      "precision or exhaustive recall.")


def suite_targets_caveat(*, suite: Suite) -> str:
    """The suite page's opening caveat, true to this version: confirmed targets are not called provisional.

    Confirmed or not, targets are incomplete known positives, so the metrics stay short of precision and
    exhaustive recall; what changes is whether lawyers stand behind the targets.
    """
    targets = NominatedTarget.objects.filter(query__suite=suite)
    total = targets.count()
    provisional = targets.filter(provisional=True).count()
    confirmed = total - provisional
    if total == 0 or confirmed == 0:
        return PROVISIONAL_CAVEAT
    tail = ("Targets are incomplete known positives: unjudged sections may be relevant too, so metrics on them are "
            "not precision or exhaustive recall.")
    if provisional == 0:
        return f"All {total} targets of this version were confirmed by lawyers. {tail}"
    return (f"{confirmed} of {total} targets of this version were confirmed by lawyers; the other {provisional} "
            f"are nominated and provisional. {tail}")


def suite_diff(*, old: Suite, new: Suite) -> SuiteDiff:
    return definition_diff(suite_definition(suite=old), suite_definition(suite=new))


def suite_export(*, suite: Suite, fmt: str) -> tuple[bytes, str, str]:
    """(file bytes, content type, file name) of the suite's definition as JSON or YAML; ``import_suite`` reads
    either back to the same definition and sha256."""
    content_type = {"json": "application/json", "yaml": "application/yaml"}.get(fmt)
    if content_type is None:
        raise ValueError(f"unknown export format {fmt!r}; expected json or yaml")
    return (suite_dump(suite_definition(suite=suite), fmt=fmt), f"{content_type}; charset=utf-8",
            f"{suite.name}-v{suite.version}.{fmt}")


# --------------------------------------------------------------------------- drafts (the workbench)


def suite_draft_list() -> QuerySet[SuiteDraft]:
    return SuiteDraft.objects.select_related("owner", "frozen_suite", "based_on").order_by("-updated_at", "-id")


@dataclass(frozen=True)
class SearchResult:
    """One provision of the corpus search, with the start of its text."""

    provision_id: int
    citation: str
    variant: int
    heading: str
    chapter: str
    repealed: bool
    snippet: str
    by_citation: bool  # found because the search text cites it, not by its words


SNIPPET_CHARS = 280


def workbench_search(*, corpus: str, text: str, limit: int = 20) -> list[SearchResult]:
    """Provisions of the corpus's current snapshots for a search box: the section the text cites, if it cites
    one, then the interactive full-text search (``keyword-v1``: every content word, then any of them)."""
    snapshots = corpus_current_snapshots(corpus=corpus) if corpus_known(corpus=corpus) else []
    snapshot_ids = [s.pk for s in snapshots]
    if not snapshot_ids or not text.strip():
        return []
    ids: list[int] = []
    cited: set[int] = set()
    parsed = citation_parse(text, default_corpus=corpus, code=corpus_citation_pattern(corpus=corpus))
    if parsed is not None and parsed.corpus == corpus:
        cited = set(Provision.objects.filter(snapshot_id__in=snapshot_ids, citation=parsed.citation)
                    .order_by("variant", "id").values_list("id", flat=True))
        ids += sorted(cited)
    outcome = keyword_search(text=text, snapshot_ids=snapshot_ids, k=limit, configuration=CONFIGURATIONS["keyword-v1"])
    ids += [hit.provision_id for hit in outcome.hits if hit.provision_id not in cited]
    ids = ids[:limit]
    rows = Provision.objects.in_bulk(ids)
    results = []
    for pk in ids:
        p = rows[pk]
        body = " ".join(p.body.split())
        snippet = body if len(body) <= SNIPPET_CHARS else body[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " …"
        results.append(SearchResult(p.pk, p.citation, p.variant, p.heading, p.chapter, p.repealed, snippet,
                                    pk in cited))
    return results


def workbench_provision(*, corpus: str, pk: int) -> Provision | None:
    """A provision of the corpus's current snapshots (the only ones a draft's targets are checked against)."""
    snapshots = corpus_current_snapshots(corpus=corpus) if corpus_known(corpus=corpus) else []
    return Provision.objects.filter(pk=pk, snapshot__in=snapshots).select_related("snapshot").first()


def provision_ids_by_citation(*, corpus: str, citations: list[str]) -> dict[str, int]:
    """Citation as written in a draft (corpus form or lawyers' form) -> the provision it names, where it names one."""
    snapshots = corpus_current_snapshots(corpus=corpus) if corpus_known(corpus=corpus) else []
    wanted: dict[str, str] = {}
    code = corpus_citation_pattern(corpus=corpus)
    for written in citations:
        parsed = citation_parse(written, default_corpus=corpus, code=code)
        wanted[written] = parsed.citation if parsed is not None and parsed.corpus == corpus else written
    found: dict[str, int] = {}
    for citation, pk in (Provision.objects.filter(snapshot__in=snapshots, citation__in=set(wanted.values()))
                         .order_by("citation", "variant", "id").values_list("citation", "id")):
        found.setdefault(citation, pk)
    return {written: found[c] for written, c in wanted.items() if c in found}
