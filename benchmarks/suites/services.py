"""Writes of suites: validate a suite file and freeze it against the pinned corpus snapshots; write, freeze and
re-version suite drafts (the workbench). A draft freezes through ``suite_import``, the service of the command."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from benchmarks.corpus.models import Provision, SourceSnapshot
from benchmarks.corpus.selectors import corpus_citation_pattern, corpus_codes, corpus_current_snapshots
from benchmarks.suites import workbench
from benchmarks.suites.files import SuiteInvalid, SuiteProblem, suite_load, suite_normalise
from benchmarks.suites.models import NominatedTarget, QueryFamily, Suite, SuiteDraft, SuiteQuery
from reviewapp.core.records.hashing import canonical_json, sha256_hex, sha256_json

# --------------------------------------------------------------------------- suites


def suite_import(
    *, raw: bytes, filename: str = "", frozen_by: str = "", confirmations_made_here: bool = False
) -> tuple[Suite, bool]:
    """Validate and freeze a suite file. The same definition again is a no-op; a different one
    under an existing name and version is refused (make a new version).

    A file's ``confirmed_by`` is kept as a claim (``claimed_confirmed_by``; the target stays provisional):
    only the confirmation service, whose confirmations lawyers made in this install, passes
    ``confirmations_made_here``. A file identical to a suite this install froze (e.g. its own export) is
    that suite.

    A refusal names the file, each query and the reason (SuiteInvalid)."""
    try:
        return _suite_import(raw=raw, filename=filename, frozen_by=frozen_by, trusted=confirmations_made_here)
    except SuiteInvalid as exc:
        raise exc.with_filename(Path(filename).name if filename else "") from None


def _pinned_snapshots(corpus: Any) -> list[SourceSnapshot]:
    snapshots = corpus_current_snapshots(corpus=corpus) if isinstance(corpus, str) else []
    if isinstance(corpus, str) and not snapshots:
        raise SuiteInvalid([SuiteProblem("suite", "corpus", f"no snapshots of corpus {corpus!r} imported yet")])
    return snapshots


def _code_of(data: dict[str, Any]) -> dict[str, Any]:
    """The codes a suite may name, and how its own code's citations are read (a code imported from a file)."""
    corpus = data.get("corpus")
    return {"corpora": [code for code, _ in corpus_codes()],
            "code": corpus_citation_pattern(corpus=corpus) if isinstance(corpus, str) else None}


def _version_conflict(definition: dict[str, Any], digest: str) -> tuple[Suite | None, SuiteProblem | None]:
    """The suite frozen under this name and version, and the refusal when it differs from ``definition``."""
    existing = Suite.objects.filter(name=definition["name"], version=definition["version"]).first()
    if existing is None or existing.sha256 == digest:
        return existing, None
    return existing, SuiteProblem(
        "suite", "version",
        f"{existing} is frozen with sha256 {existing.sha256[:12]}…; this file differs "
        f"({digest[:12]}…). Frozen suites are never edited: give the changed suite a new version.",
    )


def suite_check(*, data: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """What ``suite_import`` would freeze from ``data`` (a loaded suite file): its normalised definition and
    sha256. Writes nothing; raises SuiteInvalid with every problem import would refuse it for."""
    snapshots = _pinned_snapshots(data.get("corpus"))
    known = set(Provision.objects.filter(snapshot__in=snapshots).values_list("citation", flat=True))
    definition = suite_normalise(data, known_citations=known, **_code_of(data))
    digest = sha256_hex(canonical_json(definition))
    _, conflict = _version_conflict(definition, digest)
    if conflict is not None:
        raise SuiteInvalid([conflict])
    return definition, digest


def _frozen_here(data: dict[str, Any], known: set[str]) -> Suite | None:
    """The suite this install froze from exactly this file, its confirmations included, if there is one."""
    try:
        as_frozen = suite_normalise(data, known_citations=known, trust_confirmations=True, **_code_of(data))
    except SuiteInvalid:
        return None
    return Suite.objects.filter(name=as_frozen["name"], version=as_frozen["version"],
                                sha256=sha256_hex(canonical_json(as_frozen))).first()


def _suite_import(*, raw: bytes, filename: str, frozen_by: str, trusted: bool) -> tuple[Suite, bool]:
    data = suite_load(raw, filename=filename)
    snapshots = _pinned_snapshots(data.get("corpus"))
    provisions = Provision.objects.filter(snapshot__in=snapshots).order_by("citation", "variant", "id")
    by_citation: dict[str, Provision] = {}
    for provision in provisions:
        by_citation.setdefault(provision.citation, provision)
    if not trusted and (same := _frozen_here(data, set(by_citation))) is not None:
        return same, False
    definition = suite_normalise(data, known_citations=set(by_citation), trust_confirmations=trusted,
                                 **_code_of(data))
    digest = sha256_hex(canonical_json(definition))
    existing, conflict = _version_conflict(definition, digest)
    if conflict is not None:
        raise SuiteInvalid([conflict])
    if existing is not None:
        return existing, False
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
                                provisional=t["provisional"], nominated_by=t["nominated_by"], note=t["note"],
                                confirmed_by=t.get("confirmed_by"),
                                claimed_confirmed_by=t.get("claimed_confirmed_by"))
                for t in q["targets"]
            ])
    return suite, True


