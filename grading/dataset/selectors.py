"""Reads of the loaded CUAD: the dataset, its categories and contracts, samples and their contracts.

Also the dataset page's overview of a sample: how many contracts of each
clause type it has against its target, and its contracts' length histogram.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from grading.dataset.models import Category, Contract, CuadDataset, Sample, Span
from scoring.cuad.sampler import Candidate


class ScopeError(ValueError):
    """A manifest or contract scope does not fit the loaded dataset."""


def dataset_current() -> CuadDataset | None:
    """The default dataset: the most recently loaded CUAD public release.

    A firm's gold set is never a default (loading one must not move every CUAD page onto it); it is graded
    against when chosen: ``dataset_get``, ``dataset_chosen``, or the dataset of a run made on it.
    """
    return CuadDataset.objects.filter(origin=CuadDataset.Origin.CUAD).order_by("-loaded_at", "-id").first()


def dataset_get(*, dataset_id: int | str | None) -> CuadDataset | None:
    """The dataset of that id (a number, or its text from a query string / command line); None for none or junk.

    ``dataset_id`` None is the default, ``dataset_current()``.
    """
    if dataset_id is None or dataset_id == "":
        return dataset_current()
    raw = str(dataset_id)
    if not raw.isdecimal() or len(raw) > 18:  # a number no column holds is an unknown dataset, not a crash
        return None
    return CuadDataset.objects.filter(pk=int(raw)).first()


def dataset_chosen(params) -> CuadDataset | None:
    """The dataset a page is asked for: ``?dataset=``, else the dataset of the first ``?run=``, else the default.

    ScopeError when ``dataset`` names no loaded dataset (never a silent fall back to CUAD).
    """
    raw = params.get("dataset")
    if raw not in (None, ""):
        dataset = dataset_get(dataset_id=raw)
        if dataset is None:
            raise ScopeError(f"dataset: no loaded dataset {raw!r}")
        return dataset
    run_ids = params.getlist("run") if hasattr(params, "getlist") else [params.get("run")]
    for run_id in run_ids:
        if run_id and str(run_id).isdecimal() and len(str(run_id)) <= 18:
            found = CuadDataset.objects.filter(runs__pk=int(run_id)).first()
            if found is not None:
                return found
    return dataset_current()


def datasets_list() -> list[CuadDataset]:
    """Every loaded dataset: CUAD's own first, then the firm gold sets, newest first within each."""
    return sorted(CuadDataset.objects.all(), key=lambda d: (d.is_gold, -d.loaded_at.timestamp(), -d.pk))


def dataset_categories(*, dataset: CuadDataset) -> list[Category]:
    return list(dataset.categories.order_by("position", "name"))


def contract_titles(*, dataset: CuadDataset) -> set[str]:
    return set(Contract.objects.filter(dataset=dataset).values_list("title", flat=True))


def dataset_contract_ids(*, dataset: CuadDataset, titles: Sequence[str]) -> dict[str, int]:
    """``{title: contract id}`` of the given titles found in the dataset (a split file's contracts)."""
    return dict(Contract.objects.filter(dataset=dataset, title__in=set(titles)).values_list("title", "id"))


def sample_candidates(*, dataset: CuadDataset) -> list[Candidate]:
    """Each contract's title, text length and the clause types it has at least one span of."""
    names = dict(Category.objects.values_list("id", "name"))
    types: dict[int, set[str]] = {}
    for contract_id, category_id in (
        Span.objects.filter(contract__dataset=dataset).values_list("contract_id", "category_id").distinct()
    ):
        types.setdefault(contract_id, set()).add(names[category_id])
    return [
        Candidate(title=title, length=length, types=frozenset(types.get(pk, ())))
        for pk, title, length in Contract.objects.filter(dataset=dataset).values_list("id", "title", "length")
    ]


def sample_contract_ids(*, sample: Sample) -> list[int]:
    return list(sample.members.order_by("position").values_list("contract_id", flat=True))


