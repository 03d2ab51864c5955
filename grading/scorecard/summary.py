"""The one page to send for a CUAD comparison: the leaderboard's verdict and standings, who made its labels, and
its label audits.

Read from the leaderboard (``leaderboard.leaderboard_view``: verdict, population, standings with contract-bootstrap
intervals), the labels the runs were graded against (a firm's frozen gold set, with how each entry was made, or
CUAD as published), and the label audits of its runs (``grading.audits``: two judges, raw agreement, Cohen's
kappa). Who made the labels is the one provenance statement (``reviewapp.core.records.provenance``) over
``cuad_label_origins``. CUAD has no held-out split, so there is no exposure to record.
"""

from __future__ import annotations

from dataclasses import dataclass

from grading.audits.selectors import AuditReport, audit_list, audit_report
from grading.contracts.gold.models import GoldSet
from grading.contracts.gold.provenance import gold_set_origin
from grading.scorecard.leaderboard import Leaderboard
from reviewapp.core.records.provenance import LabelOrigin, Procedure, provenance_sentences


@dataclass(frozen=True)
class CuadSummary:
    lb: Leaderboard
    audits: tuple[AuditReport, ...]
    origins: tuple[LabelOrigin, ...] = ()

    @property
    def provenance(self) -> tuple[str, ...]:
        return provenance_sentences(self.origins)


def cuad_label_origins(*, lb: Leaderboard) -> tuple[LabelOrigin, ...]:
    """The labels the leaderboard's runs were graded against: the firm's gold set (each entry by how it was made)
    or the dataset's published annotations."""
    dataset = lb.sample.dataset
    if dataset.is_gold and dataset.gold_set_version is not None:
        gold = GoldSet.objects.filter(contract_set_id=dataset.contract_set_id,
                                      version=dataset.gold_set_version).first()
        if gold is not None:
            return (gold_set_origin(gold),)
    return (LabelOrigin(role="labels", source=f"{dataset.name} (published annotations)", unit="contract",
                        procedures=((Procedure.PUBLISHED, lb.common),)),)


def cuad_summary_build(*, lb: Leaderboard) -> CuadSummary:
    """The leaderboard with who made its labels and the label audits of its runs, newest first."""
    runs = {e.run.pk for e in lb.entries}
    audits = tuple(audit_report(audit=a, with_impact=False) for a in audit_list() if a.run_id in runs)
    return CuadSummary(lb=lb, audits=audits, origins=cuad_label_origins(lb=lb))
