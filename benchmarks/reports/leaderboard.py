"""The statute leaderboard: every rerank run of one retrieval run, and keyword order, on the same candidates. Pure.

Population: the ranking queries of the retrieval run's frozen suite, one table per split (dev, held-out),
never pooled. Systems: the keyword order of the retrieval run, and for each chosen rerank run the same
candidates by its P(useful) descending (ties by keyword rank, ungraded candidates last: ``inputs.reranked_order``).
Every system ranks the SAME candidate set; a rerank run of another retrieval run is refused before this module
is reached (``selectors.leaderboard_inputs_load``).

Per split, one ``family_bootstraps`` call draws the query families once for every system, metric and pair:
means of Hit@1/5/10 and RR with percentile 95% intervals over query families; for every pair of systems the
paired difference (later - earlier in the listed order, so a rerank run against keyword order is rerank -
keyword) on the same draws. Its two-sided paired-bootstrap p-value (``scoring.stats.multiple``) is adjusted by
Holm's rule over every pair of one metric in one split (the pairs of one table), as
``MULTIPLE_COMPARISON_METHOD`` says on the page.

A rerank run's coverage (``coverage.run_coverage``) decides what it shows: a failed run, or one that graded no
candidate, gets no figures and says why; an incomplete one is shown with "incomplete: n of N queries reranked".

Human labels (judged P@5, pooled nDCG@5; ``scoring.ir.ranking``, as ``benchmarks.labels.metrics`` computes them)
are shown for a system in a split only when every query of the split has both defined; otherwise the cell says
"labels incomplete: n of N judged" (N: the distinct query-passage items its top five and the declared pools
need). A missing label is never filled.

Systems are listed in run order, not ranked: the intervals, not the order, say which differences are real.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.reports.figures import METRICS, PRIMARY_METRIC, PRIMARY_SPLIT, SPLITS, defined_metric
from benchmarks.reports.inputs import QueryInput, ReportInputs, RerankMeta, RetrievalMeta, SuiteMeta, reranked_order
from benchmarks.reports.reading.coverage import RunCoverage, run_coverage
from scoring.ir.family_bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED, PairedFamilyBootstrap, family_bootstraps
from scoring.ir.fusion import CITATION as RRF_CITATION
from scoring.ir.fusion import RRF_K, rrf_order
from scoring.ir.ranking import judged_precision_at_5, pooled_ndcg_at_5, query_ranking_metrics
from scoring.stats.bootstrap import Interval
from scoring.stats.multiple import MULTIPLE_COMPARISON_METHOD, bootstrap_p_value, holm_adjust
from scoring.stats.units import UnitSupport, count_of, p_value_text, unit_support
from scoring.stats.verdict import Contender, Duel, Verdict, verdict_sentence

LEADERBOARD_SCHEMA = "statute-leaderboard/1"
KEYWORD = "keyword"
HUMAN_METRICS = ("P@5", "nDCG@5")
HOLM_FAMILY = "every pair of systems on one metric in one split (the pairs of one table)"
ORDER_NOTE = "Systems are listed in run order, not ranked: read the intervals, not the order."
LABELS_NOTE = (
    "Judged P@5 and pooled nDCG@5 appear for a system only when every query of the split has all its top five "
    "and its whole declared pool labelled by people (completed, non-stale judgments of the chosen rerank runs' "
    "newest non-synthetic pools); otherwise the cell counts what is judged. A missing label is never filled."
)
COMPARISONS_NOTE = (
    "Hit@1/5/10, RR and coverage against the suite's nominated targets need no shared "
    "candidates: every retrieval configuration is scored on the same queries and targets, each on its own "
    "candidates (the table of retrieval configurations on known targets). A rerank run's or hybrid's difference "
    "from keyword order isolates the reranker only on shared candidates: the tables of this retrieval run. Judged "
    "P@5 and pooled nDCG@5 need shared candidates and pooled human labels, so they appear only there."
)
FUSION = f"rrf-k{RRF_K}"
PER_QUERY_COLUMNS = ("qid", "system", *METRICS, "split", "family")
FAMILY = "query family"
PRIMARY_LABEL = dict(SPLITS)[PRIMARY_SPLIT]


@dataclass(frozen=True)
class RerankEntry:
    """One chosen rerank run: its metadata and the retrieval run's queries with its P(useful) applied."""

    meta: RerankMeta
    queries: tuple[QueryInput, ...]
    # The retrieval run whose candidates it reranks when not the leaderboard's own (a declared comparison may
    # hold rerank runs of several retrieval runs of the suite); None: the leaderboard's run.
    retrieval: RetrievalMeta | None = None