def manifest_scope(*, manifest: dict | str | bytes) -> tuple[CuadDataset, list[int]]:
    """The dataset a manifest was drawn from (by its sha256) and its contracts' ids, in manifest order."""
    if isinstance(manifest, dict):
        document = manifest
    else:
        try:
            document = json.loads(manifest)
        except json.JSONDecodeError as exc:
            raise ScopeError(f"manifest: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    try:
        sha = document["source"]["sha256"]
        titles = [c["title"] for c in document["contracts"]]
    except (KeyError, TypeError) as exc:
        raise ScopeError(f"manifest: missing field {exc} (expected source.sha256 and contracts[].title)") from exc
    dataset = CuadDataset.objects.filter(sha256=sha).first()
    if dataset is None:
        raise ScopeError(f"manifest: its CUAD file (sha256 {sha}) is not loaded; run load_cuad on that file")
    ids = dict(Contract.objects.filter(dataset=dataset, title__in=titles).values_list("title", "id"))
    unknown = [t for t in titles if t not in ids]
    if unknown:
        raise ScopeError(f"manifest: unknown contract(s) {unknown[:5]}")
    return dataset, [ids[t] for t in titles]


def sample_default(*, dataset: CuadDataset | None = None) -> Sample | None:
    """The newest sample of ``dataset`` (by default the current dataset), or None.

    A firm's gold set has one sample, made when it is loaded: all its contracts.
    """
    dataset = dataset or dataset_current()
    if dataset is None:
        return None
    return Sample.objects.filter(dataset=dataset).order_by("-created_at", "-id").first()


# Samples are immutable, so their scope is cached in-process (keyed by id and manifest hash).
_scope_cache: dict[tuple[int, str], tuple[int, ...]] = {}


def sample_scope(*, sample: Sample) -> tuple[int, ...]:
    """Contract ids of a sample in manifest order (samples are immutable, so cached)."""
    key = (sample.pk, sample.manifest_sha256)
    found = _scope_cache.get(key)
    if found is None:
        found = _scope_cache[key] = tuple(sample_contract_ids(sample=sample))
    return found


def sample_scope_clear() -> None:
    _scope_cache.clear()


# ---------------------------------------------------------------------------
# The dataset page's overview of a sample


@dataclass(frozen=True)
class TypeCount:
    name: str
    sampled: int
    available: int
    target: int

    @property
    def met(self) -> bool:
        return self.sampled >= self.target

    @property
    def exhausted(self) -> bool:
        """Below target only because the population has no more contracts of this type."""
        return self.sampled < self.target and self.sampled >= self.available


@dataclass(frozen=True)
class Histogram:
    edges: list[int]
    sample: list[int]
    population: list[int]


@dataclass(frozen=True)
class DatasetOverview:
    dataset: CuadDataset
    sample: Sample
    manifest: dict
    types: list[TypeCount]
    phases: dict[str, int]
    histogram: Histogram
    length_stats: dict[str, int]
    n_spans: int


def length_histogram(sample_lengths: Sequence[int], population_lengths: Sequence[int], *, bins: int = 12) -> Histogram:
    """Counts per log-spaced length bin (characters), for the sample and the whole population."""
    # local import: numpy: load_cuad imports this module and needs no numpy
    import numpy as np

    low = max(1, min(population_lengths))
    high = max(population_lengths) + 1
    edges = np.unique(np.geomspace(low, high, bins + 1).round().astype(int))
    return Histogram(
        edges=[int(e) for e in edges],
        sample=[int(c) for c in np.histogram(sample_lengths, bins=edges)[0]],
        population=[int(c) for c in np.histogram(population_lengths, bins=edges)[0]],
    )


def dataset_overview(*, sample: Sample) -> DatasetOverview:
    # local import: numpy: load_cuad imports this module and needs no numpy
    import numpy as np

    manifest = json.loads(sample.manifest)
    target = int(manifest["parameters"]["min_per_type"])
    order = [c.name for c in dataset_categories(dataset=sample.dataset)]
    types = [
        TypeCount(
            name, int(manifest["per_type"].get(name, 0)), int(manifest["available_per_type"].get(name, 0)), target
        )
        for name in order
    ]
    lengths = [int(c["length"]) for c in manifest["contracts"]]
    population = list(Contract.objects.filter(dataset=sample.dataset_id).values_list("length", flat=True))
    phases: dict[str, int] = {}
    for c in manifest["contracts"]:
        phases[c["phase"]] = phases.get(c["phase"], 0) + 1
    return DatasetOverview(
        dataset=sample.dataset,
        sample=sample,
        manifest=manifest,
        types=types,
        phases=phases,
        histogram=length_histogram(lengths, population),
        length_stats={
            "min": min(lengths),
            "median": int(np.median(lengths)),
            "max": max(lengths),
            "population_median": int(np.median(population)),
        },
        n_spans=Span.objects.filter(contract_id__in=sample_scope(sample=sample)).count(),
    )


def histogram_svg_bars(h: Histogram, *, width: int = 520, height: int = 150) -> dict:
    """Bar geometry for the server-rendered SVG (sample as bars, population share as outline)."""
    n = len(h.sample)
    pad_left, pad_bottom = 34, 28
    plot_w, plot_h = width - pad_left - 6, height - pad_bottom - 8
    s_total = max(sum(h.sample), 1)
    p_total = max(sum(h.population), 1)
    top = max(max(c / s_total for c in h.sample), max(c / p_total for c in h.population), 1e-9)
    bar_w = plot_w / n
    bars = []
    for i in range(n):
        s_share = h.sample[i] / s_total
        p_share = h.population[i] / p_total
        x = pad_left + i * bar_w
        bars.append(
            {
                "x": round(x + 1, 1),
                "w": round(bar_w - 2, 1),
                "x2": round(x + bar_w - 1, 1),
                "y": round(8 + plot_h * (1 - s_share / top), 1),
                "h": round(plot_h * s_share / top, 1),
                "py": round(8 + plot_h * (1 - p_share / top), 1),
                "count": h.sample[i],
                "population": h.population[i],
                "low": h.edges[i],
                "high": h.edges[i + 1],
                "label": _short(h.edges[i]),
                "lx": round(x + bar_w / 2, 1),
            }
        )
    return {
        "width": width,
        "height": height,
        "bars": bars,
        "base": 8 + plot_h,
        "left": pad_left,
        "right": width - 6,
        "top_pct": round(top * 100),
    }


def _short(n: int) -> str:
    return f"{n / 1000:.0f}k" if n >= 1000 else str(n)


def dataset_of_gold_set(*, contract_set_id: int, version: int) -> CuadDataset | None:
    """The dataset a frozen gold set was loaded as (freezing loads it), or None."""
    return CuadDataset.objects.filter(origin=CuadDataset.Origin.GOLD, contract_set_id=contract_set_id,
                                      gold_set_version=version).order_by("-id").first()
