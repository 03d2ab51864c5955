"""The one page to send: a statute comparison's verdict, leaderboard, who confirmed what, caveats and exposure.

Everything on it is read from the leaderboard (``leaderboard.py``: the verdict sentence, the means and their
intervals), the suite (population and caveats, as the report's population box words them), how the suite
version's targets were made (``benchmarks.suites.confirmation.suite_target_origin``: the confirmation that
produced this version and this version's own) and the review pools the leaderboard read labels from (lawyers,
agreement, adjudications, judgments saved with credentials an admin once held). Who confirmed and who labelled
is the one provenance statement (``reviewapp.core.records.provenance``) over those origins. The caller records
the held-out exposure (``exposure.leaderboard_exposure_record``) before building it, as the leaderboard page
does, so a summary that shows held-out figures is a row in the ledger.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchmarks.labels.selectors import is_synthetic, run_pools
from benchmarks.reports.exposure import exposure_declarations
from benchmarks.reports.figures import PRIMARY_SPLIT, suite_caveats, suite_population
from benchmarks.reports.leaderboard import Leaderboard
from benchmarks.rerank.models import RerankRun
from benchmarks.suites.confirmation import suite_target_origin
from benchmarks.suites.models import Suite
from reviewapp.core.records.provenance import LabelOrigin, Procedure, provenance_sentences
from reviewapp.review.agreement.exports import pool_admin_held_complete, pool_idp_complete
from reviewapp.review.agreement.judgments import pool_completed_judgments
from reviewapp.review.agreement.selectors import pool_labels

if TYPE_CHECKING:
    from reviewapp.review.pools.refs import PoolRef


@dataclass(frozen=True)
class LabelSource:
    """One review pool the leaderboard's human labels came from, and how its labels were reached."""

    name: str
    lawyers: int  # distinct people with a complete judgment
    items: int
    agreed: int  # every counted reviewer gave the same grade
    adjudicated: int
    unresolved: int
    admin_held: int  # complete judgments saved after signing in with credentials an admin once held
    complete: int
    through_idp: int = 0  # complete judgments saved after signing in through the organisation's identity provider

    @property
    def origin(self) -> LabelOrigin:
        return LabelOrigin(
            role="labels", source=self.name, unit="item",
            procedures=((Procedure.LAWYER_BLIND, self.agreed), (Procedure.ADJUDICATED, self.adjudicated)),
            lawyer_count=self.lawyers, undecided=self.unresolved, answers=self.complete,
            admin_held=self.admin_held, through_idp=self.through_idp)


@dataclass(frozen=True)
class Summary:
    board: Leaderboard
    population: str
    caveats: tuple[str, ...]
    targets: LabelOrigin
    label_sources: tuple[LabelSource, ...]
    exposure: tuple[str, ...]  # one line per system whose held-out figures the summary shows

    @property
    def origins(self) -> tuple[LabelOrigin, ...]:
        """Every body of labels the summary's figures count: the targets first, then each review pool."""
        return (self.targets, *(source.origin for source in self.label_sources))

    @property
    def provenance(self) -> tuple[str, ...]:
        return provenance_sentences(self.origins)

    @property
    def targets_sentence(self) -> str:
        return self.provenance[0]


_HASH = re.compile(r"\b[0-9a-f]{64}\b")


def _exposure_lines(board: Leaderboard) -> tuple[str, ...]:
    # A comparison planned together first, once: its systems are one look at the split.
    lines = [f"{d.sentence[0].upper()}{d.sentence[1:]} (comparison #{d.pk}, sha256 {d.sha256[:12]}…)."
             for d in exposure_declarations([s.exposure for s in board.systems])]
    for system in board.systems:
        exposure = system.exposure
        if exposure is None:
            continue
        # A changed question hash is named by its first characters: the full one is in the ledger and exports.
        changes = [_HASH.sub(lambda m: m.group(0)[:12] + "…", c) for c in exposure.changes]
        state = "fresh" if exposure.fresh else "NOT fresh: " + "; ".join(changes)
        if exposure.added_after is not None:
            d = exposure.added_after
            state += f" (added after comparison #{d.pk}, declared by {d.declared_by} on {d.declared_at:%Y-%m-%d})"
        if exposure.declaration is not None:
            state += f", planned together (comparison #{exposure.declaration.pk})"
        looks = (f", {exposure.looks} look{'s' * (exposure.looks != 1)}"
                 if exposure.looks != exposure.configurations else "")
        lines.append(f"{system.key}: held-out split scored {exposure.times} time{'s' * (exposure.times != 1)} in "
                     f"{exposure.configurations} configuration{'s' * (exposure.configurations != 1)}{looks} "
                     f"(this one first on {exposure.first_scored_at[:10]}); {state}.")
    return tuple(lines)


def _label_sources(board: Leaderboard) -> tuple[LabelSource, ...]:
    # The leaderboard reads labels from each chosen run's newest pool made by people; the same pools here.

    pools: dict[int, PoolRef] = {}
    for entry in board.inputs.reranks:
        run = RerankRun.objects.filter(pk=entry.meta.pk).first() if entry.meta.pk is not None else None
        real = [p for p in run_pools(rerank_run=run) if not is_synthetic(p)] if run else []
        if real:
            pools.setdefault(real[0].pk, real[0])
    sources = []
    for pool in pools.values():
        labels = pool_labels(pool=pool)
        judgments = pool_completed_judgments(pool=pool)
        sources.append(LabelSource(
            name=f"{pool.name} ({pool.public_id})", lawyers=len({j.reviewer_id for j in judgments}),
            items=len(labels), agreed=sum(x.state == "agreed" for x in labels),
            adjudicated=sum(x.state == "adjudicated" for x in labels),
            unresolved=sum(x.state == "unresolved" for x in labels),
            admin_held=pool_admin_held_complete(pool=pool), complete=len(judgments),
            through_idp=sum(pool_idp_complete(pool=pool).values())))
    return tuple(sources)


def _targets(board: Leaderboard) -> LabelOrigin:
    suite_id = board.inputs.suite.pk
    assert suite_id is not None  # a leaderboard is of a stored suite
    return suite_target_origin(suite=Suite.objects.get(pk=suite_id))


def summary_build(*, board: Leaderboard) -> Summary:
    """The one-page summary of a leaderboard whose held-out exposure has already been recorded."""
    suite = board.inputs.suite
    return Summary(
        board=board,
        population=suite_population(suite, [s for s in board.splits if s.queries]),
        caveats=suite_caveats(suite),
        targets=_targets(board),
        label_sources=_label_sources(board),
        exposure=_exposure_lines(board),
    )


def summary_primary_first(board: Leaderboard) -> list:
    """The splits with queries, the held-out (primary) one first."""
    return sorted((s for s in board.splits if s.queries), key=lambda s: s.split != PRIMARY_SPLIT)
