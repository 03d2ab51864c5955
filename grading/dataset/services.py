"""Writes of the CUAD dataset: load CUAD_v1.json (checked span by span), draw seeded samples."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from django.db import connection, models, transaction

from grading.dataset.cuad_file import CategoryInfo, CuadFile, read_cuad, read_source
from grading.dataset.models import Category, Contract, CuadDataset, Sample, SampleContract, Span
from grading.dataset.selectors import dataset_categories, sample_candidates
from reviewapp.core.records.hashing import sha256_hex
from scoring.cuad.sampler import build_manifest, manifest_bytes, sample_contracts

BATCH = 2000


class CuadLoadError(ValueError):
    """The CUAD file cannot be loaded; ``problems`` lists each one by id."""

    def __init__(self, problems: list[str], source: str) -> None:
        self.problems = problems
        shown = "\n".join(problems[:50])
        more = f"\n... and {len(problems) - 50} more" if len(problems) > 50 else ""
        super().__init__(f"{source}: {len(problems)} span(s) do not match their contract text:\n{shown}{more}")


@dataclass(frozen=True)
class LoadResult:
    dataset: CuadDataset
    created: bool
    seconds: float


def cuad_load(*, path: Path | str) -> LoadResult:
    """Load CUAD_v1.json (or the zip holding it). Idempotent: a file already loaded (same sha256) is left as is.

    Every span is checked against its contract text first; any mismatch is an
    error naming the span, and nothing is written.
    """
    started = time.perf_counter()
    raw, name = read_source(Path(path))
    existing = CuadDataset.objects.filter(sha256=hashlib.sha256(raw).hexdigest()).first()
    if existing is not None:
        return LoadResult(existing, False, time.perf_counter() - started)
    parsed = read_cuad(path, source=(raw, name))
    dataset = _dataset_store(parsed, gold=False)
    return LoadResult(dataset, True, time.perf_counter() - started)


def dataset_load_gold(
    *,
    cuad_json: dict | bytes,
    name: str,
    contract_set_id: int | None = None,
    gold_set_version: int | None = None,
) -> CuadDataset:
    """Load a firm's frozen gold set, exported in CUAD's own layout, as a dataset of its own (origin "gold").

    Parsed and checked span by span by the same reader as CUAD_v1.json (CuadFileError / CuadLoadError, nothing
    written on error). ``name`` is what pages call it. Idempotent on the exported bytes: the same export again
    returns the stored dataset. Its sample is all its contracts, made here. It never becomes the default dataset,
    and categories it shares with CUAD (same name) keep CUAD's description and order.
    """
    raw = cuad_json if isinstance(cuad_json, bytes) else json.dumps(cuad_json, ensure_ascii=False).encode("utf-8")
    existing = CuadDataset.objects.filter(sha256=hashlib.sha256(raw).hexdigest()).first()
    if existing is not None:
        if not existing.is_gold:
            raise CuadLoadError([f"these bytes are already loaded as {existing.name}, not as a gold set"], name)
        return existing
    source_name = f"{name[:200]}.json"
    parsed = read_cuad(source_name, source=(raw, source_name), category_csv=False)
    if not parsed.contracts:
        raise CuadLoadError(["the gold set has no contract"], source_name)
    with transaction.atomic():
        dataset = _dataset_store(parsed, gold=True, label=name[:200],
                                 contract_set_id=contract_set_id, gold_set_version=gold_set_version)
        sample_create(dataset=dataset, n=dataset.n_contracts, min_per_type=0, seed=0)
    return dataset


def _dataset_store(parsed: CuadFile, *, gold: bool, label: str = "", contract_set_id: int | None = None,
                   gold_set_version: int | None = None) -> CuadDataset:
    """Store a checked file's contracts and spans as one dataset, in one transaction."""
    if parsed.mismatches:
        raise CuadLoadError(parsed.mismatches, parsed.source_name)
    with transaction.atomic():
        categories = _categories_upsert(parsed.categories, update=not gold)
        dataset = CuadDataset.objects.create(
            sha256=parsed.sha256,
            source_name=parsed.source_name,
            version=parsed.version,
            n_contracts=len(parsed.contracts),
            n_spans=parsed.n_spans,
            origin=CuadDataset.Origin.GOLD if gold else CuadDataset.Origin.CUAD,
            label=label,
            contract_set_id=contract_set_id,
            gold_set_version=gold_set_version,
        )
        dataset.categories.set(categories.values())
        rows_insert(
            Contract,
            ("dataset", "title", "position", "text", "length"),
            ((dataset.pk, c.title, i, c.text, len(c.text)) for i, c in enumerate(parsed.contracts)),
        )
        by_position = dict(Contract.objects.filter(dataset=dataset).values_list("position", "id"))
        rows_insert(
            Span,
            ("contract", "category", "qa_id", "answer_index", "start", "end", "text"),
            (
                (by_position[i], categories[s.category].pk, s.qa_id, s.answer_index, s.start, s.start + len(s.text),
                 s.text)
                for i, record in enumerate(parsed.contracts)
                for s in record.spans
            ),
        )
    return dataset


