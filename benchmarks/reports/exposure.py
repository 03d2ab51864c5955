"""Held-out exposure: record every computation of held-out figures and say whether the split is still fresh.

The first retrieval configuration scored on a suite's held-out split, and the first model configuration
reranked on it, are the ones the split is fresh for. A report whose retrieval or model configuration
differs from those carries a warning naming the change: whoever chose that configuration may have seen
held-out figures, so the split no longer measures it fairly (the seed: "any resulting prompt or retrieval
change needs a fresh held-out suite"). Development figures are never recorded and never warn.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction

from benchmarks.reports.figures import PRIMARY_SPLIT, Report
from benchmarks.reports.inputs import ReportInputs
from benchmarks.reports.leaderboard import KEYWORD, Leaderboard, first_stage_key, system_key
from benchmarks.reports.models import HeldoutExposure
from reviewapp.core.hashing import sha256_json

RETRIEVAL_FIELDS = ("configuration", "detail", "k", "passage_rule", "engine")
RERANK_FIELDS = ("provider", "model_id", "question_version", "question_sha256", "fusion")


def exposure_configuration(inputs: ReportInputs) -> dict[str, dict[str, Any] | None]:
    """The parts of a report's configuration that held-out freshness is about (no run ids, no times)."""
    retrieval = inputs.retrieval
    rerank = inputs.rerank
    return {
        "retrieval": {"configuration": retrieval.configuration, "detail": retrieval.description,
                      "k": retrieval.k, "passage_rule": retrieval.passage_rule, "engine": retrieval.engine},
        "rerank": None if rerank is None else {
            "provider": rerank.provider, "model_id": rerank.model_id,
            "question_version": rerank.question_version, "question_sha256": rerank.question_sha256,
            # Only a hybrid carries the key: a plain rerank run's configuration (and hash) is as before.
            **({"fusion": rerank.fusion} if rerank.fusion else {}),
        },
    }


@dataclass(frozen=True)
class Exposure:
    """What the ledger says about the held-out split of the report's suite, this computation included."""

    times: int  # computations of held-out figures of this suite since it was frozen
    configurations: int  # distinct (retrieval, rerank) configurations among them
    first_scored_at: str  # when this report's configuration was first scored on the split (ISO 8601)
    fresh: bool
    changes: tuple[str, ...]  # what differs from the first configuration(s), when not fresh
    entry: dict[str, Any]  # the ledger entry this computation appended

    @property
    def warning(self) -> str:
        if self.fresh:
            return ""
        return ("The held-out split is no longer fresh for this comparison: it was scored before with another "
                f"configuration ({'; '.join(self.changes)}). A configuration chosen after held-out figures were "
                "seen needs a fresh held-out suite.")

    def as_json(self) -> dict[str, Any]:
        return {"split": PRIMARY_SPLIT, "times": self.times, "configurations": self.configurations,
                "first_scored_at": self.first_scored_at, "fresh": self.fresh, "changes": list(self.changes),
                "warning": self.warning, "entry": self.entry}


def _changes(first: dict[str, Any] | None, current: dict[str, Any] | None, fields: tuple[str, ...],
             what: str) -> list[str]:
    if first is None or current is None:
        return []
    return [f"{what} {field}: {first.get(field)!r} -> {current.get(field)!r}"
            for field in fields if first.get(field) != current.get(field)]


def exposure_record(report: Report, *, purpose: str, user: Any = None) -> Report:
    """Append this computation to the ledger when the report has held-out figures; the report with its exposure.

    Reports without held-out ranking queries are returned unchanged and write nothing.
    """
    split = next((s for s in report.splits if s.split == PRIMARY_SPLIT), None)
    if split is None or not split.queries or report.inputs.suite.pk is None:
        return report
    return replace(report, exposure=exposure_record_inputs(report.inputs, purpose=purpose, user=user))


def exposure_record_inputs(inputs: ReportInputs, *, purpose: str, user: Any = None) -> Exposure:
    """Append one computation of held-out figures of (retrieval, rerank) configuration ``inputs`` to the ledger.

    The caller has held-out ranking queries to show (a report, or one system of a leaderboard).
    """
    configuration = exposure_configuration(inputs)
    retrieval_sha = sha256_json(configuration["retrieval"])
    rerank_sha = sha256_json(configuration["rerank"]) if configuration["rerank"] is not None else ""
    with transaction.atomic():
        entry = HeldoutExposure.objects.create(
            suite_id=inputs.suite.pk, split=PRIMARY_SPLIT, retrieval_sha256=retrieval_sha,
            rerank_sha256=rerank_sha, configuration=configuration, purpose=purpose,
            retrieval_run_id=inputs.retrieval.pk, rerank_run_id=inputs.rerank.pk if inputs.rerank else None,
            scored_by=user if getattr(user, "is_authenticated", False) else None,
        )
        ledger = list(HeldoutExposure.objects.filter(suite_id=inputs.suite.pk, split=PRIMARY_SPLIT)
                      .order_by("id").values("retrieval_sha256", "rerank_sha256", "configuration", "scored_at"))
    first_retrieval = ledger[0]
    first_rerank = next((e for e in ledger if e["rerank_sha256"]), None)
    changes = _changes(first_retrieval["configuration"]["retrieval"], configuration["retrieval"],
                       RETRIEVAL_FIELDS, "retrieval")
    if rerank_sha and first_rerank is not None:
        changes += _changes(first_rerank["configuration"]["rerank"], configuration["rerank"], RERANK_FIELDS, "model")
    this = next(e for e in ledger if (e["retrieval_sha256"], e["rerank_sha256"]) == (retrieval_sha, rerank_sha))
    return Exposure(
        times=len(ledger),
        configurations=len({(e["retrieval_sha256"], e["rerank_sha256"]) for e in ledger}),
        first_scored_at=this["scored_at"].isoformat(),
        fresh=not changes,
        changes=tuple(changes),
        entry={"id": entry.pk, "suite": f"{inputs.suite.name} v{inputs.suite.version}", "split": PRIMARY_SPLIT,
               "retrieval_sha256": retrieval_sha, "rerank_sha256": rerank_sha, "configuration": configuration,
               "purpose": purpose, "scored_at": entry.scored_at.isoformat()},
    )


