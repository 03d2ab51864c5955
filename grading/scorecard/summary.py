"""The one page to send for a CUAD comparison: the leaderboard's verdict and standings, and its label audits.

Read from the leaderboard (``leaderboard.leaderboard_view``: verdict, population, standings with contract-bootstrap
intervals) and the label audits of its runs (``grading.audits``: two judges, raw agreement, Cohen's kappa). CUAD has
no held-out split, so there is no exposure to record.
"""

from __future__ import annotations

from dataclasses import dataclass

from grading.audits.selectors import AuditReport, audit_list, audit_report
from grading.scorecard.leaderboard import Leaderboard


@dataclass(frozen=True)
class CuadSummary:
    lb: Leaderboard
    audits: tuple[AuditReport, ...]


def cuad_summary_build(*, lb: Leaderboard) -> CuadSummary:
    """The leaderboard with the label audits of its runs, newest first."""
    runs = {e.run.pk for e in lb.entries}
    audits = tuple(audit_report(audit=a, with_impact=False) for a in audit_list() if a.run_id in runs)
    return CuadSummary(lb=lb, audits=audits)
