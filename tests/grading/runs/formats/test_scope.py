"""A run's scope: the contracts it attempted, from a launched job or declared in the run file (JSON or JSON Lines);
unknown titles refused by name; grading counts spans and misses over the scope only."""

from __future__ import annotations

import json

from grading.dataset.models import Contract, Span
from grading.dataset.selectors import sample_scope
from grading.runs.jobs import extraction_job_create, job_extract_execute
from grading.runs.models import Extraction, ExtractionRun
from grading.runs.selectors import run_scope
from grading.scorecard.selectors import run_card
from scoring.cuad.grading import Thresholds
from tests.grading.cuad_fixture import gold_run

ALPHA, BETA = "ALPHA-DISTRIBUTOR AGREEMENT", "BETA-LICENSE AGREEMENT"


def _partial(model: str, titles: list[str]) -> dict:
    """The gold extractions of ``titles`` only."""
    run = gold_run(model)
    return {"model": model, "extractions": [e for e in run["extractions"] if e["contract"] in titles]}


def _jsonl(run: dict, scope: list[str]) -> str:
    return "\n".join([json.dumps({"model": run["model"], "contracts": scope})]
                     + [json.dumps(e) for e in run["extractions"]])


def test_a_run_file_declares_its_scope_as_a_top_level_contracts_array(loaded, admin_client_):
    doc = {**_partial("scoped-json", [ALPHA]), "contracts": [BETA, ALPHA]}
    response = admin_client_.post("/cuad/runs/", {"run_text": json.dumps(doc)})
    assert response.status_code == 302
    run = ExtractionRun.objects.get(model="scoped-json")
    assert sorted(run.scope.values_list("title", flat=True)) == [ALPHA, BETA]
    scope = run_scope(run=run, sample=loaded.sample)
    assert (scope.declared, scope.n, scope.full) == (True, 2, False)
    assert scope.caption() == f"2 of {len(sample_scope(sample=loaded.sample))} contracts of the seed-42 sample"


def test_a_json_lines_run_declares_its_scope_on_the_first_line_and_hashes_like_the_json_form(loaded, admin_client_):
    run = _partial("scoped-jsonl", [ALPHA])
    admin_client_.post("/cuad/runs/", {"run_text": _jsonl(run, [ALPHA])})
    stored = ExtractionRun.objects.get(model="scoped-jsonl")
    assert stored.source_format == "jsonl"
    assert list(stored.scope.values_list("title", flat=True)) == [ALPHA]
    # the same run as JSON is the same content (same hash): stored once
    same = admin_client_.post("/cuad/runs/", {"run_text": json.dumps({**run, "contracts": [ALPHA]})})
    assert same["Location"] == f"/cuad/runs/{stored.pk}/"
    # the same extractions without a scope are another run (they grade differently)
    admin_client_.post("/cuad/runs/", {"run_text": json.dumps(run)})
    assert ExtractionRun.objects.filter(model="scoped-jsonl").count() == 2


def test_unknown_titles_in_a_scope_are_refused_by_name_and_nothing_is_stored(loaded, admin_client_):
    before = ExtractionRun.objects.count()
    doc = {**_partial("bad-scope", [ALPHA]), "contracts": [ALPHA, "NO SUCH CONTRACT", "NOR THIS ONE"]}
    page = admin_client_.post("/cuad/runs/", {"run_text": json.dumps(doc)})
    assert page.status_code == 400
    assert ("top level, field &#x27;contracts&#x27;: unknown contract title(s) &#x27;NO SUCH CONTRACT&#x27;, "
            "&#x27;NOR THIS ONE&#x27;") in page.content.decode()
    lines = _jsonl(_partial("bad-scope", [ALPHA]), [ALPHA, "NO SUCH CONTRACT"])
    api = admin_client_.post("/api/v1/cuad/runs/", {"run": lines}, content_type="application/json")
    assert api.status_code == 400
    assert "line 1, field 'contracts': unknown contract title(s) 'NO SUCH CONTRACT'" in api.json()["errors"]
    assert ExtractionRun.objects.count() == before


def test_a_scope_that_leaves_out_an_extractions_contract_or_comes_late_is_refused(loaded, admin_client_):
    doc = {**_partial("inconsistent", [ALPHA, BETA]), "contracts": [ALPHA]}
    api = admin_client_.post("/api/v1/cuad/runs/", {"run": doc}, content_type="application/json")
    errors = api.json()["errors"]
    assert api.status_code == 400
    assert any(f"field 'contract': '{BETA}' is not in the run's declared 'contracts'" in e for e in errors)
    late = "\n".join(
        [json.dumps(e) for e in _partial("late", [ALPHA])["extractions"]] + [json.dumps({"contracts": [ALPHA]})]
    )
    api = admin_client_.post("/api/v1/cuad/runs/", {"run": late}, content_type="application/json")
    assert any("the scope may only be declared on the first line" in e for e in api.json()["errors"])
    empty = admin_client_.post("/api/v1/cuad/runs/", {"run": {**doc, "contracts": []}}, content_type="application/json")
    assert any("field 'contracts': expected a non-empty array" in e for e in empty.json()["errors"])


