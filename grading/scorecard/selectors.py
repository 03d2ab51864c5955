"""Reads for the CUAD console: dataset overview, runs, live scorecard, run comparison, explorer, playground.

Thin over ``grading.selectors``: the stored pair scores of a run are read once
(``run_pair_table``) and kept in a small in-process cache keyed by run, scope
and matcher (a run's pair scores never change once imported), so a threshold,
matcher or run change is pure array work in ``scoring.cuad.grading``.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from grading import selectors
from grading.dataset.models import Category, Contract, CuadDataset, Sample, Span
from grading.runs.models import ConsoleJob, Extraction, ExtractionRun
from scoring.cuad.grading import (
    DEFAULT_REPLICATES,
    OUTCOME_NAMES,
    Figures,
    Grade,
    PairTable,
    Thresholds,
    classify,
    contract_tallies,
    grade,
    micro_ratios,
)
from scoring.cuad.matching import MATCHERS
from scoring.cuad.tokens import SourceIndex, grounding, ngrams, token_f1, tokenize

BOOTSTRAP_SEED = 0
NO_RUN_YET = "run: there is no extraction run yet; paste one or launch the local extractor on the Runs page"
SORT_KEYS = (
    "category",
    "spans",
    "extractions",
    "correct",
    "partial",
    "incorrect",
    "hallucinated",
    "missed",
    "precision",
    "recall",
    "f1",
)


class ParameterError(ValueError):
    """A console parameter is out of range or malformed; ``errors`` lists each problem by name."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__("; ".join(errors))


# ---------------------------------------------------------------------------
# Parameters


@dataclass(frozen=True)
class View:
    """What the scorecard and explorer are asked for: runs, thresholds, matcher, sort."""

    runs: list[ExtractionRun]
    sample: Sample
    thresholds: Thresholds
    matcher: str
    sort: str = "category"
    descending: bool = False
    category: str = ""
    contract_id: int | None = None

    @property
    def run(self) -> ExtractionRun:
        return self.runs[0]

    def query(self, **override) -> str:
        """The query string of this view (with overrides), for links and exports."""
        from urllib.parse import urlencode

        values: list[tuple[str, object]] = [("sample", self.sample.pk)]
        runs = override.pop("runs", [r.pk for r in self.runs])
        values += [("run", r) for r in runs]
        t = self.thresholds
        base = {
            "correct": f"{t.correct:g}",
            "partial": f"{t.partial:g}",
            "grounding": f"{t.grounding:g}",
            "matcher": self.matcher,
            "sort": self.sort,
            "dir": "desc" if self.descending else "asc",
            "type": self.category,
            "contract": self.contract_id or "",
        }
        base.update(override)
        values += [(k, v) for k, v in base.items() if v not in ("", None)]
        return urlencode(values)


def _float(params, name: str, default: float, errors: list[str]) -> float:
    raw = params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = float(raw)
    except (TypeError, ValueError):
        errors.append(f"{name}: {raw!r} is not a number")
        return default
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        errors.append(f"{name}: {raw} is outside [0, 1]")
    return value


def parse_thresholds(params) -> Thresholds:
    errors: list[str] = []
    correct = _float(params, "correct", 0.70, errors)
    partial = _float(params, "partial", 0.40, errors)
    ground = _float(params, "grounding", 0.80, errors)
    if not errors and partial > correct:
        errors.append(f"partial floor {partial:g} is above the correct threshold {correct:g}")
    if errors:
        raise ParameterError(errors)
    return Thresholds(correct=correct, partial=partial, grounding=ground)


def sample_default(*, dataset: CuadDataset | None = None) -> Sample | None:
    dataset = dataset or selectors.dataset_current()
    if dataset is None:
        return None
    return Sample.objects.filter(dataset=dataset).order_by("-created_at", "-id").first()