@dataclass(frozen=True)
class LabelInputs:
    """Completed human passage labels from the chosen runs' review pools (plain data, no database)."""

    labels: Mapping[tuple[str, str], int]  # (qid, docid) -> grade 0..3
    members: Mapping[str, frozenset[str]]  # qid -> docids of the declared pools
    pools: tuple[str, ...] = ()  # what was read, for the page
    conflicts: int = 0  # items two pools labelled differently (left unlabelled)


@dataclass(frozen=True)
class LeaderboardInputs:
    suite: SuiteMeta
    retrieval: RetrievalMeta
    queries: tuple[QueryInput, ...]  # keyword order, no rerank applied
    reranks: tuple[RerankEntry, ...]
    labels: LabelInputs | None = None
    # Finished retrieval runs of the same suite (this one first), compared on known targets only.
    first_stages: tuple[FirstStageInput, ...] = ()
    # Keyword orders of other retrieval runs of the suite shown as systems of the board (a declared comparison):
    # Hit@k and RR against the nominated targets need no shared candidates, each ranks its own.
    others: tuple[FirstStageInput, ...] = ()


@dataclass(frozen=True)
class System:
    key: str  # "keyword" / "rerank-<pk>" / "hybrid-<pk>" / "<configuration>-run-<pk>" (another retrieval run)
    label: str
    rerank: RerankMeta | None
    coverage: RunCoverage | None
    exposure: Any = None  # set by the view: what the held-out ledger says about this configuration
    retrieval: RetrievalMeta | None = None  # its retrieval run when not the board's own

    @property
    def kind(self) -> str:
        """"keyword" (the board's run), "retrieval" (another run's keyword order), "rerank" or "hybrid"."""
        if self.rerank is not None:
            return "hybrid" if self.rerank.fusion else "rerank"
        return "keyword" if self.key == KEYWORD else "retrieval"

    @property
    def has_figures(self) -> bool:
        return self.coverage is None or not self.coverage.withheld

    @property
    def incomplete(self) -> str:
        """'' or "incomplete: n of N queries reranked"."""
        return self.coverage.headline_label if self.coverage is not None else ""

    @property
    def caveat(self) -> str:
        """'' or what every export row of this system must say about it (a simulated provider's answers)."""
        if self.rerank is not None and self.rerank.simulated:
            return "simulated provider: answers of the loopback test server, not a model"
        return ""

    @property
    def withheld_reason(self) -> str:
        return self.coverage.banner if self.coverage is not None and self.coverage.withheld else ""


@dataclass(frozen=True)
class PairFigure:
    """Paired difference a - b on one metric, its interval, p-value and Holm-adjusted p-value."""

    a: str
    b: str
    metric: str
    difference: Interval
    p_value: float
    p_adjusted: float


@dataclass(frozen=True)
class SystemRow:
    """One system in one split: means, its comparison with keyword order, human-label figures or why not."""

    system: System
    means: dict[str, Interval]
    vs_keyword: dict[str, PairFigure]  # empty for keyword order and for a system without figures
    human: dict[str, Interval]  # empty unless labels are complete for this system and split
    labels_judged: int
    labels_needed: int

    @property
    def labels_note(self) -> str:
        if self.human:
            return ""
        return f"labels incomplete: {self.labels_judged} of {self.labels_needed} judged"


