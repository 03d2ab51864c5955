"""Writes of the CUAD dataset: load CUAD_v1.json (checked span by span), draw seeded samples."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from grading.dataset.cuad_file import read_cuad, read_source
from grading.dataset.models import Category, Contract, CuadDataset, Sample, SampleContract, Span
from grading.dataset.selectors import dataset_categories, sample_candidates
from reviewapp.core.hashing import sha256_hex
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
    if parsed.mismatches:
        raise CuadLoadError(parsed.mismatches, parsed.source_name)

    with transaction.atomic():
        categories: dict[str, Category] = {}
        for position, info in enumerate(parsed.categories):
            category, _ = Category.objects.update_or_create(
                name=info.name,
                defaults={
                    "position": position,
                    "description": info.description,
                    "answer_format": info.answer_format,
                    "group": info.group,
                },
            )
            categories[info.name] = category
        dataset = CuadDataset.objects.create(
            sha256=parsed.sha256,
            source_name=parsed.source_name,
            version=parsed.version,
            n_contracts=len(parsed.contracts),
            n_spans=parsed.n_spans,
        )
        dataset.categories.set(categories.values())
        contracts = Contract.objects.bulk_create(
            [
                Contract(dataset=dataset, title=c.title, position=i, text=c.text, length=len(c.text))
                for i, c in enumerate(parsed.contracts)
            ],
            batch_size=200,
        )
        Span.objects.bulk_create(
            [
                Span(
                    contract_id=contract.pk,
                    category_id=categories[s.category].pk,
                    qa_id=s.qa_id,
                    answer_index=s.answer_index,
                    start=s.start,
                    end=s.start + len(s.text),
                    text=s.text,
                )
                for contract, record in zip(contracts, parsed.contracts, strict=True)
                for s in record.spans
            ],
            batch_size=BATCH,
        )
    return LoadResult(dataset, True, time.perf_counter() - started)


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