def _family_split(definition: dict[str, Any], family: str) -> str:
    return next((q["split"] for q in definition["queries"] if q["family"] == family and q["split"]), "")


# --------------------------------------------------------------------------- drafts (the workbench)


class DraftRefused(ValueError):
    """An edit, a freeze or a new version that cannot be made; the message says why."""


def _next_version(name: str) -> int:
    latest = Suite.objects.filter(name=name).aggregate(latest=Max("version"))["latest"]
    return (latest or 0) + 1


def suite_draft_create(*, owner: Any, name: str, corpus: str) -> SuiteDraft:
    """An empty draft; its version follows the latest frozen suite of that name, so it can be frozen."""
    name = name.strip()
    document = {
        "name": name, "version": _next_version(name) if name else 1, "corpus": corpus, "description": "",
        # Whoever writes the draft nominates its targets unless a target says otherwise.
        "nominated_by": owner.get_username(), "families": [], "queries": [],
    }
    return SuiteDraft.objects.create(document=document, owner=owner)


def _locked_open_draft(draft: SuiteDraft) -> SuiteDraft:
    locked = SuiteDraft.objects.select_for_update().get(pk=draft.pk)
    if locked.is_frozen:
        raise DraftRefused(f"draft #{locked.pk} is frozen as {locked.frozen_suite} and is read-only; "
                           "start a new version from the suite's page")
    return locked


def suite_draft_edit(*, draft: SuiteDraft, edit: Callable[[dict[str, Any]], None]) -> SuiteDraft:
    """Apply ``edit`` (a workbench operation, which may raise DraftEditError) to an open draft's document.

    The row is locked for the edit, so two people saving at once do not lose each other's change."""
    with transaction.atomic():
        locked = _locked_open_draft(draft)
        document = copy.deepcopy(locked.document)
        edit(document)
        locked.document = document
        locked.save(update_fields=["document", "updated_at"])
    return locked


@dataclass(frozen=True)
class DraftCheck:
    """The live check of a draft: every problem freezing it now would be refused for (the same checks as
    ``import_suite``), or none and the sha256 the frozen suite would have."""

    problems: list[SuiteProblem]
    sha256: str = ""
    # Not problems: what the splits' query families will support (no interval, few units), in words.
    warnings: tuple[str, ...] = ()

    @property
    def ready(self) -> bool:
        return not self.problems


def suite_draft_check(*, draft: SuiteDraft) -> DraftCheck:
    document = draft.document if isinstance(draft.document, dict) else {}
    warnings = tuple(workbench.split_unit_warnings(document))
    try:
        _, digest = suite_check(data=document)
    except SuiteInvalid as exc:
        return DraftCheck(list(exc.problems), warnings=warnings)
    return DraftCheck([], digest, warnings)


def suite_draft_freeze(*, draft: SuiteDraft, user: Any) -> Suite:
    """Freeze the draft through ``suite_import`` (the same canonical JSON and sha256 as importing the document as a
    file), then make it read-only, pointing at the suite. Raises SuiteInvalid (nothing written) or DraftRefused."""
    with transaction.atomic():
        locked = _locked_open_draft(draft)
        suite, _ = suite_import(raw=canonical_json(locked.document), filename=f"workbench-draft-{locked.pk}.json",
                                frozen_by=user.get_username())
        locked.frozen_suite, locked.frozen_at = suite, timezone.now()
        locked.save(update_fields=["frozen_suite", "frozen_at", "updated_at"])
    return suite


def suite_draft_from_file(*, owner: Any, raw: bytes, filename: str) -> SuiteDraft:
    """A draft holding a suite file (JSON, or YAML for .yaml/.yml) as written, read by ``suite_load`` as
    ``import_suite`` reads it: a file that cannot be read is refused with the same SuiteInvalid, naming it; a
    readable one becomes a draft whose live check lists the problems ``import_suite`` would refuse it for."""
    try:
        data = suite_load(raw, filename=filename)
    except SuiteInvalid as exc:
        raise exc.with_filename(Path(filename).name) from None
    return SuiteDraft.objects.create(document=data, owner=owner)


def suite_draft_new_version(*, suite: Suite, owner: Any) -> tuple[SuiteDraft, bool]:
    """A draft copy of a frozen suite's definition under the next free version of its name.

    An open draft already based on this suite is returned instead of a second one (created False)."""
    with transaction.atomic():
        Suite.objects.select_for_update().filter(pk=suite.pk).first()  # one new-version draft at a time
        existing = SuiteDraft.objects.filter(based_on=suite, frozen_suite__isnull=True).order_by("id").first()
        if existing is not None:
            return existing, False
        document = json.loads(suite.definition)
        document["version"] = _next_version(suite.name)
        return SuiteDraft.objects.create(document=document, owner=owner, based_on=suite), True
