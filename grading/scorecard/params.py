"""The scorecard's and explorer's query parameters: sample, runs, thresholds, matcher, sort, clause type, contract."""

from __future__ import annotations

import math
from dataclasses import dataclass
from urllib.parse import urlencode

from grading.dataset.models import Category, Sample
from grading.dataset.selectors import ScopeError, dataset_chosen, sample_default
from grading.runs.models import ExtractionRun
from grading.runs.selectors import run_default
from scoring.cuad.grading import Thresholds
from scoring.cuad.matching import MATCHERS

NO_RUN_YET = "run: there is no extraction run yet; paste one or launch the local extractor on the Runs page"
NO_FULL_RUN = (
    "run: no complete run of the whole sample yet (a launched run of every contract, or a file with extractions "
    "for every contract or a \"contracts\" list naming them all), so none is shown by default; choose a run above"
)
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


THRESHOLD_FIELDS = (("correct", 0.70), ("partial", 0.40), ("grounding", 0.80))


def _float(params, name: str, default: float, errors: list[str]) -> float:
    """A threshold in [0, 1]. Absent: the default. Present but empty or not a number: an error naming the field
    (a box someone cleared or mistyped is never silently replaced by the default)."""
    if name not in params:
        return default
    raw = params.get(name)
    if raw is None or not str(raw).strip():
        errors.append(f"{name}: the box is empty; enter a number between 0 and 1 (default {default:g})")
        return default
    try:
        value = float(raw)
    except (TypeError, ValueError):
        errors.append(f"{name}: {raw!r} is not a number; enter a number between 0 and 1")
        return default
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        errors.append(f"{name}: {raw} is outside [0, 1]")
    return value


def parse_thresholds(params) -> Thresholds:
    """Correct, partial and grounding thresholds from a query dict; ParameterError names each bad field."""
    errors: list[str] = []
    correct, partial, ground = (_float(params, name, default, errors) for name, default in THRESHOLD_FIELDS)
    if not errors and partial > correct:
        errors.append(f"partial: the partial floor {partial:g} is above the correct threshold {correct:g}")
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
        try:
            dataset = dataset_chosen(params)
        except ScopeError as exc:
            errors.append(str(exc))
        else:
            sample = sample_default(dataset=dataset) if dataset is not None else None
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
            # One population a page: a board or card never mixes CUAD with a firm's gold set, or two gold sets.
            errors.append(f"run {run.pk}: graded against another dataset than the sample")
            continue
        if run.pk not in [r.pk for r in runs]:
            runs.append(run)
    if not runs and not errors and sample is not None:
        default = run_default(sample=sample)
        if default is not None:
            runs = [default]
        elif need_run:
            has_runs = ExtractionRun.objects.filter(dataset=sample.dataset_id).exists()
            errors.append(NO_FULL_RUN if has_runs else NO_RUN_YET)
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
    assert sample is not None  # each way to no sample adds an error above
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
