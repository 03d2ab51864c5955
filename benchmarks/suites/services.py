"""Writes of suites: validate a suite file and freeze it against the pinned corpus snapshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from benchmarks.corpus.models import Provision
from benchmarks.corpus.selectors import corpus_current_snapshots
from benchmarks.suites.files import SuiteInvalid, SuiteProblem, suite_load, suite_normalise
from benchmarks.suites.models import NominatedTarget, QueryFamily, Suite, SuiteQuery
from reviewapp.core.hashing import canonical_json, sha256_hex, sha256_json

# --------------------------------------------------------------------------- suites


def suite_import(*, raw: bytes, filename: str = "", frozen_by: str = "") -> tuple[Suite, bool]:
    """Validate and freeze a suite file. The same definition again is a no-op; a different one
    under an existing name and version is refused (make a new version).

    A refusal names the file, each query and the reason (SuiteInvalid)."""
    try:
        return _suite_import(raw=raw, filename=filename, frozen_by=frozen_by)
    except SuiteInvalid as exc:
        raise exc.with_filename(Path(filename).name if filename else "") from None


def _suite_import(*, raw: bytes, filename: str, frozen_by: str) -> tuple[Suite, bool]:
    data = suite_load(raw, filename=filename)
    corpus = data.get("corpus")
    snapshots = corpus_current_snapshots(corpus=corpus) if isinstance(corpus, str) else []
    if isinstance(corpus, str) and not snapshots:
        raise SuiteInvalid([SuiteProblem("suite", "corpus", f"no snapshots of corpus {corpus!r} imported yet")])
    provisions = Provision.objects.filter(snapshot__in=snapshots).order_by("citation", "variant", "id")
    by_citation: dict[str, Provision] = {}
    for provision in provisions:
        by_citation.setdefault(provision.citation, provision)
    definition = suite_normalise(data, known_citations=set(by_citation))
    digest = sha256_hex(canonical_json(definition))
    existing = Suite.objects.filter(name=definition["name"], version=definition["version"]).first()
    if existing is not None:
        if existing.sha256 == digest:
            return existing, False
        raise SuiteInvalid([SuiteProblem(
            "suite", "version",
            f"{existing} is frozen with sha256 {existing.sha256[:12]}…; this file differs "
            f"({digest[:12]}…). Frozen suites are never edited: give the changed suite a new version.",
        )])
    with transaction.atomic():
        suite = Suite.objects.create(
            name=definition["name"], version=definition["version"], corpus=definition["corpus"],
            description=definition["description"], definition=canonical_json(definition).decode("utf-8"),
            sha256=digest, sources_sha256=sha256_json(sorted(s.sha256 for s in snapshots)),
            source_filename=Path(filename).name if filename else "", frozen_at=timezone.now(),
            frozen_by=frozen_by,
        )
        suite.snapshots.set(snapshots)
        families = {
            f["id"]: QueryFamily.objects.create(suite=suite, name=f["id"], description=f["description"],
                                                split=f["split"] or _family_split(definition, f["id"]))
            for f in definition["families"]
        }
        for position, q in enumerate(definition["queries"]):
            query = SuiteQuery.objects.create(
                suite=suite, qid=q["id"], text=q["text"], kind=q["kind"], split=q["split"],
                family=families.get(q["family"]), expected_citation=q["expected_citation"],
                expected_provision=by_citation.get(q["expected_citation"]) if q["expected_citation"] else None,
                position=position, text_sha256=sha256_json({"id": q["id"], "text": q["text"]}),
            )
            NominatedTarget.objects.bulk_create([
                NominatedTarget(query=query, citation=t["citation"], provision=by_citation[t["citation"]],
                                provisional=t["provisional"], nominated_by=t["nominated_by"], note=t["note"])
                for t in q["targets"]
            ])
    return suite, True


def _family_split(definition: dict[str, Any], family: str) -> str:
    return next((q["split"] for q in definition["queries"] if q["family"] == family and q["split"]), "")
