"""The scorecard's and explorer's query parameters: sample, runs, thresholds, matcher, sort, clause type, contract."""

from __future__ import annotations

import math
from dataclasses import dataclass

from grading.dataset.models import Category, Sample
from grading.dataset.selectors import sample_default
from grading.runs.models import ExtractionRun
from scoring.cuad.grading import Thresholds
from scoring.cuad.matching import MATCHERS

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
