"""A small synthetic suite for the target-confirmation tests (integration and browser)."""

from __future__ import annotations

from tests.benchmarks.conftest import freeze_suite, import_synthetic

SECTIONS = [
    ("999.010", "Tenant deposits", "A landlord returns a tenant deposit within thirty days of the lease end."),
    ("999.020", "Court filing fees", "The clerk collects a filing fee for each petition to the court."),
    ("999.030", "Guardian reports", "A guardian files a yearly report on the child with the court."),
    ("999.040", "Notice of hearing", "Notice of a hearing is served on each party ten days before."),
]
FAMILIES = [{"id": "deposits", "split": "dev"}, {"id": "fees", "split": "heldout"}]
NOMINATOR = "assistant (not a lawyer)"


def confirm_suite(targets_fee: list[str] | None = None):
    """Suite "confirm" v1: a development and a held-out ranking query, every target provisional."""
    import_synthetic(SECTIONS, key="confirm.html")
    return freeze_suite([
        {"id": "d1", "kind": "ranking", "split": "dev", "family": "deposits",
         "text": "when is a tenant deposit returned", "targets": ["NRS 999.010"]},
        {"id": "h1", "kind": "ranking", "split": "heldout", "family": "fees",
         "text": "filing fee for a petition", "targets": targets_fee or ["NRS 999.020"]},
    ], name="confirm", families=FAMILIES)
