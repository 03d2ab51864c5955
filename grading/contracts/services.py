"""Importing a firm's contracts into a set, and publishing the set's clause taxonomy.

Each file is imported in its own transaction: a refused file (named, with its reason) never stops the rest of a
batch, and nothing of a refused file is written. A text already stored (same sha256 of its UTF-8 bytes) is linked,
never stored twice; the same text twice in one set is reported as a duplicate and stores nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from grading.contracts.extract import DocumentRefused, ReadBounds, extract
from grading.contracts.kinds import CONTRACT_CLAUSE_KIND_KEY
from grading.contracts.models import ClauseTaxonomy, ContractExclusion, ContractSet, ContractText, SetContract
from grading.dataset.cuad_file import read_category_csv
from grading.dataset.selectors import dataset_categories, dataset_current
from reviewapp.core.records.hashing import sha256_hex, sha256_json
from reviewapp.review.pools.refs import PoolRef
from reviewapp.review.pools.selectors import pool_find

NAME_MAX = 100
REASON_MAX = 2000


class TaxonomyError(ValueError):
    """A taxonomy that cannot be published; the message names the row and the field."""


class ExclusionError(ValueError):
    """A contract that cannot be excluded (no reason given, already excluded, or already being labelled)."""


@dataclass(frozen=True)
class ImportOutcome:
    filename: str
    status: str  # imported | duplicate | refused
    detail: str
    contract: SetContract | None = None

    @property
    def line(self) -> str:
        return f"{self.filename}: {self.detail}"


def contract_set_get_or_create(*, name: str, user: Any = None, description: str = "") -> tuple[ContractSet, bool]:
    """The set called ``name``, created (with CUAD's taxonomy as version 1 when CUAD's categories are known)."""
    name = " ".join(name.split())
    if not name or len(name) > NAME_MAX:
        raise ValueError(f"set name: 1 to {NAME_MAX} characters, got {len(name)}")
    with transaction.atomic():
        contract_set, created = ContractSet.objects.get_or_create(
            name=name, defaults={"description": description, "created_by": user if _is_user(user) else None})
        if created:
            categories = cuad_categories()
            if categories:
                taxonomy_publish(contract_set=contract_set, user_name=_name(user),
                                 note="CUAD's 41 categories and descriptions (the default)",
                                 categories=[{"name": c["name"], "description": c["description"],
                                              "cuad_name": c["name"]} for c in categories])
    return contract_set, created


def _is_user(user: Any) -> bool:
    return bool(getattr(user, "is_authenticated", False))


def _name(user: Any) -> str:
    if _is_user(user):
        return str(user.get_username())
    return str(user or "command line")


def contract_import(*, contract_set: ContractSet, filename: str, data: bytes, user: Any = None) -> ImportOutcome:
    """Import one file into the set; the outcome says what happened in words."""
    filename = Path(filename).name or "(unnamed)"
    try:
        extracted = extract(filename, data, max_bytes=settings.CONTRACT_MAX_BYTES,
                            max_units=settings.CONTRACT_MAX_UNITS, bounds=read_bounds())
    except DocumentRefused as exc:
        return ImportOutcome(filename, "refused", str(exc))
    sha256 = sha256_hex(extracted.text)
    with transaction.atomic():
        text, stored = _text_get_or_create(sha256=sha256, extracted=extracted)
        held = (SetContract.objects.filter(contract_set=contract_set, text=text)
                .only("title", "imported_at").first())
        if held is not None:
            return ImportOutcome(filename, "duplicate", f"the same text is already in this set as {held.title!r} "
                                 f"(imported {held.imported_at:%Y-%m-%d}); nothing stored", held)
        title = _free_title(contract_set, Path(filename).stem[:240] or "contract")
        try:
            with transaction.atomic():
                member = SetContract.objects.create(
                    contract_set=contract_set, text=text, title=title, filename=filename[:255],
                    source_sha256=sha256_hex(data), source_bytes=len(data), imported_by=_name(user))
        except IntegrityError:  # the same text imported into this set at the same moment by another request
            held = SetContract.objects.get(contract_set=contract_set, text=text)
            return ImportOutcome(filename, "duplicate", f"the same text is already in this set as {held.title!r}; "
                                 "nothing stored", held)
    unit = extracted.unit_name
    how = "new text" if stored else "text already stored for another set: linked, not stored again"
    return ImportOutcome(filename, "imported", f"imported as {title!r} ({extracted.units} {unit}s, "
                         f"{len(extracted.text):,} characters; {how})", member)


def read_bounds() -> ReadBounds:
    """What reading one PDF or DOCX may cost, from the settings."""
    return ReadBounds(seconds=settings.CONTRACT_READ_SECONDS, memory_mb=settings.CONTRACT_READ_MEMORY_MB,
                      docx_inflated_bytes=settings.CONTRACT_DOCX_MAX_INFLATED_BYTES,
                      docx_ratio=settings.CONTRACT_DOCX_MAX_RATIO)


def contracts_import(*, contract_set: ContractSet, files: Iterable[tuple[str, bytes]],
                     user: Any = None) -> list[ImportOutcome]:
    """Each file's outcome, in order. Files not yet begun when the batch has used CONTRACT_BATCH_SECONDS are
    named as not read (nothing of them stored), so that one request ends within the web server's timeout."""
    deadline = time.monotonic() + settings.CONTRACT_BATCH_SECONDS
    outcomes = []
    for name, data in files:
        if time.monotonic() >= deadline:
            outcomes.append(ImportOutcome(Path(name).name or "(unnamed)", "refused",
                                          f"not read: this batch used its {settings.CONTRACT_BATCH_SECONDS} s "
                                          "(setting CONTRACT_BATCH_SECONDS); nothing stored, upload it again"))
            continue
        outcomes.append(contract_import(contract_set=contract_set, filename=name, data=data, user=user))
    return outcomes