@dataclass(frozen=True)
class SplitBoard:
    split: str
    label: str
    queries: int
    families: int
    rows: tuple[SystemRow, ...]
    pairs: tuple[PairFigure, ...]  # every pair of systems with figures, every metric

    def pairs_of(self, metric: str) -> list[PairFigure]:
        return [p for p in self.pairs if p.metric == metric]


@dataclass(frozen=True)
class QueryFigures:
    qid: str
    split: str
    family: str
    targets: tuple[str, ...]
    values: dict[str, dict[str, float]]  # system -> metric -> value
    rankings: dict[str, tuple[str, ...]]  # system -> docids in its order


@dataclass(frozen=True)
class Leaderboard:
    inputs: LeaderboardInputs
    systems: tuple[System, ...]
    splits: tuple[SplitBoard, ...]
    queries: tuple[QueryFigures, ...]
    replicates: int
    seed: int
    level: float = 0.95
    method: str = MULTIPLE_COMPARISON_METHOD
    holm_family: str = HOLM_FAMILY
    notes: tuple[str, ...] = (ORDER_NOTE, LABELS_NOTE, COMPARISONS_NOTE)
    known_targets: KnownTargets | None = None

    def system(self, key: str) -> System:
        return next(s for s in self.systems if s.key == key)

    @property
    def systems_sentence(self) -> str:
        """"keyword order, 1 rerank run, 1 hybrid and 2 other retrieval configurations (rm3-v1, qld-v1)": each
        system counted once, by what it is (a hybrid is not a second rerank run)."""
        kinds = [s.kind for s in self.systems]
        parts = ["keyword order"] if KEYWORD in kinds else []
        for kind, noun in (("rerank", "rerank run"), ("hybrid", "hybrid")):
            n = kinds.count(kind)
            if n:
                parts.append(count_of(n, noun))
        others = [s.retrieval.configuration for s in self.systems if s.kind == "retrieval" and s.retrieval]
        if others:
            parts.append(f"{count_of(len(others), 'other retrieval configuration')} ({', '.join(others)})")
        text = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
        if len(parts) == 1:
            return text
        if all(s.retrieval is None for s in self.systems):
            return f"{text} of the same candidates"
        return f"{text}; the systems of other retrieval runs rank those runs' own candidates"

    @property
    def primary(self) -> SplitBoard | None:
        return next((s for s in self.splits if s.split == PRIMARY_SPLIT and s.queries), None)

    @property
    def support(self) -> UnitSupport | None:
        """What the primary split's query families can support (None without held-out queries)."""
        board = self.primary
        return unit_support(board.families, unit=FAMILY) if board else None

    @property
    def verdict(self) -> Verdict:
        """The one sentence to quote: which systems are best on held-out Hit@5, after Holm's adjustment."""
        return _split_verdict(self.primary, self.replicates)

    def forest_rows(self) -> list[tuple[str, Interval | None, str]]:
        """(system label, held-out Hit@5 difference against keyword order, note) for every rerank system."""
        board = self.primary
        rows: list[tuple[str, Interval | None, str]] = []
        for system in self.systems[1:]:
            row = next((r for r in board.rows if r.system.key == system.key), None) if board else None
            pair = row.vs_keyword.get(PRIMARY_METRIC) if row else None
            if pair is None:
                rows.append((system.label, None, "no figures" if not system.has_figures else "no held-out queries"))
            else:
                note = (f"Holm p {_p_text(pair.p_adjusted, self.replicates)}"
                        + (f"; {pair.difference.note}" if pair.difference.note else "")
                        + (f"; {system.incomplete}" if system.incomplete else ""))
                rows.append((system.label, pair.difference, note))
        return rows


def _p_text(p: float, replicates: int) -> str:
    text = p_value_text(p, replicates=replicates)
    return text if text.startswith("<") or text == "none" else f"= {text}"


