"""Declared comparisons as plain data: what the held-out ledger and the pages read of them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from benchmarks.comparisons.models import DeclaredComparison


@dataclass(frozen=True)
class Declaration:
    """One declared comparison: the systems planned together on one held-out split, who declared them and when."""

    pk: int
    sha256: str
    suite: str  # "name vN"
    split: str
    keys: tuple[tuple[str, str], ...]  # (retrieval_sha256, rerank_sha256) per system, in declared order
    configurations: tuple[dict[str, Any], ...]  # aligned with keys
    labels: tuple[str, ...]  # aligned with keys: "keyword (retrieval #3)", "rerank #5: ..."
    declared_by: str
    declared_via: str
    declared_at: datetime
    # aligned with keys: (retrieval run id, rerank run id or None, hybrid) of each system, as declared
    runs: tuple[tuple[int, int | None, bool], ...] = ()

    @property
    def base_run_id(self) -> int | None:
        """The retrieval run whose leaderboard shows the comparison: the first whose keyword order is declared,
        else the first system's (its keyword order is then shown beside the declared systems as the reference)."""
        keyword = [r for r, rerank, _ in self.runs if rerank is None]
        return keyword[0] if keyword else (self.runs[0][0] if self.runs else None)

    @property
    def sentence(self) -> str:
        """The line the report, the leaderboard and the summary print."""
        n = len(self.keys)
        return (f"planned together: {n} system{'s' * (n != 1)}, declared by {self.declared_by} on "
                f"{self.declared_at:%Y-%m-%d}; one exposure")

    def as_json(self) -> dict[str, Any]:
        return {"id": self.pk, "sha256": self.sha256, "suite": self.suite, "split": self.split,
                "systems": [{"label": label, "retrieval_sha256": r, "rerank_sha256": m, "configuration": c}
                            for label, (r, m), c in zip(self.labels, self.keys, self.configurations, strict=True)],
                "declared_by": self.declared_by, "declared_via": self.declared_via,
                "declared_at": self.declared_at.isoformat(), "sentence": self.sentence}


def _declaration(row: DeclaredComparison) -> Declaration:
    systems = row.systems
    return Declaration(
        pk=row.pk, sha256=row.sha256, suite=f"{row.suite.name} v{row.suite.version}", split=row.split,
        keys=tuple((s["retrieval_sha256"], s["rerank_sha256"]) for s in systems),
        configurations=tuple(s["configuration"] for s in systems), labels=tuple(s["label"] for s in systems),
        declared_by=row.declared_by.get_username() if row.declared_by else "(nobody recorded)",
        declared_via=row.declared_via, declared_at=row.declared_at,
        runs=tuple((s["retrieval_run_id"], s.get("rerank_run_id"),
                    bool(s.get("hybrid", (s["configuration"].get("rerank") or {}).get("fusion"))))
                   for s in systems))


def comparisons_of(*, suite_id: int, split: str) -> list[Declaration]:
    """The comparisons declared on one split of one suite, oldest first."""
    rows = (DeclaredComparison.objects.filter(suite_id=suite_id, split=split).select_related("suite", "declared_by")
            .order_by("declared_at", "id"))
    return [_declaration(row) for row in rows]


def comparison_get(*, pk: int) -> Declaration | None:
    row = DeclaredComparison.objects.select_related("suite", "declared_by").filter(pk=pk).first()
    return _declaration(row) if row is not None else None


def comparison_list(*, suite_id: int | None = None) -> list[Declaration]:
    """Every declared comparison (of one suite when given), newest first."""
    rows = DeclaredComparison.objects.select_related("suite", "declared_by").order_by("-declared_at", "-id")
    if suite_id is not None:
        rows = rows.filter(suite_id=suite_id)
    return [_declaration(row) for row in rows]
