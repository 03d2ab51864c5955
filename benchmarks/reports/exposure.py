"""Held-out exposure: record every computation of held-out figures and say whether the split is still fresh.

The first retrieval configuration scored on a suite's held-out split, and the first model configuration
reranked on it, are the ones the split is fresh for. A report whose retrieval or model configuration
differs from those carries a warning naming the change: whoever chose that configuration may have seen
held-out figures, so the split no longer measures it fairly (the seed: "any resulting prompt or retrieval
change needs a fresh held-out suite"). Development figures are never recorded and never warn.

A comparison planned together is one look at the split. An admin may declare a set of systems before any of
them is scored on the held-out split (``benchmarks.comparisons``); the declaration then counts as one look,
fixed when it was declared, and "the first configuration" above becomes "the configurations of the first
look": declared systems never warn against each other, and a system that is not in a declaration made
before its first held-out figure warns as before, the warning naming the declaration it came after. Looks
are ordered by when their configurations were fixed: a declaration by its declaration time, an undeclared
configuration by its first computation in the ledger; declarations made before any figure was computed are
one look together (nothing was seen between them). Every computation is still one row of the ledger.

A declaration and a held-out computation of the same suite never interleave: both take the suite's row lock
(``heldout_lock``) in their transaction, so a declaration's check that none of its systems was scored cannot
miss a computation committed in between (PostgreSQL; SQLite's IMMEDIATE transactions serialise every writer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.db import transaction

from benchmarks.comparisons.selectors import Declaration, comparisons_of
from benchmarks.reports.figures import PRIMARY_SPLIT, Report
from benchmarks.reports.inputs import ReportInputs, RerankMeta, RetrievalMeta
from benchmarks.reports.leaderboard import KEYWORD, Leaderboard, first_stage_key, system_key
from benchmarks.reports.models import HeldoutExposure
from benchmarks.reports.selectors import report_inputs_load, rerank_scores_from_run
from benchmarks.suites.models import QueryKind, Suite, SuiteQuery
from reviewapp.core.records.hashing import sha256_json

RETRIEVAL_FIELDS = ("configuration", "detail", "k", "passage_rule", "engine")
RERANK_FIELDS = ("provider", "model_id", "question_version", "question_sha256", "fusion")


def exposure_configuration(inputs: ReportInputs) -> dict[str, dict[str, Any] | None]:
    """The parts of a report's configuration that held-out freshness is about (no run ids, no times)."""
    return configuration_of(inputs.retrieval, inputs.rerank)


def configuration_of(retrieval: RetrievalMeta, rerank: RerankMeta | None) -> dict[str, dict[str, Any] | None]:
    """The configuration the ledger hashes, of a retrieval run alone or with one rerank run."""
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


Key = tuple[str, str]  # (retrieval_sha256, rerank_sha256); '' without a rerank


def configuration_key(configuration: dict[str, dict[str, Any] | None]) -> Key:
    """The two hashes the ledger keys a configuration by."""
    rerank = configuration["rerank"]
    return sha256_json(configuration["retrieval"]), sha256_json(rerank) if rerank is not None else ""


def heldout_lock(suite_id: int) -> None:
    """Inside a transaction: hold the suite's row until it ends, so that a comparison's declaration and a
    held-out computation of the same suite run one after the other (``SELECT ... FOR UPDATE`` on PostgreSQL;
    on SQLite every write transaction is IMMEDIATE, so writers are serialised already)."""
    list(Suite.objects.select_for_update().filter(pk=suite_id).values_list("pk", flat=True))


@dataclass(frozen=True)
class Exposure:
    """What the ledger says about the held-out split of the report's suite, this computation included."""

    times: int  # computations of held-out figures of this suite since it was frozen
    configurations: int  # distinct (retrieval, rerank) configurations among them
    first_scored_at: str  # when this report's configuration was first scored on the split (ISO 8601)
    fresh: bool
    changes: tuple[str, ...]  # what differs from the first configuration(s), when not fresh
    entry: dict[str, Any]  # the ledger entry this computation appended
    looks: int = 1  # distinct looks among the computations: the systems of one declaration count once
    declaration: Declaration | None = None  # the comparison this configuration was planned in, if any
    added_after: Declaration | None = None  # the earlier declaration this configuration is not in, when it warns

    @property
    def warning(self) -> str:
        if self.fresh:
            return ""
        changed = "; ".join(self.changes)
        if self.added_after is not None:
            d = self.added_after
            return ("The held-out split is no longer fresh for this comparison: this system was added after the "
                    f"comparison declared by {d.declared_by} on {d.declared_at:%Y-%m-%d} ({len(d.keys)} systems "
                    f"planned together) and is not one of them ({changed}). A configuration chosen after held-out "
                    "figures were seen needs a fresh held-out suite.")
        return ("The held-out split is no longer fresh for this comparison: it was scored before with another "
                f"configuration ({changed}). A configuration chosen after held-out figures were "
                "seen needs a fresh held-out suite.")

    @property
    def planned(self) -> str:
        """'planned together: N systems, declared by X on DATE; one exposure', or ''."""
        return self.declaration.sentence if self.declaration is not None else ""

    def as_json(self) -> dict[str, Any]:
        return {"split": PRIMARY_SPLIT, "times": self.times, "configurations": self.configurations,
                "looks": self.looks, "first_scored_at": self.first_scored_at, "fresh": self.fresh,
                "changes": list(self.changes), "warning": self.warning,
                "declaration": self.declaration.as_json() if self.declaration is not None else None,
                "added_after_declaration": self.added_after.as_json() if self.added_after is not None else None,
                "entry": self.entry}


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