def system_key(rerank: RerankMeta) -> str:
    return f"hybrid-{rerank.pk}" if rerank.fusion else f"rerank-{rerank.pk}"


def system_label(rerank: RerankMeta, *, configuration: str = "keyword") -> str:
    own = f"rerank #{rerank.pk}: {rerank.provider_label} {rerank.model_id}, question {rerank.question_version}"
    if not rerank.fusion:
        return own
    return (f"hybrid of rerank #{rerank.pk}: reciprocal rank fusion (RRF, k={RRF_K}; {RRF_CITATION}) of the "
            f"{configuration} order and the order of {own}; the same candidates, ties by {configuration} rank")


def hybrid_order(candidates: Sequence[Any]) -> list[Any]:
    """RRF of the keyword order and the rerank run's order (``reranked_order``) of the same candidates."""
    keyword = sorted(candidates, key=lambda c: c.keyword_rank)
    by_docid = {c.docid: c for c in keyword}
    fused = rrf_order([[c.docid for c in keyword], [c.docid for c in reranked_order(keyword)]], k=RRF_K)
    return [by_docid[d] for d in fused]


def _metrics(ranked: Sequence[str], targets: frozenset[str]) -> dict[str, float]:
    values = query_ranking_metrics(list(ranked), targets).as_dict()
    return {m: float(defined_metric(values[m])) for m in METRICS}


def _human(ranked: Sequence[str], qid: str, labels: LabelInputs | None,
           graded: Mapping[str, int]) -> tuple[dict[str, float | None], set[tuple[str, str]]]:
    """(P@5 and pooled nDCG@5 of one system on one query, the items they need); ``graded``: docid -> grade."""
    members = labels.members.get(qid, frozenset()) if labels else frozenset()
    needed = {(qid, d) for d in ranked[:5]} | {(qid, d) for d in members}
    if labels is None:
        return {"P@5": None, "nDCG@5": None}, needed
    return {
        "P@5": judged_precision_at_5(list(ranked), graded),
        "nDCG@5": pooled_ndcg_at_5(list(ranked), members, graded) if members else None,
    }, needed