def parse_view(params, *, need_run: bool = True) -> View:
    """Read sample, runs (repeatable ``run``), thresholds, matcher, sort, type and contract from a query dict."""
    errors: list[str] = []
    sample = None
    if params.get("sample"):
        try:
            sample = Sample.objects.select_related("dataset").get(pk=int(params.get("sample")))
        except (ValueError, Sample.DoesNotExist):
            errors.append(f"sample: no sample {params.get('sample')!r}")
    else:
        sample = sample_default()
        if sample is None:
            errors.append("sample: no CUAD sample exists yet (run load_cuad and sample_cuad, or make demo)")
    run_ids = params.getlist("run") if hasattr(params, "getlist") else params.get("run", [])
    if isinstance(run_ids, str | int):
        run_ids = [run_ids]
    runs: list[ExtractionRun] = []
    for raw in run_ids:
        if raw in ("", None):
            continue
        try:
            run = ExtractionRun.objects.get(pk=int(raw))
        except (ValueError, ExtractionRun.DoesNotExist):
            errors.append(f"run: no run {raw!r}")
            continue
        if sample is not None and run.dataset_id != sample.dataset_id:
            errors.append(f"run {run.pk}: graded against another CUAD file than the sample")
            continue
        if run.pk not in [r.pk for r in runs]:
            runs.append(run)
    if not runs and not errors and sample is not None:
        latest = ExtractionRun.objects.filter(dataset=sample.dataset_id).order_by("-created_at", "-id").first()
        if latest is not None:
            runs = [latest]
        elif need_run:
            errors.append(NO_RUN_YET)
    matcher = params.get("matcher") or "hungarian"
    if matcher not in MATCHERS:
        errors.append(f"matcher: {matcher!r} is not one of {', '.join(MATCHERS)}")
    sort = params.get("sort") or "category"
    if sort not in SORT_KEYS:
        errors.append(f"sort: {sort!r} is not a column ({', '.join(SORT_KEYS)})")
    try:
        thresholds = parse_thresholds(params)
    except ParameterError as exc:
        errors += exc.errors
        thresholds = Thresholds()
    category = params.get("type") or ""
    if category and not Category.objects.filter(name=category).exists():
        errors.append(f"type: unknown clause type {category!r}")
    contract_id = None
    if params.get("contract"):
        try:
            contract_id = int(params.get("contract"))
        except ValueError:
            errors.append(f"contract: {params.get('contract')!r} is not a contract id")
    if errors:
        raise ParameterError(errors)
    return View(
        runs=runs,
        sample=sample,
        thresholds=thresholds,
        matcher=matcher,
        sort=sort,
        descending=params.get("dir") == "desc",
        category=category,
        contract_id=contract_id,
    )


# ---------------------------------------------------------------------------
# Stored pair scores, cached

_cache: OrderedDict[tuple, selectors.StoredPairs] = OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SIZE = 32
_scope_cache: dict[tuple[int, str], tuple[int, ...]] = {}


def sample_scope(*, sample: Sample) -> tuple[int, ...]:
    """Contract ids of a sample in manifest order (samples are immutable, so cached)."""
    key = (sample.pk, sample.manifest_sha256)
    found = _scope_cache.get(key)
    if found is None:
        found = _scope_cache[key] = tuple(selectors.sample_contract_ids(sample=sample))
    return found


def stored_pairs(*, run: ExtractionRun, sample: Sample, matcher: str) -> selectors.StoredPairs:
    """``selectors.run_pair_table`` for the sample's contracts, cached (pair scores are immutable once stored)."""
    key = (run.pk, run.content_sha256, sample.pk, sample.manifest_sha256, matcher)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    pairs = selectors.run_pair_table(run=run, contract_ids=list(sample_scope(sample=sample)), matcher=matcher)
    with _cache_lock:
        _cache[key] = pairs
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return pairs


def cache_clear() -> None:
    with _cache_lock:
        _cache.clear()
    _scope_cache.clear()


# ---------------------------------------------------------------------------
# Scorecard


@dataclass(frozen=True)
class RunCard:
    """One run graded at the view's settings: headline, per-type rows, and the other matcher's point figures."""

    run: ExtractionRun
    card: selectors.Scorecard
    other_matcher: str
    other: dict[str, float]  # precision / recall / f1 point estimates with the other matcher
    outside: int  # extractions for contracts outside the sample (not graded)

    @property
    def delta_f1(self) -> float:
        return self.card.overall.f1.estimate - self.other["f1"]


def grade_live(table: PairTable, thresholds: Thresholds, *, replicates: int, seed: int) -> Grade:
    """The console's grade: ``scoring.cuad.grading.grade``, which is itself vectorised now (one code path)."""
    return grade(table, thresholds, replicates=replicates, seed=seed)