@dataclass(frozen=True)
class _Look:
    """One look at the split: a declaration's systems, or one undeclared configuration; fixed at ``at``."""

    at: datetime
    keys: tuple[Key, ...]
    declaration: Declaration | None


@dataclass(frozen=True)
class Judgement:
    """What the ledger and the declarations say of one configuration (``exposure_judge``)."""

    changes: tuple[str, ...]
    looks: int
    declaration: Declaration | None
    added_after: Declaration | None


def _closest(candidates: Sequence[dict[str, Any]], current: dict[str, Any], fields: tuple[str, ...],
             what: str) -> list[str]:
    # Against a declaration of several configurations, name the fewest differences (the nearest one).
    return min((_changes(c, current, fields, what) for c in candidates), key=len)


def _first_look(looks: list[_Look], first_seen: dict[Key, datetime], has: Any) -> _Look | None:
    """The first look that holds configurations ``has`` accepts. Declarations made before the first computation
    of such a configuration are one look together: nothing was seen between them (an admin who forgot a system
    may declare it in a second comparison, as long as no figure has been computed)."""
    holding = [look for look in looks if any(has(k) for k in look.keys)]
    if not holding:
        return None
    computed = [at for k, at in first_seen.items() if has(k)]
    before = [look for look in holding
              if look.declaration is not None and computed and look.at <= min(computed)]
    if len(before) < 2:
        return holding[0]
    return _Look(before[0].at, tuple(k for look in before for k in look.keys), before[0].declaration)


def exposure_judge(*, ledger: Sequence[Mapping[str, Any]], declarations: Sequence[Declaration],
                   key: Key) -> Judgement:
    """Whether configuration ``key`` (computed at least once: it is in ``ledger``) is fresh on the split.

    ``ledger``: every computation of the split in order (retrieval_sha256, rerank_sha256, configuration,
    scored_at); ``declarations``: the split's declared comparisons, oldest first. A declaration counts for a
    configuration only when made no later than the configuration's first computation (a later one is
    refused by ``comparison_declare``; a forged row is simply not believed).
    """
    first_seen: dict[Key, datetime] = {}
    configurations: dict[Key, dict[str, Any]] = {}
    for e in ledger:
        k = (e["retrieval_sha256"], e["rerank_sha256"])
        first_seen.setdefault(k, e["scored_at"])
        configurations.setdefault(k, e["configuration"])
    planned_in: dict[Key, Declaration] = {}
    for declaration in declarations:
        for k, configuration in zip(declaration.keys, declaration.configurations, strict=True):
            configurations.setdefault(k, configuration)
            if k not in planned_in and (k not in first_seen or declaration.declared_at <= first_seen[k]):
                planned_in[k] = declaration
    # A hybrid (keyword order fused with a rerank run by the product's fixed rule, reciprocal rank fusion) is
    # planned with the rerank run it is made of: nobody chooses it after seeing figures.
    derived: dict[Key, Key] = {}
    for k, configuration in configurations.items():
        rerank = configuration.get("rerank") or {}
        if rerank.get("fusion"):
            base = configuration_key({**configuration, "rerank": {f: v for f, v in rerank.items() if f != "fusion"}})
            if base in planned_in and (k not in first_seen or planned_in[base].declared_at <= first_seen[k]):
                derived[k] = base
                planned_in.setdefault(k, planned_in[base])
    looks = [_Look(d.declared_at, tuple(k for k in (*d.keys, *(h for h, b in derived.items() if b in d.keys))
                                        if planned_in.get(k) is d), d) for d in declarations]
    looks = [look for look in looks if look.keys]
    looks += [_Look(at, (k,), None) for k, at in first_seen.items() if k not in planned_in]
    looks.sort(key=lambda look: look.at)  # stable: a declaration before a computation of the same instant
    first = _first_look(looks, first_seen, lambda k: True)
    assert first is not None  # ``key`` itself was computed
    first_rerank = _first_look(looks, first_seen, lambda k: bool(k[1]))

    current = configurations[key]
    changes = []
    if key[0] not in {r for r, _ in first.keys}:
        changes += _closest([configurations[k]["retrieval"] for k in first.keys], current["retrieval"],
                            RETRIEVAL_FIELDS, "retrieval")
    against = first if changes else None
    if key[1] and first_rerank is not None and key[1] not in {m for _, m in first_rerank.keys}:
        model_changes = _closest([configurations[k]["rerank"] for k in first_rerank.keys if k[1]],
                                 current["rerank"], RERANK_FIELDS, "model")
        changes += model_changes
        against = against or (first_rerank if model_changes else None)
    # Looks among the computations: one per declaration (those merged into the first look count once), one per
    # undeclared configuration.
    merged = {planned_in[k].pk for k in first.keys if k in planned_in}
    seen = {("first" if planned_in[k].pk in merged else planned_in[k].pk) if k in planned_in else k
            for k in first_seen}
    return Judgement(changes=tuple(changes), looks=len(seen), declaration=planned_in.get(key),
                     added_after=against.declaration if against is not None else None)