def leaderboard_compute(inputs: LeaderboardInputs, *, replicates: int = DEFAULT_REPLICATES,
                        seed: int = DEFAULT_SEED, level: float = 0.95) -> Leaderboard:
    """Every figure of the leaderboard from plain inputs (no database). See the module docstring."""
    ranking = [q.qid for q in inputs.queries if q.kind == "ranking"]
    for entry in inputs.reranks:
        if entry.retrieval is None and [q.qid for q in entry.queries] != [q.qid for q in inputs.queries]:
            raise ValueError(f"rerank run #{entry.meta.pk} does not rank the queries of retrieval run "
                             f"#{inputs.retrieval.pk}")
    stages: list[FirstStageInput | RerankEntry] = [
        *inputs.others, *(e for e in inputs.reranks if e.retrieval is not None)]
    for stage in stages:
        if [q.qid for q in stage.queries if q.kind == "ranking"] != ranking:
            raise ValueError(f"retrieval run #{stage.retrieval.pk if stage.retrieval else '?'} does not rank the "
                             f"queries of retrieval run #{inputs.retrieval.pk}")
    systems = [System(KEYWORD, f"keyword order of retrieval run #{inputs.retrieval.pk} "
                               f"({inputs.retrieval.configuration})", None, None)]
    queries_of: dict[str, tuple[QueryInput, ...]] = {KEYWORD: inputs.queries}
    for other in inputs.others:
        system = System(first_stage_key(other.retrieval), first_stage_label(other.retrieval), None, None,
                        retrieval=other.retrieval)
        systems.append(system)
        queries_of[system.key] = other.queries
    for entry in inputs.reranks:
        retrieval = entry.retrieval or inputs.retrieval
        coverage = run_coverage(ReportInputs(suite=inputs.suite, retrieval=retrieval, queries=entry.queries,
                                             rerank=entry.meta))
        label = system_label(entry.meta, configuration=retrieval.configuration)
        if entry.retrieval is not None:
            label += f" (candidates of retrieval run #{retrieval.pk})"
        system = System(system_key(entry.meta), label, entry.meta, coverage, retrieval=entry.retrieval)
        systems.append(system)
        queries_of[system.key] = entry.queries
    shown = [s for s in systems if s.has_figures]

    rows: list[QueryFigures] = []
    human_of: dict[tuple[str, str], dict[str, float | None]] = {}
    needed_of: dict[tuple[str, str], set] = {}
    by_qid = {key: {q.qid: q for q in queries} for key, queries in queries_of.items()}
    graded_of: dict[str, dict[str, int]] = {}
    for (qid, docid), grade in (inputs.labels.labels.items() if inputs.labels else ()):
        graded_of.setdefault(qid, {})[docid] = grade
    for q in inputs.queries:
        if q.kind != "ranking":
            continue
        targets = frozenset(q.targets)
        values, rankings = {}, {}
        for system in shown:
            # Another retrieval run's query carries its own targets' versions: the same nominated sections.
            candidates = sorted(by_qid[system.key][q.qid].candidates, key=lambda c: c.keyword_rank)
            if system.rerank is None:
                ordered = candidates
            else:
                ordered = hybrid_order(candidates) if system.rerank.fusion else reranked_order(candidates)
            ranked = tuple(c.docid for c in ordered)
            rankings[system.key] = ranked
            values[system.key] = _metrics(ranked, targets)
            human_of[system.key, q.qid], needed_of[system.key, q.qid] = _human(ranked, q.qid, inputs.labels,
                                                                          graded_of.get(q.qid, {}))
        rows.append(QueryFigures(q.qid, q.split, q.family, q.targets, values, rankings))

    splits = []
    for split, label in SPLITS:
        in_split = [r for r in rows if r.split == split]
        splits.append(_split_board(split, label, in_split, shown, human_of, needed_of, inputs.labels,
                                   replicates=replicates, seed=seed, level=level))
    known = (known_targets_compute(inputs.first_stages, replicates=replicates, seed=seed, level=level)
             if inputs.first_stages else None)
    return Leaderboard(inputs=inputs, systems=tuple(systems), splits=tuple(splits), queries=tuple(rows),
                       replicates=replicates, seed=seed, level=level, known_targets=known)


def _split_board(split: str, label: str, in_split: list[QueryFigures], shown: list[System],
                 human_of: dict, needed_of: dict, labels: LabelInputs | None, *, replicates: int, seed: int,
                 level: float) -> SplitBoard:
    if not in_split:
        return SplitBoard(split, label, 0, 0, (), ())
    families = [r.family for r in in_split]
    column = {(s.key, m): [r.values[s.key][m] for r in in_split] for s in shown for m in METRICS}
    complete_human = {}
    for s in shown:
        human = {m: [human_of[s.key, r.qid][m] for r in in_split] for m in HUMAN_METRICS}
        if all(v is not None for values in human.values() for v in values):
            complete_human[s.key] = human
    singles_in = dict(column)
    singles_in.update({(key, m): values for key, human in complete_human.items() for m, values in human.items()})
    pairs_in = {
        (later.key, earlier.key, m): (column[later.key, m], column[earlier.key, m])
        for j, later in enumerate(shown) for earlier in shown[:j] for m in METRICS
    }
    # One call: every system, metric and pair rides the same resampled families.
    singles, pairs = family_bootstraps(singles_in, pairs_in, families, replicates=replicates, seed=seed,
                                       level=level, keep_replicates=True)
    figures: dict[tuple[str, str, str], PairFigure] = {}
    for metric in METRICS:
        keys = [k for k in pairs if k[2] == metric]
        p_values = [_p_value(pairs[k]) for k in keys]
        for key, p, adjusted in zip(keys, p_values, holm_adjust(p_values), strict=True):
            figures[key] = PairFigure(key[0], key[1], metric, pairs[key].difference, p, adjusted)
    system_rows = []
    for s in shown:
        needed = set().union(*(needed_of[s.key, r.qid] for r in in_split))
        judged = sum(item in labels.labels for item in needed) if labels else 0
        system_rows.append(SystemRow(
            system=s,
            means={m: singles[s.key, m].interval for m in METRICS},
            vs_keyword={m: figures[s.key, KEYWORD, m] for m in METRICS} if s.key != KEYWORD else {},
            human={m: singles[s.key, m].interval for m in HUMAN_METRICS} if s.key in complete_human else {},
            labels_judged=judged, labels_needed=len(needed),
        ))
    return SplitBoard(split, label, len(in_split), len(set(families)), tuple(system_rows), tuple(figures.values()))