def _point(pairs: selectors.StoredPairs, thresholds: Thresholds) -> dict[str, float]:
    classified = classify(pairs.table, thresholds)
    total = contract_tallies(pairs.table, classified).sum(axis=(0, 1))
    p, r, f = micro_ratios(total)
    return {"precision": float(p), "recall": float(r), "f1": float(f)}


def run_card(
    *, run: ExtractionRun, sample: Sample, thresholds: Thresholds, matcher: str, replicates: int = DEFAULT_REPLICATES
) -> RunCard:
    """The run's scorecard on the sample, from stored pair scores (no text is read, nothing is re-scored)."""
    pairs = stored_pairs(run=run, sample=sample, matcher=matcher)
    result = grade_live(pairs.table, thresholds, replicates=replicates, seed=BOOTSTRAP_SEED)
    rows = [
        selectors.ScorecardRow(c.name, c.group, c.description, figures)
        for c, figures in zip(pairs.scope.categories, result.per_category, strict=True)
    ]
    card = selectors.Scorecard(
        run_id=run.pk,
        model=run.model,
        matcher=matcher,
        thresholds=thresholds,
        seed=BOOTSTRAP_SEED,
        replicates=replicates,
        n_contracts=pairs.table.n_contracts,
        overall=result.overall,
        rows=rows,
    )
    other = next(m for m in MATCHERS if m != matcher)
    other_pairs = stored_pairs(run=run, sample=sample, matcher=other)
    return RunCard(
        run=run,
        card=card,
        other_matcher=other,
        other=_point(other_pairs, thresholds),
        outside=run.n_extractions - len(pairs.extraction_ids),
    )


def _sort_value(row: selectors.ScorecardRow, key: str):
    if key == "category":
        return row.category.lower()
    if key in ("precision", "recall", "f1"):
        value = getattr(row.figures, key).estimate
        return value
    return row.figures.counts[key]


def sorted_rows(rows: Sequence[selectors.ScorecardRow], *, key: str, descending: bool) -> list:
    """Rows sorted by a column; undefined figures (NaN) always last."""
    defined = [r for r in rows if not (isinstance(v := _sort_value(r, key), float) and math.isnan(v))]
    undefined = [r for r in rows if r not in defined]
    return sorted(defined, key=lambda r: _sort_value(r, key), reverse=descending) + undefined


@dataclass(frozen=True)
class Comparison:
    """Several runs on the same sample: per-type F1 of each, side by side."""

    cards: list[RunCard]
    rows: list[tuple[str, list[Figures]]]  # (category, figures per run)


def scorecard_view(*, view: View) -> tuple[RunCard, Comparison | None]:
    cards = [
        run_card(run=run, sample=view.sample, thresholds=view.thresholds, matcher=view.matcher) for run in view.runs
    ]
    comparison = None
    if len(cards) > 1:
        names = [r.category for r in cards[0].card.rows]
        comparison = Comparison(
            cards=cards,
            rows=[(name, [c.card.rows[k].figures for c in cards]) for k, name in enumerate(names)],
        )
    return cards[0], comparison


def figures_json(figures: Figures) -> dict:
    return figures.as_dict()


def scorecard_json(card: RunCard, sample: Sample) -> dict:
    out = card.card.as_json()
    out["run"] = {"id": card.run.pk, "model": card.run.model}
    out["population"] = population(sample=sample, n_contracts=card.card.n_contracts)
    out["bootstrap"] = {"replicates": card.card.replicates, "seed": card.card.seed, "unit": "contract"}
    out["other_matcher"] = {"matcher": card.other_matcher, **card.other}
    out["extractions_outside_sample"] = card.outside
    return out


def population(*, sample: Sample, n_contracts: int) -> str:
    return f"{n_contracts} contracts of the seed-{sample.seed} sample; intervals resample contracts"


SCORECARD_CSV_FIELDS = (
    "category",
    "spans",
    "extractions",
    "correct",
    "partial",
    "incorrect",
    "hallucinated",
    "missed",
    "precision",
    "precision_low",
    "precision_high",
    "recall",
    "recall_low",
    "recall_high",
    "f1",
    "f1_low",
    "f1_high",
)


