"""Shared set-up for the CUAD console tests: the fixture CUAD loaded, a sample of all four contracts, two runs."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from grading.dataset.models import CuadDataset, Sample
from grading.dataset.services import cuad_load, sample_create
from grading.runs.models import ExtractionRun
from grading.runs.selectors import cache_clear
from grading.runs.services import extraction_run_import
from tests.grading.cuad_fixture import CATEGORIES, contracts, cuad_bytes, gold_run

FABRICATED = "The purple submarine shall pay royalties in saffron to the moon."


@dataclass
class Loaded:
    dataset: CuadDataset
    sample: Sample
    gold: ExtractionRun
    noisy: ExtractionRun


def noisy_run(model: str = "noisy-model") -> dict:
    """Gold with a truncated span, a fabricated clause, a dropped span and a wrong-category copy."""
    run = gold_run(model)
    items = run["extractions"]
    items[1] = {**items[1], "text": " ".join(items[1]["text"].split()[:4])}  # truncated Governing Law
    items.pop(2)  # dropped Anti-Assignment of ALPHA
    items.append({"contract": "ALPHA-DISTRIBUTOR AGREEMENT", "category": "Governing Law", "text": FABRICATED})
    wrong = {"contract": "GAMMA-SUPPLY AGREEMENT", "category": "Anti-Assignment", "text": "Supplier shall deliver"}
    items.append(wrong)
    return run


def random_run(rng: np.random.Generator, model: str = "random") -> dict:
    """Random word windows of the fixture contracts (some from other contracts), random categories."""
    cs_ = contracts()
    items = []
    for c in cs_:
        for _ in range(int(rng.integers(1, 7))):
            source = cs_[int(rng.integers(len(cs_)))] if rng.random() < 0.3 else c
            words = source["context"].split()
            a = int(rng.integers(0, len(words) - 1))
            b = int(rng.integers(a + 1, min(len(words), a + 14) + 1))
            items.append(
                {
                    "contract": c["title"],
                    "category": CATEGORIES[int(rng.integers(len(CATEGORIES)))],
                    "text": " ".join(words[a:b]),
                }
            )
    return {"model": model, "extractions": items}


def load(tmp_path) -> Loaded:
    cache_clear()
    path = tmp_path / "CUAD_v1.json"
    path.write_bytes(cuad_bytes())
    dataset = cuad_load(path=path).dataset
    sample, _ = sample_create(dataset=dataset, n=4, min_per_type=1, seed=42)
    gold, _ = extraction_run_import(dataset=dataset, raw=json.dumps(gold_run("gold-model")))
    noisy, _ = extraction_run_import(dataset=dataset, raw=json.dumps(noisy_run()))
    return Loaded(dataset, sample, gold, noisy)