def _p_value(pair: PairedFamilyBootstrap) -> float:
    if pair.replicate_differences is None:
        return float("nan")
    return bootstrap_p_value(pair.replicate_differences)


# --------------------------------------------------------------------------- retrieval configurations on known targets

COVERAGE = "coverage"
KNOWN_METRICS = (*METRICS, COVERAGE)
KNOWN_HOLM_FAMILY = "every pair of retrieval configurations on one metric in one split"
KNOWN_NOTE = (
    "Each retrieval configuration ranks its own candidates; all are scored on the same queries against the same "
    "nominated targets (every version of a target section counts), so no shared candidates are needed. Coverage: "
    "the share of a query's target sections among its k candidates (what a reranker of that run could reach)."
)


@dataclass(frozen=True)
class FirstStageInput:
    """One finished retrieval run of the suite: its metadata and queries with candidates in its own order."""

    retrieval: RetrievalMeta
    queries: tuple[QueryInput, ...]


@dataclass(frozen=True)
class FirstStage:
    key: str  # "<configuration>-run-<pk>"
    label: str  # what the system is: configuration, engine, k, method and parameters (with its citation)
    retrieval: RetrievalMeta
    exposure: Any = None  # set by the view, as for the leaderboard's systems
    incomplete: str = ""  # a first stage is never partly run: a failed run is not listed


@dataclass(frozen=True)
class KnownTargetRow:
    system: FirstStage
    means: dict[str, Interval]


@dataclass(frozen=True)
class KnownTargetSplit:
    split: str
    label: str
    queries: int
    families: int
    rows: tuple[KnownTargetRow, ...]
    pairs: tuple[PairFigure, ...]

    def pairs_of(self, metric: str) -> list[PairFigure]:
        return [p for p in self.pairs if p.metric == metric]


@dataclass(frozen=True)
class KnownTargets:
    """Retrieval configurations of one suite compared on its known targets, per split, with paired intervals."""

    systems: tuple[FirstStage, ...]
    splits: tuple[KnownTargetSplit, ...]
    replicates: int
    seed: int
    metrics: tuple[str, ...] = KNOWN_METRICS
    holm_family: str = KNOWN_HOLM_FAMILY
    note: str = KNOWN_NOTE

    @property
    def primary(self) -> KnownTargetSplit | None:
        return next((s for s in self.splits if s.split == PRIMARY_SPLIT and s.queries), None)

    @property
    def verdict(self) -> Verdict:
        return _split_verdict(self.primary, self.replicates)


def _split_verdict(board: Any, replicates: int) -> Verdict:
    """The verdict sentence on held-out Hit@5 of one split's rows and pairs (either table)."""
    endpoint = f"{PRIMARY_LABEL} {PRIMARY_METRIC}"
    if board is None:
        return verdict_sentence(metric=endpoint, contenders=(), duels=(), population="no held-out queries",
                                support=unit_support(0, unit=FAMILY), replicates=replicates)
    contenders = [Contender(r.system.key, r.means[PRIMARY_METRIC].estimate, r.system.incomplete)
                  for r in board.rows]
    duels = [Duel(p.a, p.b, p.difference, p.p_adjusted) for p in board.pairs_of(PRIMARY_METRIC)]
    population = f"{count_of(board.queries, PRIMARY_LABEL + ' query')} in {count_of(board.families, FAMILY)}"
    return verdict_sentence(metric=endpoint, contenders=contenders, duels=duels, population=population,
                            support=unit_support(board.families, unit=FAMILY), replicates=replicates)


