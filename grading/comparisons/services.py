"""Declare a CUAD comparison: extraction runs graded against one dataset, compared on one of its samples.

Refused, with nothing written, for fewer than two runs, a run named twice, runs of different datasets (CUAD and a
firm's gold set, or two gold sets: two populations), a sample of another dataset, a run that attempted no contract
of the sample, or a declarer who may not launch runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from grading.comparisons.models import CuadComparison
from grading.dataset.models import Sample
from grading.dataset.selectors import sample_default, sample_scope
from grading.runs.models import ExtractionRun
from grading.runs.selectors import run_scope
from grading.scorecard.params import ParameterError
from reviewapp.core.auth.roles import LAUNCH_RUNS
from reviewapp.core.records.hashing import sha256_json

MIN_RUNS = 2


class CuadComparisonError(ValueError):
    """The comparison cannot be declared; the message says why and names the run."""


@dataclass(frozen=True)
class CuadDeclaration:
    """One declared CUAD comparison as plain data: what the pages, the API and the command show."""

    pk: int
    sha256: str
    dataset: str
    sample_id: int
    run_ids: tuple[int, ...]
    labels: tuple[str, ...]  # "#7 claude-3.5 (synthetic)" per run, in declared order
    declared_by: str
    declared_via: str
    declared_at: datetime

    @property
    def sentence(self) -> str:
        n = len(self.run_ids)
        return (f"planned together: {n} run{'s' * (n != 1)} on {self.dataset} (sample #{self.sample_id}), declared "
                f"by {self.declared_by} on {self.declared_at:%Y-%m-%d}")

    @property
    def summary_url(self) -> str:
        return f"{reverse('cuad:summary')}?comparison={self.pk}"

    def as_json(self) -> dict[str, Any]:
        return {"id": self.pk, "sha256": self.sha256, "dataset": self.dataset, "sample": self.sample_id,
                "runs": [{"id": pk, "label": label} for pk, label in zip(self.run_ids, self.labels, strict=True)],
                "declared_by": self.declared_by, "declared_via": self.declared_via,
                "declared_at": self.declared_at.isoformat(), "sentence": self.sentence,
                "summary_url": self.summary_url}


def _declaration(row: CuadComparison) -> CuadDeclaration:
    return CuadDeclaration(
        pk=row.pk, sha256=row.sha256, dataset=row.dataset.name, sample_id=row.sample_id,
        run_ids=tuple(r["run_id"] for r in row.runs), labels=tuple(f"#{r['run_id']} {r['model']}" for r in row.runs),
        declared_by=row.declared_by.get_username() if row.declared_by else "(nobody recorded)",
        declared_via=row.declared_via, declared_at=row.declared_at)


def cuad_comparison_get(*, pk: int) -> CuadDeclaration | None:
    row = CuadComparison.objects.select_related("dataset", "declared_by").filter(pk=pk).first()
    return _declaration(row) if row is not None else None


def cuad_comparison_list() -> list[CuadDeclaration]:
    """Every declared CUAD comparison, newest first."""
    return [_declaration(row) for row in CuadComparison.objects.select_related("dataset", "declared_by")]


def cuad_comparison_declare(*, runs: Sequence[ExtractionRun], user: Any, via: str,
                            sample: Sample | None = None) -> CuadDeclaration:
    """Declare ``runs`` one comparison on ``sample`` (default: the newest sample of their dataset)."""
    if not getattr(user, "is_authenticated", False) or not user.has_perm(LAUNCH_RUNS):
        raise CuadComparisonError("only an admin (who may launch runs) declares a comparison")
    if len({r.pk for r in runs}) != len(runs):
        raise CuadComparisonError("a run is named twice")
    if len(runs) < MIN_RUNS:
        raise CuadComparisonError(f"a comparison needs at least {MIN_RUNS} runs; got {len(runs)}")
    datasets = {r.dataset_id for r in runs}
    if len(datasets) > 1:
        named = ", ".join(f"#{r.pk} ({r.dataset.name})" for r in runs)
        raise CuadComparisonError(f"the runs are graded against {len(datasets)} different datasets ({named}); a "
                                  "comparison is on one dataset's labels")
    dataset = runs[0].dataset
    sample = sample or sample_default(dataset=dataset)
    if sample is None:
        raise CuadComparisonError(f"{dataset.name} has no sample to compare the runs on")
    if sample.dataset_id != dataset.pk:
        raise CuadComparisonError(f"sample #{sample.pk} is of another dataset than the runs ({dataset.name})")
    if not sample_scope(sample=sample):
        raise CuadComparisonError(f"sample #{sample.pk} has no contract")
    empty = [f"#{r.pk}" for r in runs if not run_scope(run=r, sample=sample).n]
    if empty:
        raise CuadComparisonError(f"run {', '.join(empty)} attempted no contract of sample #{sample.pk}")
    declared_at = timezone.now()
    body = [{"run_id": r.pk, "model": r.model, "content_sha256": r.content_sha256} for r in runs]
    sha = sha256_json({"dataset": {"id": dataset.pk, "name": dataset.name}, "sample": sample.manifest_sha256,
                       "runs": sorted(r.content_sha256 for r in runs), "declared_by": user.get_username(),
                       "declared_at": declared_at.isoformat()})
    with transaction.atomic():
        row = CuadComparison.objects.create(dataset=dataset, sample=sample, runs=body, sha256=sha,
                                            declared_by=user, declared_via=via, declared_at=declared_at)
    found = cuad_comparison_get(pk=row.pk)
    assert found is not None
    return found


def comparison_params(params: Any) -> Any:
    """``params`` with a declared comparison's runs and sample in place of ``comparison=N`` (for the leaderboard and
    the summary); unchanged without it. Raises ParameterError for an unknown comparison or one given with runs."""
    raw = params.get("comparison")
    if raw in (None, ""):
        return params
    declaration = cuad_comparison_get(pk=int(raw)) if str(raw).isdecimal() and len(str(raw)) <= 18 else None
    if declaration is None:
        raise ParameterError([f"comparison: no declared comparison {raw!r}"])
    if any(str(v).strip() for v in params.getlist("run")) or params.get("sample") or params.get("dataset"):
        raise ParameterError(["comparison: it fixes the runs and the sample; leave out run, sample and dataset"])
    out = params.copy()
    out.setlist("run", [str(pk) for pk in declaration.run_ids])
    out["sample"] = str(declaration.sample_id)
    return out
