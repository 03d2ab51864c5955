"""What a rerank run covered: the report's banner, its headline label, and the queries left out. Pure.

A report is only as good as the run behind it. A run is complete when it finished ``done`` and every
ranking query and outside-corpus control had all its candidates graded (none failed, unknown or never
sent). Anything else is incomplete: the report carries a banner with the counts, its headline says
"incomplete: n of N queries reranked" (N = the ranking queries of the headline population), and the
queries without a complete reranking are listed. A failed run, or one that graded no candidate at all,
gets no headline figures: with every candidate ungraded the "reranked order" is the keyword order, and
a difference of exactly zero would be an artefact, not a finding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchmarks.reports.inputs import ReportInputs

RERANKED_KINDS = ("ranking", "outside_corpus")
# "no candidates": retrieval gave the query nothing to rerank, so the run left nothing undone there.
COMPLETE_STATUSES = frozenset({"ok", "no candidates"})


@dataclass(frozen=True)
class UncoveredQuery:
    qid: str
    kind: str
    split: str
    status: str  # failed / partial / not run
    detail: str


@dataclass(frozen=True)
class RunCoverage:
    run: int | None
    status: str  # the rerank run's status
    error: str
    ranking_total: int
    ranking_reranked: int  # ranking queries with every candidate graded
    controls_total: int  # outside-corpus controls
    controls_reranked: int
    candidates_total: int
    candidates_graded: int
    uncovered: tuple[UncoveredQuery, ...]
    # From the run's storage when known: candidates failed/unknown/never sent, requests by receipt status.
    counts: Mapping[str, int]

    @property
    def complete(self) -> bool:
        return self.status == "done" and not self.uncovered

    @property
    def withheld(self) -> bool:
        """No headline figures: the run failed, or it graded no candidate."""
        return self.status == "failed" or (self.candidates_total > 0 and self.candidates_graded == 0)

    @property
    def headline_label(self) -> str:
        if self.complete:
            return ""
        return f"incomplete: {self.ranking_reranked} of {self.ranking_total} queries reranked"

    @property
    def banner(self) -> str:
        """One paragraph with the counts ('' for a complete run)."""
        if self.complete:
            return ""
        c = self.counts
        run = f"rerank run #{self.run}" if self.run is not None else "the rerank run"
        parts = [f"This report is built on an incomplete run: {run} is {self.status}"
                 + (f" ({self.error})" if self.error else "") + "."]
        parts.append(
            f"{self.ranking_reranked} of {self.ranking_total} ranking queries and {self.controls_reranked} of "
            f"{self.controls_total} outside-corpus controls were completely reranked; "
            f"{self.candidates_graded} of {self.candidates_total} candidates were graded"
            + (f" ({c['candidates_failed']} failed, {c['candidates_unknown']} sent with no answer recorded, "
               f"{c['candidates_never_sent']} never sent)" if "candidates_failed" in c else "") + ".")
        if "requests_sent" in c:
            parts.append(
                f"Requests: {c['requests_sent']} sent, {c['requests_answered']} answered, {c['requests_failed']} "
                f"failed, {c['requests_unknown']} unknown, {c['requests_not_sent']} not sent (refused before "
                "leaving this server).")
        if self.withheld:
            parts.append("No headline figures: with no candidate graded the reranked order is the keyword order, "
                         "so a comparison would show nothing about the model.")
        else:
            parts.append("Ungraded candidates are ranked after the graded ones in keyword order; the figures "
                         "below are not a comparison of the two orders over the whole suite.")
        return " ".join(parts)

    def as_json(self) -> dict[str, Any]:
        return {
            "complete": self.complete, "headline_figures": not self.withheld, "run": self.run,
            "status": self.status, "error": self.error, "headline_label": self.headline_label,
            "banner": self.banner,
            "ranking_queries": {"total": self.ranking_total, "reranked": self.ranking_reranked},
            "outside_corpus_controls": {"total": self.controls_total, "reranked": self.controls_reranked},
            "candidates": {"total": self.candidates_total, "graded": self.candidates_graded},
            "counts": dict(self.counts),
            "queries_not_completely_reranked": [vars(q) for q in self.uncovered],
        }


def run_coverage(inputs: ReportInputs) -> RunCoverage | None:
    """What the rerank run of ``inputs`` covered; None for a report without a rerank run."""
    meta = inputs.rerank
    if meta is None:
        return None
    reranked = [q for q in inputs.queries if q.kind in RERANKED_KINDS]
    ranking = [q for q in reranked if q.kind == "ranking"]
    controls = [q for q in reranked if q.kind == "outside_corpus"]
    uncovered = tuple(
        UncoveredQuery(qid=q.qid, kind=q.kind, split=q.split, status=q.rerank_status,
                       detail=q.rerank_error or f"rerank {q.rerank_status}")
        for q in reranked if q.rerank_status not in COMPLETE_STATUSES
    )
    return RunCoverage(
        run=meta.pk, status=meta.status, error=meta.error,
        ranking_total=len(ranking), ranking_reranked=sum(q.rerank_status in COMPLETE_STATUSES for q in ranking),
        controls_total=len(controls), controls_reranked=sum(q.rerank_status in COMPLETE_STATUSES for q in controls),
        candidates_total=sum(len(q.candidates) for q in reranked),
        candidates_graded=sum(c.p_useful is not None for q in reranked for c in q.candidates),
        uncovered=uncovered, counts=dict(meta.counts),
    )