def scorecard_csv_rows(card: RunCard, rows: Sequence[selectors.ScorecardRow]) -> list[dict]:
    def row(name: str, f: Figures) -> dict:
        out = {"category": name, **{k: f.counts[k] for k in SCORECARD_CSV_FIELDS[1:8]}}
        for metric in ("precision", "recall", "f1"):
            i = getattr(f, metric)
            for suffix, value in (("", i.estimate), ("_low", i.low), ("_high", i.high)):
                out[metric + suffix] = "" if math.isnan(value) else f"{value:.6f}"
        return out

    return [row("ALL", card.card.overall)] + [row(r.category, r.figures) for r in rows]


# ---------------------------------------------------------------------------
# Dataset


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
    low = max(1, min(population_lengths))
    high = max(population_lengths) + 1
    edges = np.unique(np.geomspace(low, high, bins + 1).round().astype(int))
    return Histogram(
        edges=[int(e) for e in edges],
        sample=[int(c) for c in np.histogram(sample_lengths, bins=edges)[0]],
        population=[int(c) for c in np.histogram(population_lengths, bins=edges)[0]],
    )


def dataset_overview(*, sample: Sample) -> DatasetOverview:
    manifest = json.loads(sample.manifest)
    target = int(manifest["parameters"]["min_per_type"])
    order = [c.name for c in selectors.dataset_categories(dataset=sample.dataset)]
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


# ---------------------------------------------------------------------------
# Runs and jobs


@dataclass(frozen=True)
class RunSummary:
    run: ExtractionRun
    headline: dict[str, float] | None  # point P/R/F1 on the sample at default thresholds
    in_sample: int
    job: ConsoleJob | None

    @property
    def heuristic(self) -> bool:
        return "heuristic" in self.run.model


def runs_list(*, sample: Sample | None) -> list[RunSummary]:
    if sample is None:
        return []
    jobs = {j.run_id: j for j in ConsoleJob.objects.filter(run__isnull=False).order_by("created_at")}
    out = []
    for run in ExtractionRun.objects.filter(dataset=sample.dataset_id).order_by("-created_at", "-id"):
        pairs = stored_pairs(run=run, sample=sample, matcher="hungarian")
        headline = _point(pairs, Thresholds()) if len(pairs.extraction_ids) else None
        out.append(RunSummary(run, headline, len(pairs.extraction_ids), jobs.get(run.pk)))
    return out


def jobs_list(*, limit: int = 20) -> list[ConsoleJob]:
    return list(ConsoleJob.objects.select_related("run", "sample").order_by("-created_at", "-id")[:limit])


# ---------------------------------------------------------------------------
# Explorer


@dataclass(frozen=True)
class Located:
    start: int  # UTF-16 offsets, as the browser counts them
    end: int
    how: str  # "exact", "case-insensitive", "whitespace-normalised"


def _utf16(text: str, offset: int) -> int:
    return offset + sum(1 for ch in text[:offset] if ord(ch) > 0xFFFF)


def locate(text: str, quote: str) -> Located | None:
    """Where a quote sits in the contract (first occurrence), or None when it is found nowhere."""
    q = quote.strip()
    if not q:
        return None
    at = text.find(q)
    how = "exact"
    end = at + len(q)
    if at < 0:
        at = text.lower().find(q.lower())
        how = "case-insensitive"
        end = at + len(q)
    if at < 0:
        parts = q.split()
        pattern = r"\s+".join(re.escape(p) for p in parts)
        m = re.search(pattern, text, flags=re.IGNORECASE)
        if m is None:
            return None
        at, end, how = m.start(), m.end(), "whitespace-normalised"
    if len(text) == len(text.encode("utf-16-le")) // 2:
        return Located(at, end, how)
    return Located(_utf16(text, at), _utf16(text, end), how)


@dataclass
class ExplorerItem:
    kind: str  # "extraction" or "span"
    pk: int
    category: str
    text: str
    outcome: str
    f1: float | None = None
    grounding: float | None = None
    partner: int | None = None  # matched span (for an extraction) / extraction (for a span)
    located: Located | None = None


@dataclass
class ContractRow:
    contract_id: int
    title: str
    spans: int = 0
    extractions: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)


@dataclass
class Explorer:
    view: View
    contracts: list[ContractRow]
    contract: Contract | None
    extractions: list[ExplorerItem]
    spans: list[ExplorerItem]
    categories: list[str]

    @property
    def contract_text(self) -> str:
        return self.contract.text if self.contract else ""