def exposure_record_inputs(inputs: ReportInputs, *, purpose: str, user: Any = None) -> Exposure:
    """Append one computation of held-out figures of (retrieval, rerank) configuration ``inputs`` to the ledger.

    The caller has held-out ranking queries to show (a report, or one system of a leaderboard).
    """
    configuration = exposure_configuration(inputs)
    retrieval_sha, rerank_sha = configuration_key(configuration)
    suite_id = inputs.suite.pk
    assert suite_id is not None  # held-out figures are of a stored suite
    with transaction.atomic():
        heldout_lock(suite_id)
        entry = HeldoutExposure.objects.create(
            suite_id=suite_id, split=PRIMARY_SPLIT, retrieval_sha256=retrieval_sha,
            rerank_sha256=rerank_sha, configuration=configuration, purpose=purpose,
            retrieval_run_id=inputs.retrieval.pk, rerank_run_id=inputs.rerank.pk if inputs.rerank else None,
            scored_by=user if getattr(user, "is_authenticated", False) else None,
        )
        ledger = list(HeldoutExposure.objects.filter(suite_id=suite_id, split=PRIMARY_SPLIT)
                      .order_by("id").values("retrieval_sha256", "rerank_sha256", "configuration", "scored_at"))
        declarations = comparisons_of(suite_id=suite_id, split=PRIMARY_SPLIT)
    judged = exposure_judge(ledger=ledger, declarations=declarations, key=(retrieval_sha, rerank_sha))
    this = next(e for e in ledger if (e["retrieval_sha256"], e["rerank_sha256"]) == (retrieval_sha, rerank_sha))
    return Exposure(
        times=len(ledger),
        configurations=len({(e["retrieval_sha256"], e["rerank_sha256"]) for e in ledger}),
        first_scored_at=this["scored_at"].isoformat(),
        fresh=not judged.changes,
        changes=judged.changes,
        entry={"id": entry.pk, "suite": f"{inputs.suite.name} v{inputs.suite.version}", "split": PRIMARY_SPLIT,
               "retrieval_sha256": retrieval_sha, "rerank_sha256": rerank_sha, "configuration": configuration,
               "purpose": purpose, "scored_at": entry.scored_at.isoformat()},
        looks=judged.looks, declaration=judged.declaration, added_after=judged.added_after,
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
    others = {first_stage_key(o.retrieval): o for o in inputs.others}
    systems = []
    with transaction.atomic():
        for system in board.systems:
            if not system.has_figures:
                systems.append(system)
                continue
            entry = reranks.get(system.key)
            other = others.get(system.key)
            if other is not None:  # another retrieval run's keyword order (a declared comparison)
                report_inputs = ReportInputs(suite=inputs.suite, retrieval=other.retrieval, queries=other.queries)
            else:
                report_inputs = ReportInputs(suite=inputs.suite,
                                             retrieval=(entry.retrieval if entry else None) or inputs.retrieval,
                                             queries=entry.queries if entry else inputs.queries,
                                             rerank=entry.meta if entry else None)
            exposure = exposure_record_inputs(report_inputs, purpose=purpose, user=user)
            systems.append(replace(system, exposure=exposure))
    by_key = {s.key: s for s in systems}
    splits = tuple(replace(s, rows=tuple(replace(r, system=by_key[r.system.key]) for r in s.rows))
                   for s in board.splits)
    return replace(board, systems=tuple(systems), splits=splits)


def exposure_declarations(exposures: Sequence[Exposure | None]) -> list[Declaration]:
    """The distinct comparisons the given systems were planned in, oldest first (for a leaderboard or summary)."""
    found = {e.declaration.pk: e.declaration for e in exposures if e is not None and e.declaration is not None}
    return sorted(found.values(), key=lambda d: (d.declared_at, d.pk))


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
    # A retrieval run whose keyword order is a system of the board (a declared comparison) was recorded there.
    shown = {s.key: s.exposure for s in board.systems if s.exposure is not None}
    stages = {first_stage_key(s.retrieval): s for s in inputs.first_stages}
    systems = []
    for system in known.systems:
        if system.retrieval.pk == inputs.retrieval.pk and keyword is not None:
            exposure = keyword
        elif system.key in shown:
            exposure = shown[system.key]
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