def contract_labelling_pools(*, member: SetContract) -> list[PoolRef]:
    """The clause labelling pools that hold this contract (``clause_pool_declare`` records their titles)."""
    pools = pool_find(external_ref={"contract_set": member.contract_set_id}, kind=CONTRACT_CLAUSE_KIND_KEY)
    return [pool for pool in pools if member.title in (pool.declared_params or {}).get("titles", [])]


def contract_exclude(*, member: SetContract, reason: str, user: Any = None) -> ContractExclusion:
    """Take a contract back out of its set, recording why and by whom; refused once it is in a labelling pool.

    Labelling starts by declaring a pool of the set's contracts (and assigning its lawyers in the same
    transaction), so a contract in a pool has labels under way that name its text: from then on it stays. The
    set's row is locked, as ``clause_pool_declare`` locks it, so an exclusion and a labelling start never cross.
    """
    reason = " ".join(str(reason or "").split())
    if not reason:
        raise ExclusionError("give a reason: say why this file is taken back (it is recorded with the exclusion)")
    if len(reason) > REASON_MAX:
        raise ExclusionError(f"reason: at most {REASON_MAX} characters, got {len(reason)}")
    with transaction.atomic():
        ContractSet.objects.select_for_update().filter(pk=member.contract_set_id).first()
        if ContractExclusion.objects.filter(member=member).exists():
            raise ExclusionError(f"{member.title!r} is already excluded from this set")
        pools = contract_labelling_pools(member=member)
        if pools:
            names = ", ".join(repr(pool.name) for pool in pools)
            raise ExclusionError(f"{member.title!r} is in labelling pool {names}: its labelling has started, so it "
                                 "stays in the set (its exclusion would leave labels about a text nobody counts)")
        return ContractExclusion.objects.create(member=member, reason=reason, excluded_by=_name(user)[:150])