def explorer_view(*, view: View) -> Explorer:
    """Graded extractions next to the CUAD spans, per contract (optionally one clause type), from stored scores."""
    pairs = stored_pairs(run=view.run, sample=view.sample, matcher=view.matcher)
    table = pairs.table
    classified = classify(table, view.thresholds)
    categories = [c.name for c in pairs.scope.categories]
    k = categories.index(view.category) if view.category else None
    ext_sel = np.ones(len(table.ext_category), dtype=bool) if k is None else table.ext_category == k
    span_sel = np.ones(len(table.span_category), dtype=bool) if k is None else table.span_category == k

    titles = dict(Contract.objects.filter(pk__in=pairs.scope.contract_ids).values_list("id", "title"))
    rows = [ContractRow(cid, titles[cid]) for cid in pairs.scope.contract_ids]
    for ci, n in zip(*np.unique(table.span_contract[span_sel], return_counts=True), strict=True):
        rows[int(ci)].spans = int(n)
    for i in np.flatnonzero(ext_sel):
        row = rows[int(table.ext_contract[i])]
        row.extractions += 1
        name = OUTCOME_NAMES[int(classified.outcome[i])]
        row.outcomes[name] = row.outcomes.get(name, 0) + 1
    for j in np.flatnonzero(span_sel & classified.span_missed):
        row = rows[int(table.span_contract[j])]
        row.outcomes["missed"] = row.outcomes.get("missed", 0) + 1

    index = {cid: i for i, cid in enumerate(pairs.scope.contract_ids)}
    chosen = view.contract_id if view.contract_id in index else None
    if chosen is None:
        chosen = next((r.contract_id for r in rows if r.extractions or r.spans), None)
    if chosen is None:
        return Explorer(view, rows, None, [], [], categories)
    contract = Contract.objects.get(pk=chosen)
    ci = index[chosen]

    ext_idx = np.flatnonzero(ext_sel & (table.ext_contract == ci))
    span_idx = np.flatnonzero(span_sel & (table.span_contract == ci))
    ext_text = dict(Extraction.objects.filter(pk__in=pairs.extraction_ids[ext_idx].tolist()).values_list("id", "text"))
    span_info = {
        pk: (start, end, text)
        for pk, start, end, text in Span.objects.filter(pk__in=pairs.span_ids[span_idx].tolist()).values_list(
            "id", "start", "end", "text"
        )
    }
    span_to_ext: dict[int, int] = {}
    extractions = []
    for i in ext_idx:
        pk = int(pairs.extraction_ids[i])
        s = int(table.ext_span[i])
        span_pk = int(pairs.span_ids[s]) if s >= 0 else None
        if span_pk is not None:
            span_to_ext[span_pk] = pk
        text = ext_text[pk]
        extractions.append(
            ExplorerItem(
                "extraction",
                pk,
                categories[int(table.ext_category[i])],
                text,
                OUTCOME_NAMES[int(classified.outcome[i])],
                float(table.ext_f1[i]),
                float(table.ext_grounding[i]),
                span_pk,
                locate(contract.text, text),
            )
        )
    spans = []
    for j in span_idx:
        pk = int(pairs.span_ids[j])
        start, end, text = span_info[pk]
        spans.append(
            ExplorerItem(
                "span",
                pk,
                categories[int(table.span_category[j])],
                text,
                "missed" if classified.span_missed[j] else "credited",
                partner=span_to_ext.get(pk),
                located=Located(_utf16(contract.text, start), _utf16(contract.text, end), "offsets"),
            )
        )
    return Explorer(view, rows, contract, extractions, spans, categories)


def explorer_json(explorer: Explorer) -> dict:
    def item(x: ExplorerItem) -> dict:
        out = {
            "id": x.pk,
            "category": x.category,
            "text": x.text,
            "outcome": x.outcome,
            "located": None
            if x.located is None
            else {"start": x.located.start, "end": x.located.end, "how": x.located.how},
        }
        if x.kind == "extraction":
            out.update({"f1": x.f1, "grounding": x.grounding, "matched_span": x.partner})
        else:
            out["matched_extraction"] = x.partner
        return out

    c = explorer.contract
    return {
        "run": {"id": explorer.view.run.pk, "model": explorer.view.run.model},
        "thresholds": explorer.view.thresholds.as_dict(),
        "matcher": explorer.view.matcher,
        "type": explorer.view.category or None,
        "contract": None if c is None else {"id": c.pk, "title": c.title, "length": c.length},
        "extractions": [item(x) for x in explorer.extractions],
        "spans": [item(x) for x in explorer.spans],
        "contracts": [
            {"id": r.contract_id, "title": r.title, "spans": r.spans, "extractions": r.extractions, **r.outcomes}
            for r in explorer.contracts
        ],
    }