def test_a_scoped_run_is_graded_over_its_scope_only(loaded):
    from grading.runs.services import extraction_run_import

    run = _partial("alpha-only", [ALPHA])
    scoped, _ = extraction_run_import(dataset=loaded.dataset, raw=json.dumps({**run, "contracts": [ALPHA]}))
    unscoped, _ = extraction_run_import(dataset=loaded.dataset, raw=json.dumps(run))
    alpha = Contract.objects.get(dataset=loaded.dataset, title=ALPHA)
    alpha_spans = Span.objects.filter(contract=alpha).count()
    all_spans = Span.objects.filter(contract_id__in=sample_scope(sample=loaded.sample)).count()

    card = run_card(run=scoped, sample=loaded.sample, thresholds=Thresholds(), matcher="hungarian")
    counts = card.card.overall.counts
    assert card.card.n_contracts == 1
    assert counts["spans"] == alpha_spans and counts["missed"] == 0  # misses only over the scoped contract
    assert card.card.overall.recall.estimate == 1.0
    assert card.scope.caption() == f"1 of {len(sample_scope(sample=loaded.sample))} contracts of the seed-42 sample"

    whole = run_card(run=unscoped, sample=loaded.sample, thresholds=Thresholds(), matcher="hungarian")
    assert whole.card.overall.counts["spans"] == all_spans
    assert whole.card.overall.counts["missed"] == all_spans - alpha_spans
    assert whole.scope.caption() == f"{len(sample_scope(sample=loaded.sample))} of 4 contracts of the seed-42 sample"


def test_the_run_page_and_export_state_the_scope_and_the_export_pastes_back_to_the_same_run(loaded, admin_client_):
    from grading.runs.services import extraction_run_import

    run, _ = extraction_run_import(
        dataset=loaded.dataset, raw=json.dumps({**_partial("exported", [ALPHA, BETA]), "contracts": [ALPHA, BETA]})
    )
    page = admin_client_.get(f"/cuad/runs/{run.pk}/").content.decode()
    assert "2 of 4 contracts of the seed-42 sample" in page and "partial" in page
    exported = admin_client_.get(f"/cuad/runs/{run.pk}/run.json").json()
    assert exported["contracts"] == [ALPHA, BETA]
    again = admin_client_.post("/cuad/runs/", {"run_text": json.dumps(exported)})
    assert again["Location"] == f"/cuad/runs/{run.pk}/"
    listing = admin_client_.get("/api/v1/cuad/runs/").json()["runs"]
    mine = next(r for r in listing if r["id"] == run.pk)
    assert mine["scope"]["contracts"] == 2 and mine["scope"]["full"] is False
    noisy = next(r for r in listing if r["id"] == loaded.noisy.pk)
    assert noisy["scope"]["declared"] is False and noisy["scope"]["full"] is True
    assert "scoped to the whole sample" in admin_client_.get(f"/cuad/runs/{loaded.noisy.pk}/").content.decode()


def test_a_launched_job_records_the_contracts_it_attempted_as_the_runs_scope(loaded, low_threshold):
    job = extraction_job_create(sample=loaded.sample, provider="local", limit=2, queue=False)
    job = job_extract_execute(job_id=job.pk)
    assert job.status == "done"
    attempted = list(job.contracts.order_by("position").values_list("contract_id", flat=True))
    assert set(job.run.scope.values_list("id", flat=True)) == set(attempted)
    card = run_card(run=job.run, sample=loaded.sample, thresholds=Thresholds(), matcher="hungarian")
    assert card.card.n_contracts == 2
    gold_spans = Span.objects.filter(contract_id__in=attempted).count()
    assert card.card.overall.counts["spans"] == gold_spans  # misses of the two unattempted contracts not counted
    assert Extraction.objects.filter(run=job.run).exclude(contract_id__in=attempted).count() == 0
    assert card.scope.caption() == "2 of 4 contracts of the seed-42 sample"


def test_the_migration_records_a_launched_runs_contracts_as_its_scope(loaded, low_threshold):
    """Runs launched before scopes existed: the migration gives them their job's contracts (only adds rows)."""
    import importlib

    from django.apps import apps

    job = extraction_job_create(sample=loaded.sample, provider="local", limit=3, queue=False)
    job = job_extract_execute(job_id=job.pk)
    job.run.scope.clear()  # as stored before the scope existed
    migration = importlib.import_module("grading.migrations.0006_extraction_run_scope")
    migration.scope_from_jobs(apps, None)
    attempted = set(job.contracts.values_list("contract_id", flat=True))
    assert set(job.run.scope.values_list("id", flat=True)) == attempted and len(attempted) == 3
    assert not loaded.noisy.scope.exists()  # a pasted run keeps no scope: the whole sample