def first_stage_key(retrieval: RetrievalMeta) -> str:
    """"rm3-v1-run-7": the configuration in the key, so the verdict sentence names what it compares."""
    return f"{retrieval.configuration}-run-{retrieval.pk}"


def first_stage_label(retrieval: RetrievalMeta) -> str:
    return (f"retrieval #{retrieval.pk}: {retrieval.configuration} on {retrieval.engine}, {retrieval.k} candidates. "
            f"{retrieval.description}")


def known_targets_compute(first_stages: Sequence[FirstStageInput], *, replicates: int = DEFAULT_REPLICATES,
                          seed: int = DEFAULT_SEED, level: float = 0.95) -> KnownTargets:
    """Hit@1/5/10, RR and coverage of each run's own order on the ranking queries, per split; every pair paired
    over query families on one draw, Holm-adjusted per metric and split. Runs must be of the same queries."""
    if not first_stages:
        raise ValueError("no retrieval run to compare")
    ranking = [q.qid for q in first_stages[0].queries if q.kind == "ranking"]
    for stage in first_stages[1:]:
        if [q.qid for q in stage.queries if q.kind == "ranking"] != ranking:
            raise ValueError(f"retrieval run #{stage.retrieval.pk} does not rank the queries of retrieval run "
                             f"#{first_stages[0].retrieval.pk}")
    systems = [FirstStage(first_stage_key(s.retrieval), first_stage_label(s.retrieval), s.retrieval)
               for s in first_stages]
    values: dict[str, list[dict[str, float | None]]] = {}
    for system, stage in zip(systems, first_stages, strict=True):
        rows = []
        for q in stage.queries:
            if q.kind != "ranking":
                continue
            ranked = [c.docid for c in sorted(q.candidates, key=lambda c: c.keyword_rank)]
            rows.append({**_metrics(ranked, frozenset(q.targets)), COVERAGE: q.coverage(ranked)})
        values[system.key] = rows
    queries = [q for q in first_stages[0].queries if q.kind == "ranking"]
    splits = []
    for split, label in SPLITS:
        positions = [i for i, q in enumerate(queries) if q.split == split]
        if not positions:
            splits.append(KnownTargetSplit(split, label, 0, 0, (), ()))
            continue
        families = [queries[i].family for i in positions]
        column = {(s.key, m): [values[s.key][i][m] for i in positions] for s in systems for m in KNOWN_METRICS}
        pairs_in = {(later.key, earlier.key, m): (column[later.key, m], column[earlier.key, m])
                    for j, later in enumerate(systems) for earlier in systems[:j] for m in KNOWN_METRICS}
        singles, pairs = family_bootstraps(column, pairs_in, families, replicates=replicates, seed=seed, level=level,
                                           keep_replicates=True)
        figures = []
        for metric in KNOWN_METRICS:
            keys = [k for k in pairs if k[2] == metric]
            p_values = [_p_value(pairs[k]) for k in keys]
            figures += [PairFigure(k[0], k[1], metric, pairs[k].difference, p, adjusted)
                        for k, p, adjusted in zip(keys, p_values, holm_adjust(p_values), strict=True)]
        rows_out = tuple(KnownTargetRow(s, {m: singles[s.key, m].interval for m in KNOWN_METRICS}) for s in systems)
        splits.append(KnownTargetSplit(split, label, len(positions), len(set(families)), rows_out, tuple(figures)))
    return KnownTargets(systems=tuple(systems), splits=tuple(splits), replicates=replicates, seed=seed)