def _text_get_or_create(*, sha256: str, extracted: Any) -> tuple[ContractText, bool]:
    existing = ContractText.objects.filter(sha256=sha256).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            row = ContractText.objects.create(
                sha256=sha256, text=extracted.text, length=len(extracted.text), kind=extracted.kind,
                units=extracted.units, locations=[list(pair) for pair in extracted.locations])
        return row, True
    except IntegrityError:  # stored by a concurrent import of the same text
        return ContractText.objects.get(sha256=sha256), False


def _free_title(contract_set: ContractSet, stem: str) -> str:
    taken = set(SetContract.objects.filter(contract_set=contract_set, title__startswith=stem)
                .values_list("title", flat=True))
    if stem not in taken:
        return stem
    n = 2
    while f"{stem} ({n})" in taken:
        n += 1
    return f"{stem} ({n})"


def cuad_categories() -> list[dict[str, str]]:
    """CUAD's categories with their published descriptions: as loaded (load_cuad), else from DATA_DIR's CSV."""
    dataset = dataset_current()
    if dataset is not None:
        return [{"name": c.name, "description": c.description} for c in dataset_categories(dataset=dataset)]

    path = Path(settings.DATA_DIR) / "cuad" / "category_descriptions.csv"
    if not path.is_file():
        return []
    return [{"name": info.name, "description": info.description} for info in read_category_csv(path).values()]


def taxonomy_current(contract_set: ContractSet) -> ClauseTaxonomy | None:
    return contract_set.taxonomies.order_by("-version").first()


def taxonomy_publish(*, contract_set: ContractSet, categories: list[dict[str, Any]], user_name: str,
                     note: str = "") -> ClauseTaxonomy:
    """A new taxonomy version (or the current one when nothing changed). Rows: name, description, cuad_name.

    ``cuad_name`` ties a row to CUAD's category it comes from (kept when renamed); the origin stored is computed
    here: "cuad" when name and description are CUAD's own, "cuad:<name>" when changed, "firm" when added.
    """
    cuad = {c["name"]: c["description"] for c in cuad_categories()}
    rows: list[dict[str, str]] = []
    seen: dict[str, int] = {}
    if not isinstance(categories, list) or not categories:
        raise TaxonomyError("categories: a taxonomy needs at least one category")
    for index, raw in enumerate(categories, start=1):
        where = f"category {index}"
        if not isinstance(raw, dict):
            raise TaxonomyError(f"{where}: expected an object with name, description and cuad_name")
        unknown = set(raw) - {"name", "description", "cuad_name"}
        if unknown:
            raise TaxonomyError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        name = " ".join(str(raw.get("name") or "").split())
        description = str(raw.get("description") or "").strip()
        cuad_name = str(raw.get("cuad_name") or "").strip()
        if not name or len(name) > NAME_MAX:
            raise TaxonomyError(f"{where}: name must be 1 to {NAME_MAX} characters")
        if name.casefold() in seen:
            raise TaxonomyError(f"{where}: name {name!r} is also category {seen[name.casefold()]}")
        seen[name.casefold()] = index
        if cuad_name and cuad_name not in cuad:
            raise TaxonomyError(f"{where}: cuad_name {cuad_name!r} is not one of CUAD's categories")
        if cuad_name:
            origin = "cuad" if (name == cuad_name and description == cuad[cuad_name]) else f"cuad:{cuad_name}"
        else:
            origin = "firm"
            if not description:
                raise TaxonomyError(f"{where}: a category the firm adds needs a description (what a lawyer "
                                    "highlights for it)")
        rows.append({"name": name, "description": description, "origin": origin})
    sha256 = sha256_json(rows)
    with transaction.atomic():
        ContractSet.objects.select_for_update().filter(pk=contract_set.pk).first()  # one version number at a time
        current = taxonomy_current(contract_set)
        if current is not None and current.sha256 == sha256:
            return current
        version = 1 if current is None else current.version + 1
        return ClauseTaxonomy.objects.create(contract_set=contract_set, version=version, categories=rows,
                                             sha256=sha256, note=note[:2000], created_by=user_name[:150])