def leaderboard_exposure_record(board: Leaderboard, *, purpose: str, user: Any = None) -> Leaderboard:
    """Append one ledger entry per system whose held-out figures the leaderboard shows; the board with them.

    Each system is its own configuration (keyword order alone, or with one rerank run), so a second model
    on the same held-out split is disclosed on its row exactly as on its own report.
    """
    inputs = board.inputs
    if board.primary is None or inputs.suite.pk is None:
        return board
    reranks = {system_key(e.meta): e for e in inputs.reranks}
    systems = []
    with transaction.atomic():
        for system in board.systems:
            if not system.has_figures:
                systems.append(system)
                continue
            entry = reranks.get(system.key)
            report_inputs = ReportInputs(suite=inputs.suite, retrieval=inputs.retrieval,
                                         queries=entry.queries if entry else inputs.queries,
                                         rerank=entry.meta if entry else None)
            exposure = exposure_record_inputs(report_inputs, purpose=purpose, user=user)
            systems.append(replace(system, exposure=exposure))
    by_key = {s.key: s for s in systems}
    splits = tuple(replace(s, rows=tuple(replace(r, system=by_key[r.system.key]) for r in s.rows))
                   for s in board.splits)
    return replace(board, systems=tuple(systems), splits=splits)


def known_targets_exposure_record(board: Leaderboard, *, purpose: str, user: Any = None) -> Leaderboard:
    """One ledger entry per other retrieval configuration whose held-out figures the known-target table shows
    (pages, exports and the API that show that table; the summary does not show it and does not call this).

    Call after ``leaderboard_exposure_record``: the leaderboard's own retrieval run is its keyword order, already
    recorded there; that entry is reused, not doubled.
    """
    known = board.known_targets
    inputs = board.inputs
    if known is None or known.primary is None or inputs.suite.pk is None:
        return board
    keyword: Exposure | None = next((s.exposure for s in board.systems if s.key == KEYWORD), None)
    stages = {first_stage_key(s.retrieval): s for s in inputs.first_stages}
    systems = []
    for system in known.systems:
        if system.retrieval.pk == inputs.retrieval.pk and keyword is not None:
            exposure = keyword
        else:
            stage = stages[system.key]
            exposure = exposure_record_inputs(
                ReportInputs(suite=inputs.suite, retrieval=stage.retrieval, queries=stage.queries),
                purpose=purpose, user=user)
        systems.append(replace(system, exposure=exposure))
    by_key = {s.key: s for s in systems}
    splits = tuple(replace(s, rows=tuple(replace(r, system=by_key[r.system.key]) for r in s.rows))
                   for s in known.splits)
    return replace(board, known_targets=replace(known, systems=tuple(systems), splits=splits))


class ExposureRunError(ValueError):
    """The runs named for a computation outside the report (a command on TREC files) do not fit; says why."""


def exposure_record_runs(*, retrieval_run: Any, rerank_run: Any = None, qids: Any, purpose: str,
                         user: Any = None) -> Exposure | None:
    """Append a computation of figures over ``qids`` (e.g. TREC files exported from these runs) to the ledger.

    None, and nothing written, when none of ``qids`` is a held-out ranking query of the run's suite. Raises
    ExposureRunError when the rerank run is of another retrieval run or a qid is not a query of the suite.
    """
    from benchmarks.reports.selectors import report_inputs_load, rerank_scores_from_run
    from benchmarks.suites.models import QueryKind, SuiteQuery

    if rerank_run is not None and rerank_run.retrieval_run_id != retrieval_run.pk:
        raise ExposureRunError(f"rerank run #{rerank_run.pk} reranks retrieval run #{rerank_run.retrieval_run_id}, "
                               f"not #{retrieval_run.pk}")
    qids = set(qids)
    known = dict(SuiteQuery.objects.filter(suite_id=retrieval_run.suite_id).values_list("qid", "split"))
    unknown = sorted(qids - set(known))
    if unknown:
        raise ExposureRunError(f"{len(unknown)} queries are not queries of suite {retrieval_run.suite} (retrieval "
                               f"run #{retrieval_run.pk}): {', '.join(unknown[:10])}")
    heldout = SuiteQuery.objects.filter(suite_id=retrieval_run.suite_id, qid__in=qids, kind=QueryKind.RANKING,
                                        split=PRIMARY_SPLIT)
    if not heldout.exists():
        return None
    scores = rerank_scores_from_run(run=rerank_run) if rerank_run is not None else None
    inputs = report_inputs_load(run=retrieval_run, rerank=scores)
    return exposure_record_inputs(inputs, purpose=purpose, user=user)