# ---------------------------------------------------------------------------
# Playground: the grader's own functions, with what they matched marked


@dataclass(frozen=True)
class Piece:
    text: str
    marked: bool


def _word_spans(text: str) -> list[tuple[int, int, str]] | None:
    """Positions of the grader's tokens in ``text``; None if lowercasing moves characters (then no marks)."""
    found = [(m.start(), m.end(), m.group().lower()) for m in re.finditer(r"\w+", text)]
    if [t for _, _, t in found] != tokenize(text):
        return None
    return found


def _pieces(text: str, spans: list[tuple[int, int, str]] | None, marked: set[int]) -> list[Piece]:
    if spans is None:
        return [Piece(text, False)]
    out: list[Piece] = []
    pos = 0
    for i, (s, e, _) in enumerate(spans):
        if i in marked:
            if s > pos:
                out.append(Piece(text[pos:s], False))
            out.append(Piece(text[s:e], True))
            pos = e
    out.append(Piece(text[pos:], False))
    return [p for p in out if p.text]


@dataclass(frozen=True)
class OverlapResult:
    f1: float
    precision: float
    recall: float
    shared: int
    a_tokens: int
    b_tokens: int
    a_pieces: list[Piece]
    b_pieces: list[Piece]


def playground_overlap(*, a: str, b: str) -> OverlapResult:
    """Token F1 exactly as the grader computes it (``scoring.cuad.tokens.token_f1``), shared tokens marked.

    Marks follow the multiset rule: a token occurring twice in A and once in B
    is marked once in each text (its first occurrences).
    """
    ta, tb = tokenize(a), tokenize(b)
    f1 = token_f1(ta, tb)
    from collections import Counter

    shared_bag = Counter(ta) & Counter(tb)
    shared = sum(shared_bag.values())

    def marks(spans):
        if spans is None:
            return set()
        left = dict(shared_bag)
        out = set()
        for i, (_, _, tok) in enumerate(spans):
            if left.get(tok, 0) > 0:
                left[tok] -= 1
                out.add(i)
        return out

    sa, sb = _word_spans(a), _word_spans(b)
    return OverlapResult(
        f1=f1,
        precision=shared / len(ta) if ta else 0.0,
        recall=shared / len(tb) if tb else 0.0,
        shared=shared,
        a_tokens=len(ta),
        b_tokens=len(tb),
        a_pieces=_pieces(a, sa, marks(sa)),
        b_pieces=_pieces(b, sb, marks(sb)),
    )


@dataclass(frozen=True)
class GroundingResult:
    grounding: float
    n: int  # n-gram length used (3, or the claim's own length when shorter)
    found: int
    total: int
    verbatim: bool
    claim_pieces: list[Piece]
    source_pieces: list[Piece]


def playground_grounding(*, claim: str, source: str) -> GroundingResult:
    """Trigram grounding exactly as the grader computes it (``scoring.cuad.tokens.grounding``), matches marked."""
    index = SourceIndex(source)
    value = grounding(claim, index)
    tokens = tokenize(claim)
    n = min(3, len(tokens)) if tokens else 3
    grams = ngrams(tokens, n) if tokens else set()
    source_grams = index.grams(n) if tokens else set()
    hits = {g for g in grams if g in source_grams}
    verbatim = bool(claim.strip()) and claim.strip().lower() in index.lower

    def marked(spans):
        if spans is None:
            return set()
        out = set()
        toks = [t for _, _, t in spans]
        for i in range(len(toks) - n + 1):
            if tuple(toks[i : i + n]) in hits:
                out.update(range(i, i + n))
        return out

    sc, ss = _word_spans(claim), _word_spans(source)
    return GroundingResult(
        grounding=value,
        n=n,
        found=len(hits),
        total=len(grams),
        verbatim=verbatim,
        claim_pieces=_pieces(claim, sc, marked(sc)),
        source_pieces=_pieces(source, ss, marked(ss)),
    )
