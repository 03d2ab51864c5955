"""The held-out exposure ledger: every computation of held-out figures is appended, a second configuration
scored on the same held-out split gets a warning naming the change, development figures never warn, and the
ledger survives a backup and restore."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from benchmarks.reports.models import HeldoutExposure
from tests.benchmarks.conftest import freeze_suite, import_synthetic

SECTIONS = [
    ("999.010", "Tenant deposits", "A landlord returns a tenant deposit within thirty days of the lease end."),
    ("999.020", "Court filing fees", "The clerk collects a filing fee for each petition to the court."),
    ("999.030", "Guardian reports", "A guardian files a yearly report on the child with the court."),
    ("999.040", "Notice of hearing", "Notice of a hearing is served on each party ten days before."),
]
FAMILIES = [{"id": "deposits", "split": "dev"}, {"id": "fees", "split": "heldout"},
            {"id": "guardians", "split": "heldout"}]


def _suite(*, heldout: bool = True):
    import_synthetic(SECTIONS, key="exposure.html")
    queries = [
        {"id": "d1", "kind": "ranking", "split": "dev", "family": "deposits",
         "text": "when is a tenant deposit returned", "targets": ["NRS 999.010"]},
    ]
    if heldout:
        queries += [
            {"id": "h1", "kind": "ranking", "split": "heldout", "family": "fees",
             "text": "filing fee for a petition", "targets": ["NRS 999.020"]},
            {"id": "h2", "kind": "ranking", "split": "heldout", "family": "guardians",
             "text": "yearly guardian report on a child", "targets": ["NRS 999.030"]},
        ]
    return freeze_suite(queries, name="exposure" if heldout else "exposure-dev",
                        families=FAMILIES if heldout else FAMILIES[:1])


def _report(client, run, fmt: str = "report.json") -> dict:
    response = client.get(f"/benchmarks/reports/retrieval/{run.pk}/{fmt}?replicates=1000")
    assert response.status_code == 200
    return json.loads(response.content)


@pytest.mark.django_db
def test_the_first_configuration_stays_fresh_and_a_second_one_is_warned(stakeholder_client):
    from benchmarks.retrieval.services import retrieval_run_create

    suite = _suite()
    first = retrieval_run_create(suite=suite, configuration="bm25-v1")
    exposure = _report(stakeholder_client, first)["heldout_exposure"]
    assert exposure["times"] == 1 and exposure["configurations"] == 1 and exposure["fresh"]
    assert exposure["warning"] == "" and exposure["entry"]["purpose"] == "export"
    assert _report(stakeholder_client, first)["heldout_exposure"]["times"] == 2

    # A second configuration scored on the same held-out split: the page's headline warns and names it.
    second = retrieval_run_create(suite=suite, configuration="heading-v1")
    page = stakeholder_client.get(f"/benchmarks/reports/retrieval/{second.pk}/?replicates=1000").content.decode()
    assert 'id="heldout-warning"' in page
    assert "no longer fresh" in page and "retrieval configuration: &#x27;bm25-v1&#x27; -&gt; &#x27;heading-v1&#x27;" \
        in page
    assert "scored 3 times with 2 distinct configurations" in page
    warned = _report(stakeholder_client, second)["heldout_exposure"]
    assert not warned["fresh"] and "heading-v1" in warned["warning"]

    # The first configuration is still the one the split is fresh for.
    again = _report(stakeholder_client, first)["heldout_exposure"]
    assert again["fresh"] and again["times"] == 5 and again["configurations"] == 2
    assert list(HeldoutExposure.objects.values_list("purpose", flat=True)) == [
        "export", "export", "page", "export", "export"]


@pytest.mark.django_db
def test_development_figures_are_never_recorded_and_never_warn(stakeholder_client):
    from benchmarks.retrieval.services import retrieval_run_create

    suite = _suite(heldout=False)
    for configuration in ("bm25-v1", "heading-v1"):
        run = retrieval_run_create(suite=suite, configuration=configuration)
        assert _report(stakeholder_client, run)["heldout_exposure"] is None
        page = stakeholder_client.get(f"/benchmarks/reports/retrieval/{run.pk}/?replicates=1000").content.decode()
        assert 'id="heldout-warning"' not in page and 'id="heldout-exposure"' not in page
    assert not HeldoutExposure.objects.exists()


@pytest.mark.django_db
def test_a_changed_model_is_named_in_the_warning():
    from benchmarks.reports.exposure import exposure_record
    from benchmarks.reports.selectors import report_build, rerank_scores_load
    from benchmarks.rerank.models import RerankRun
    from benchmarks.rerank.services import rerank_run_create
    from benchmarks.retrieval.services import retrieval_run_create

    run = retrieval_run_create(suite=_suite(), configuration="bm25-v1")

    def scored(rerank: RerankRun):
        scores, _ = rerank_scores_load(pk=rerank.pk)
        return exposure_record(report_build(run=run, rerank=scores), purpose="command").exposure

    first = rerank_run_create(retrieval_run=run, provider="local", enqueue=False)
    assert scored(first).fresh
    # The same retrieval reranked with another question version: a model change made after held-out
    # figures of the first one existed.
    second = rerank_run_create(retrieval_run=run, provider="local", enqueue=False)
    RerankRun.objects.filter(pk=second.pk).update(question_version="statute-relevance-v9")
    changed = scored(RerankRun.objects.get(pk=second.pk))
    assert not changed.fresh and changed.configurations == 2
    assert changed.changes == (f"model question_version: {first.question_version!r} -> 'statute-relevance-v9'",)
    assert scored(first).fresh


def test_the_ledger_survives_export_all_and_import_all(transactional_db, admin_user_, tmp_path):
    from django.test import Client

    from benchmarks.retrieval.services import retrieval_run_create

    suite = _suite()
    first = retrieval_run_create(suite=suite, configuration="bm25-v1")
    second = retrieval_run_create(suite=suite, configuration="heading-v1")
    client = Client()
    client.force_login(admin_user_)
    _report(client, first)
    _report(client, second)
    before = list(HeldoutExposure.objects.order_by("id").values_list(
        "retrieval_sha256", "rerank_sha256", "purpose", "scored_at"))

    backup = tmp_path / "backup.jsonl"
    call_command("export_all", str(backup), stdout=io.StringIO())
    call_command("flush", interactive=False, verbosity=0)
    call_command("import_all", str(backup), stdout=io.StringIO())
    assert list(HeldoutExposure.objects.order_by("id").values_list(
        "retrieval_sha256", "rerank_sha256", "purpose", "scored_at")) == before

    client = Client()
    client.force_login(type(admin_user_).objects.get(username=admin_user_.username))
    restored = _report(client, second)["heldout_exposure"]
    assert restored["times"] == 3 and not restored["fresh"]


def _metrics_json(tmp_path, run, *extra: str) -> tuple[dict, str]:
    """relevance_metrics --json on the TREC files export_report writes for ``run``."""
    folder = tmp_path / f"run{run.pk}"
    call_command("export_report", "--retrieval-run", str(run.pk), "--out", str(folder), stdout=io.StringIO())
    out, err = io.StringIO(), io.StringIO()
    call_command("relevance_metrics", "--qrels", str(folder / "qrels.trec"), "--run", str(folder / "keyword.trec"),
                 "--replicates", "200", "--json", *extra, stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


@pytest.mark.django_db
def test_relevance_metrics_json_carries_the_ledger_entry_when_it_computes_held_out_figures(tmp_path,
                                                                                          stakeholder_client):
    from benchmarks.retrieval.services import retrieval_run_create

    suite = _suite()
    first = retrieval_run_create(suite=suite, configuration="bm25-v1")
    # Not told where the files came from: nothing recorded, and the JSON says so.
    unnamed, _ = _metrics_json(tmp_path, first)
    assert unnamed["heldout_exposure"] is None and not HeldoutExposure.objects.exists()

    named, err = _metrics_json(tmp_path, first, "--retrieval-run", str(first.pk))
    exposure = named["heldout_exposure"]
    assert exposure["times"] == 1 and exposure["fresh"] and err == ""
    assert exposure["entry"]["purpose"] == "command" and exposure["entry"]["suite"] == f"{suite.name} v1"
    # The same entry shape as the report's own export.
    assert set(exposure) == set(_report(stakeholder_client, first)["heldout_exposure"])

    second = retrieval_run_create(suite=suite, configuration="heading-v1")
    warned, err = _metrics_json(tmp_path, second, "--retrieval-run", str(second.pk))
    assert not warned["heldout_exposure"]["fresh"] and warned["heldout_exposure"]["configurations"] == 2
    assert "no longer fresh" in err and "'bm25-v1' -> 'heading-v1'" in err
    assert list(HeldoutExposure.objects.values_list("purpose", "retrieval_run_id")) == [
        ("command", first.pk), ("export", first.pk), ("command", second.pk)]


@pytest.mark.django_db
def test_relevance_metrics_on_development_queries_records_nothing_and_refuses_foreign_runs(tmp_path):
    from benchmarks.retrieval.services import retrieval_run_create

    run = retrieval_run_create(suite=_suite(heldout=False), configuration="bm25-v1")
    result, _ = _metrics_json(tmp_path, run, "--retrieval-run", str(run.pk))
    assert result["heldout_exposure"] is None and not HeldoutExposure.objects.exists()
    other = retrieval_run_create(suite=_suite(), configuration="bm25-v1")
    # Files of a suite with held-out queries, attributed to a run of the development-only suite.
    with pytest.raises(CommandError, match=r"2 queries are not queries of suite exposure-dev v1 .*: h1, h2"):
        _metrics_json(tmp_path, other, "--retrieval-run", str(run.pk))
    with pytest.raises(CommandError, match="no retrieval run #999999"):
        _metrics_json(tmp_path, run, "--retrieval-run", "999999")