def _categories_upsert(infos: list[CategoryInfo], *, update: bool = True) -> dict[str, Category]:
    """The file's categories by name, in its order: new ones created, stored ones updated where they differ.

    With ``update`` False (a firm's gold set) stored categories are left as they are, and new ones are ordered
    after every stored one: a gold set never rewrites CUAD's descriptions or order. Two queries for a fresh
    database where one ``update_or_create`` per category took 82. The caller holds the transaction.
    """
    found = {c.name: c for c in Category.objects.filter(name__in=[info.name for info in infos])}
    offset = 0
    if not update:
        offset = (Category.objects.aggregate(top=models.Max("position"))["top"] or 0) + 1
    new: list[Category] = []
    for position, info in enumerate(infos):
        values = {"position": offset + position, "description": info.description,
                  "answer_format": info.answer_format, "group": info.group}
        category = found.get(info.name)
        if category is None:
            new.append(Category(name=info.name, **values))
        elif update and any(getattr(category, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(category, name, value)
            category.save(update_fields=list(values))
    for category in Category.objects.bulk_create(new):
        found[category.name] = category
    return {info.name: found[info.name] for info in infos}


def _column(model: type[models.Model], name: str) -> str:
    """The table column of one of ``model``'s concrete fields (a reverse relation has none)."""
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field) and field.column, f"{model.__name__}.{name} is not a column"
    return field.column


def rows_insert(model: type[models.Model], fields: tuple[str, ...], rows: Iterable[tuple]) -> None:
    """Insert rows of ``fields`` values into ``model``'s table: COPY on PostgreSQL, else BATCH rows a statement.

    Shared by the CUAD load and the run import. Why not ``bulk_create``: for CUAD's 13,823 spans it spent most
    of the load building model instances and SQL (0.5 s), and on PostgreSQL it sends the 510 contract texts
    as arrays escaped in Python (0.4 s). The driver's COPY (PostgreSQL) or one prepared INSERT run by
    executemany stores the same values in a fraction of that. The caller holds the transaction.
    """
    meta = model._meta
    quote = connection.ops.quote_name
    columns = ", ".join(quote(_column(model, name)) for name in fields)
    table = quote(meta.db_table)
    rows = iter(rows)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        sql = f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})"  # noqa: S608 -- names
        while batch := list(islice(rows, BATCH)):
            cursor.executemany(sql, batch)


def sample_create(*, dataset: CuadDataset, n: int, min_per_type: int, seed: int) -> tuple[Sample, bool]:
    """Draw (or find, for the same manifest) the seeded sample; returns (sample, created)."""
    result = sample_contracts(
        sample_candidates(dataset=dataset),
        n=n,
        min_per_type=min_per_type,
        seed=seed,
        types=[c.name for c in dataset_categories(dataset=dataset)],
    )
    manifest = build_manifest(
        result,
        source={"file": dataset.source_name, "sha256": dataset.sha256, "version": dataset.version},
        n=n,
        min_per_type=min_per_type,
        seed=seed,
    )
    data = manifest_bytes(manifest)
    digest = sha256_hex(data)
    existing = Sample.objects.filter(dataset=dataset, manifest_sha256=digest).first()
    if existing is not None:
        return existing, False
    ids = dict(Contract.objects.filter(dataset=dataset).values_list("title", "id"))
    with transaction.atomic():
        sample = Sample.objects.create(
            dataset=dataset,
            n=n,
            min_per_type=min_per_type,
            seed=seed,
            manifest=data.decode("utf-8"),
            manifest_sha256=digest,
        )
        SampleContract.objects.bulk_create(
            [
                SampleContract(sample=sample, contract_id=ids[p.title], position=i, phase=p.phase)
                for i, p in enumerate(result.picked)
            ]
        )
    return sample, True
