"""Run an offline CUAD baseline over a sample and store it as an extraction run, graded like any other.

The run is built in this process (no provider request, seconds for the
100-contract demo sample), declares the sample's contracts as its scope, and
goes through ``extraction_run_import``: the same validation, pair scoring and
content hash as a pasted run, so the same baseline on the same sample is stored
once.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass

from grading.baselines.nearest import LabelledContract, nearest_example_run
from grading.baselines.rules import rule_extract
from grading.baselines.systems import BY_KEY, OfflineSystem
from grading.dataset.models import Contract, Sample, Span
from grading.dataset.selectors import dataset_categories, sample_contract_ids
from grading.runs.models import ExtractionRun
from grading.runs.services import extraction_run_import

BASELINES = ("nearest", "rules")


@dataclass(frozen=True)
class BaselineResult:
    system: OfflineSystem
    run: ExtractionRun
    created: bool
    seconds: float  # building the extractions (0 when the run was already stored: nothing was rebuilt)


def baseline_extractions(*, sample: Sample, key: str) -> dict:
    """The run file (JSON object) of baseline ``key`` on ``sample``: model, declared contracts, extractions."""
    if key not in BASELINES:
        raise ValueError(f"system: {key!r} is not an offline baseline ({', '.join(BASELINES)})")
    system = BY_KEY[key]
    ids = sample_contract_ids(sample=sample)
    contracts = dict(Contract.objects.filter(pk__in=ids).values_list("id", "title"))
    titles = [contracts[pk] for pk in ids]
    categories = [c.name for c in dataset_categories(dataset=sample.dataset)]
    texts = dict(Contract.objects.filter(pk__in=ids).values_list("title", "text"))
    extractions: list[dict] = []
    if key == "rules":
        for title in titles:
            for f in rule_extract(texts[title], categories):
                extractions.append({"contract": title, "category": f.category, "text": f.text})
    else:
        # The labelled pool: every contract of the dataset with its gold (only the sample's texts are needed).
        spans: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for title, category, text in (
            Span.objects.filter(contract__dataset=sample.dataset_id)
            .order_by("contract__position", "category__position", "answer_index")
            .values_list("contract__title", "category__name", "text")
        ):
            spans[title].append((category, text))
        pool = [
            LabelledContract(title, texts.get(title, ""), tuple(spans[title]))
            for title in Contract.objects.filter(dataset=sample.dataset_id).order_by("position")
            .values_list("title", flat=True)
        ]
        result = nearest_example_run(pool, titles, categories)
        for title in titles:
            for f in result.found[title]:
                extractions.append(
                    {"contract": title, "category": f.category, "text": f.text, "confidence": min(1.0, f.score)}
                )
    return {"model": system.model, "contracts": titles, "extractions": extractions}


def baseline_run_create(*, sample: Sample, key: str, rebuild: bool = False) -> BaselineResult:
    """Build baseline ``key`` on ``sample`` and import it (the stored run when the same content exists).

    Without ``rebuild``, a run this service already stored for the sample is returned without building
    again (the baselines are deterministic, so it would be the same content).
    """
    if key not in BASELINES:
        raise ValueError(f"system: {key!r} is not an offline baseline ({', '.join(BASELINES)})")
    source_name = f"offline baseline {key} (sample {sample.pk})"
    if not rebuild:
        stored = ExtractionRun.objects.filter(dataset=sample.dataset_id, model=BY_KEY[key].model,
                                              source_name=source_name).order_by("-id").first()
        if stored is not None:
            return BaselineResult(BY_KEY[key], stored, False, 0.0)
    started = time.perf_counter()
    run_file = baseline_extractions(sample=sample, key=key)
    seconds = time.perf_counter() - started
    run, created = extraction_run_import(
        dataset=sample.dataset, raw=json.dumps(run_file), source_name=source_name
    )
    return BaselineResult(BY_KEY[key], run, created, seconds)
