"""The demo declares its systems one comparison before any held-out figure is read, once."""

from __future__ import annotations

import io

import pytest

from benchmarks.comparisons.models import DeclaredComparison
from benchmarks.demo import load_demo_comparison
from tests.benchmarks.reports.report.test_report_pages import _stored_report_inputs
from tests.factories import make_user


@pytest.mark.django_db
def test_the_demo_declares_its_systems_once_before_any_held_out_figure(django_user_model, client):
    admin = make_user(django_user_model, "admin", "admin", staff=True)
    stored = _stored_report_inputs()  # keyword-v1 with a local rerank run, and a heading-v1 run, two splits
    out = io.StringIO()
    load_demo_comparison(retrieval_run=stored["run"], stdout=out)
    assert DeclaredComparison.objects.count() == 1, out.getvalue()
    declared = DeclaredComparison.objects.get()
    assert [(s["retrieval_run_id"], s.get("rerank_run_id")) for s in declared.systems] == [
        (stored["run"].pk, None), (stored["run"].pk, stored["rerank"].pk), (stored["secondary"].pk, None)]
    assert "3 systems planned together" in out.getvalue()
    load_demo_comparison(retrieval_run=stored["run"], stdout=out)  # again: already declared, nothing new
    assert DeclaredComparison.objects.count() == 1 and "not declared" in out.getvalue()
    # The leaderboard then opens without a held-out warning.
    client.force_login(admin)
    response = client.get(f"/benchmarks/reports/leaderboard/{stored['run'].pk}/?replicates=1000&seed=7")
    page = response.content.decode()
    assert response.status_code == 200 and "heldout-warning" not in page
    assert "Planned together: 3 systems, declared by admin on" in page

