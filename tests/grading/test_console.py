"""CUAD console: permissions, pages, exports, paste validation, live regrade from stored pair scores, explorer."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from django.core.management import call_command

from grading.dataset.models import Contract, Span
from grading.runs import jobs as console
from grading.runs.models import ConsoleJob, Extraction, ExtractionRun
from grading.scorecard import selectors as cs
from scoring.cuad.grading import PairTable, Thresholds, grade, score_contract
from tests.grading.console_support import FABRICATED, load, random_run

PAGES = ["/cuad/", "/cuad/dataset/", "/cuad/runs/", "/cuad/scorecard/", "/cuad/explorer/", "/cuad/playground/"]
APIS = [
    "/api/cuad/dataset/",
    "/api/cuad/runs/",
    "/api/cuad/scorecard/",
    "/api/cuad/explorer/",
    "/api/cuad/playground/?a=x&b=x",
]


@pytest.fixture
def loaded(db, tmp_path):
    return load(tmp_path)


# ---------------------------------------------------------------------------
# Permissions


def test_reviewers_get_403_on_every_console_page_and_api(loaded, reviewer_client):
    job = ConsoleJob.objects.create(kind="grade", dataset=loaded.dataset, total=1)
    urls = [*PAGES, *APIS, f"/cuad/runs/{loaded.gold.pk}/", f"/cuad/jobs/{job.pk}/", f"/cuad/jobs/{job.pk}/progress/",
            f"/api/cuad/runs/{loaded.gold.pk}/", f"/api/cuad/jobs/{job.pk}/"]
    for url in urls:
        assert reviewer_client.get(url).status_code == 403, url
    for url in ["/cuad/runs/", "/cuad/runs/launch/", f"/cuad/jobs/{job.pk}/resume/", "/api/cuad/runs/",
                "/api/cuad/jobs/"]:
        assert reviewer_client.post(url, {}).status_code == 403, url


def test_anonymous_visitors_are_sent_to_the_login_page(loaded, client):
    response = client.get("/cuad/scorecard/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert client.get("/api/cuad/scorecard/").status_code in (401, 403)


def test_stakeholders_read_every_page_but_cannot_paste_or_launch(loaded, stakeholder_client):
    for url in PAGES:
        assert stakeholder_client.get(url).status_code == 200, url
    before = ExtractionRun.objects.count()
    assert stakeholder_client.post("/cuad/runs/", {"run_text": "{}"}).status_code == 403
    assert stakeholder_client.post("/cuad/runs/launch/", {"provider": "local"}).status_code == 403
    assert stakeholder_client.post("/api/cuad/jobs/", {"provider": "local"}).status_code == 403
    assert ExtractionRun.objects.count() == before
    page = stakeholder_client.get("/cuad/runs/").content.decode()
    assert "Paste or upload a run" not in page


# ---------------------------------------------------------------------------
# Exports


@pytest.mark.parametrize("url", PAGES)
def test_every_page_exports_json_and_csv(loaded, stakeholder_client, url):
    data = stakeholder_client.get(url + "?format=json")
    assert data.status_code == 200 and data["Content-Type"].startswith("application/json")
    json.loads(data.content)
    table = stakeholder_client.get(url + "?format=csv")
    assert table.status_code == 200 and table["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(table.content.decode())))
    assert len(rows) >= 2


def test_the_run_export_is_the_grader_format_and_pastes_back_to_the_same_run(loaded, admin_client_):
    exported = admin_client_.get(f"/cuad/runs/{loaded.noisy.pk}/?format=json").content.decode()
    before = ExtractionRun.objects.count()
    response = admin_client_.post("/cuad/runs/", {"run_text": exported})
    assert response.status_code == 302 and response["Location"] == f"/cuad/runs/{loaded.noisy.pk}/"
    assert ExtractionRun.objects.count() == before


def test_the_scorecard_csv_has_the_headline_first_and_one_row_per_type(loaded, stakeholder_client):
    text = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}&format=csv").content.decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["category"] == "ALL"
    assert [r["category"] for r in rows[1:]] == ["Anti-Assignment", "Document Name", "Governing Law"]


# ---------------------------------------------------------------------------
# Paste / upload


def test_a_pasted_invalid_run_shows_each_error_by_index_and_field_and_stores_nothing(loaded, admin_client_):
    bad = {"model": "m", "extractions": [
        {"contract": "NOPE", "category": "Governing Law", "text": "x"},
        {"contract": "ALPHA-DISTRIBUTOR AGREEMENT", "category": "Governing Law", "text": " "},
        {"contract": "ALPHA-DISTRIBUTOR AGREEMENT", "category": "Bogus", "text": 3},
    ]}
    before = (ExtractionRun.objects.count(), Extraction.objects.count())
    response = admin_client_.post("/cuad/runs/", {"run_text": json.dumps(bad)})
    assert response.status_code == 400
    page = response.content.decode()
    assert "extractions[0], field &#x27;contract&#x27;: unknown contract" in page
    assert "extractions[1], field &#x27;text&#x27;: empty text" in page
    assert "extractions[2], field &#x27;text&#x27;: wrong type" in page
    assert (ExtractionRun.objects.count(), Extraction.objects.count()) == before


def test_a_json_lines_error_names_the_line(loaded, admin_client_):
    lines = '{"model": "m"}\n{"contract": "ALPHA-DISTRIBUTOR AGREEMENT", "category": "Governing Law"}\nnot json\n'
    response = admin_client_.post("/cuad/runs/", {"run_text": lines})
    page = response.content.decode()
    assert response.status_code == 400
    assert "line 2, field &#x27;text&#x27;: missing" in page and "line 3: not valid JSON" in page


def test_an_uploaded_valid_run_is_graded_right_away(loaded, admin_client_):
    from django.core.files.uploadedfile import SimpleUploadedFile

    run = random_run(np.random.default_rng(3), model="uploaded")
    upload = SimpleUploadedFile("mine.jsonl", "\n".join(json.dumps(e) for e in run["extractions"]).encode()
                                + b'\n{"model": "uploaded"}\n')
    response = admin_client_.post("/cuad/runs/", {"run_file": upload})
    assert response.status_code == 302
    stored = ExtractionRun.objects.get(model="uploaded")
    assert stored.source_name == "mine.jsonl" and stored.source_format == "jsonl"
    assert stored.n_extractions == len(run["extractions"])


def test_a_large_pasted_run_is_graded_by_a_task_with_progress_that_stops_polling(
    loaded, admin_client_, celery_worker, monkeypatch
):
    from tests.helpers import wait_until

    monkeypatch.setattr(console, "INLINE_LIMIT", 2)
    original = console.run_paste
    monkeypatch.setattr(console, "run_paste", lambda **kw: original(**{**kw, "inline_limit": 2}))
    run = random_run(np.random.default_rng(5), model="big")
    response = admin_client_.post("/cuad/runs/", {"run_text": json.dumps(run)})
    assert response.status_code == 302 and "/cuad/jobs/" in response["Location"]
    job = ConsoleJob.objects.get(kind="grade")
    wait_until(lambda: ConsoleJob.objects.get(pk=job.pk).finished, timeout=60)
    job.refresh_from_db()
    assert job.status == "done" and job.run.model == "big" and job.raw_run == ""
    progress = admin_client_.get(f"/cuad/jobs/{job.pk}/progress/", HTTP_HX_REQUEST="true")
    assert progress.status_code == 286
    assert f"/cuad/runs/{job.run_id}/" in progress.content.decode()


def test_the_progress_fragment_keeps_polling_while_a_job_is_queued(loaded, stakeholder_client):
    job = ConsoleJob.objects.create(kind="grade", dataset=loaded.dataset, total=10, stage="queued")
    response = stakeholder_client.get(f"/cuad/jobs/{job.pk}/progress/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and 'hx-trigger="every 1s"' in response.content.decode()


def test_running_a_grade_job_twice_imports_once(loaded):
    job = ConsoleJob.objects.create(
        kind="grade", dataset=loaded.dataset, raw_run=json.dumps(random_run(np.random.default_rng(9))), total=3
    )
    first = console.job_grade_execute(job_id=job.pk)
    assert first.status == "done"
    assert console.job_grade_execute(job_id=job.pk) is None  # the claim fails: nothing runs again


# ---------------------------------------------------------------------------
# Live regrade


def _fresh_grade(run: ExtractionRun, contract_ids: list[int], thresholds: Thresholds, matcher: str):
    """Grade from the texts, recomputing every pair score (independent of what was stored)."""
    cats = list(run.dataset.categories.order_by("position", "name"))
    cat_index = {c.pk: i for i, c in enumerate(cats)}
    ext_c, ext_k, ext_f1, ext_g, ext_s, span_c, span_k = [], [], [], [], [], [], []
    offset = 0
    for ci, cid in enumerate(contract_ids):
        contract = Contract.objects.get(pk=cid)
        spans = list(Span.objects.filter(contract=contract).order_by("category_id", "answer_index"))
        exts = list(Extraction.objects.filter(run=run, contract=contract).order_by("position"))
        scores = score_contract(contract.text, [(e.category_id, e.text) for e in exts],
                                [(s.category_id, s.text) for s in spans])
        for i, e in enumerate(exts):
            ext_c.append(ci)
            ext_k.append(cat_index[e.category_id])
            ext_f1.append(scores.matched_f1[matcher][i])
            ext_g.append(scores.grounding[i])
            j = int(scores.matched_span[matcher][i])
            ext_s.append(offset + j if j >= 0 else -1)
        for s in spans:
            span_c.append(ci)
            span_k.append(cat_index[s.category_id])
        offset += len(spans)
    table = PairTable(
        np.array(ext_c, dtype=np.int64), np.array(ext_k, dtype=np.int64), np.array(ext_f1), np.array(ext_g),
        np.array(ext_s, dtype=np.int64), np.array(span_c, dtype=np.int64), np.array(span_k, dtype=np.int64),
        len(contract_ids), len(cats),
    )
    return grade(table, thresholds, replicates=1000, seed=0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_regrade_from_stored_pair_scores_equals_a_fresh_grade_at_random_settings(loaded, seed):
    rng = np.random.default_rng(seed)
    from grading.services import extraction_run_import

    run, _ = extraction_run_import(dataset=loaded.dataset, raw=json.dumps(random_run(rng, model=f"r{seed}")))
    ids = list(cs.sample_scope(sample=loaded.sample))
    for _ in range(4):
        correct = float(rng.uniform(0.2, 1.0))
        thresholds = Thresholds(correct=correct, partial=float(rng.uniform(0, correct)),
                                grounding=float(rng.uniform(0, 1)))
        matcher = ["hungarian", "greedy"][int(rng.integers(2))]
        live = cs.run_card(run=run, sample=loaded.sample, thresholds=thresholds, matcher=matcher)
        fresh = _fresh_grade(run, ids, thresholds, matcher)
        assert live.card.overall.as_dict() == fresh.overall.as_dict()
        for row, figures in zip(live.card.rows, fresh.per_category, strict=True):
            assert row.figures.as_dict() == figures.as_dict()


def test_the_console_scorecard_equals_the_grade_cuad_command(loaded, tmp_path, stakeholder_client):
    run_file = tmp_path / "run.json"
    run_file.write_text(stakeholder_client.get(f"/cuad/runs/{loaded.noisy.pk}/?format=json").content.decode())
    manifest = tmp_path / "manifest.json"
    manifest.write_text(loaded.sample.manifest)
    out = io.StringIO()
    call_command("grade_cuad", "--run", str(run_file), "--manifest", str(manifest), "--correct", "0.6",
                 "--partial", "0.3", "--grounding", "0.5", "--matcher", "greedy", "--json", stdout=out)
    command = json.loads(out.getvalue())
    api = stakeholder_client.get(
        f"/api/cuad/scorecard/?run={loaded.noisy.pk}&correct=0.6&partial=0.3&grounding=0.5&matcher=greedy"
    ).json()
    for key in ("precision", "recall", "f1", "ci", "counts", "per_category", "matcher", "thresholds"):
        assert api[key] == command[key], key


def test_the_regrade_reads_no_text_and_recomputes_no_pair_score(loaded, monkeypatch, stakeholder_client):
    stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}")  # warm: pair scores read once

    def forbidden(*args, **kwargs):
        raise AssertionError("pair scores were recomputed")

    import scoring.cuad.grading as scoring

    monkeypatch.setattr(scoring, "score_contract", forbidden)
    monkeypatch.setattr(scoring, "f1_matrix", forbidden)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        response = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}&correct=0.9&matcher=greedy",
                                          HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert not any("grading_contract" in q["sql"] and '"text"' in q["sql"] for q in queries.captured_queries)


def test_moving_a_threshold_changes_the_scorecard_in_place(loaded, stakeholder_client):
    low = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}&correct=0.2&partial=0.1",
                                 HTTP_HX_REQUEST="true")
    high = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}&correct=1&partial=0.9",
                                  HTTP_HX_REQUEST="true")
    assert low.content.decode().lstrip().startswith('<div id="card"')
    assert "<html" not in low.content.decode()
    assert low.context["card"].card.overall.f1.estimate > high.context["card"].card.overall.f1.estimate
    assert "Server-Timing" in low


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("correct=1.5", "correct: 1.5 is outside [0, 1]"),
        ("grounding=-0.1", "grounding: -0.1 is outside [0, 1]"),
        ("correct=0.3&partial=0.6", "partial floor 0.6 is above the correct threshold 0.3"),
        ("correct=abc", "correct: &#x27;abc&#x27; is not a number"),
        ("matcher=random", "matcher: &#x27;random&#x27; is not one of hungarian, greedy"),
        ("correct=nan", "correct: nan is outside [0, 1]"),
    ],
)
def test_absurd_parameters_are_refused_with_a_message(loaded, stakeholder_client, query, message):
    page = stakeholder_client.get(f"/cuad/scorecard/?{query}")
    assert page.status_code == 400 and message in page.content.decode()
    fragment = stakeholder_client.get(f"/cuad/scorecard/?{query}", HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200 and message in fragment.content.decode()
    assert 'id="card"' in fragment.content.decode()
    api = stakeholder_client.get(f"/api/cuad/scorecard/?{query}")
    assert api.status_code == 400 and api.json()["errors"]


def test_sorting_by_a_column_orders_rows_with_undefined_figures_last(loaded, stakeholder_client):
    response = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}&sort=f1&dir=desc")
    rows = response.context["rows"]
    values = [r.figures.f1.estimate for r in rows]
    defined = [v for v in values if not np.isnan(v)]
    assert defined == sorted(defined, reverse=True)
    assert all(np.isnan(v) for v in values[len(defined):])
    by_name = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}&sort=category&dir=desc").context["rows"]
    assert [r.category for r in by_name] == sorted([r.category for r in by_name], reverse=True)


def test_the_headline_states_its_population_and_a_row_links_to_the_explorer(loaded, stakeholder_client):
    page = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}").content.decode()
    assert "4 contracts of the seed-42 sample; intervals resample contracts" in page
    assert "/cuad/explorer/?sample=" in page and "type=Governing+Law" in page


def test_several_runs_compare_side_by_side_with_the_matcher_delta(loaded, stakeholder_client):
    response = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}&run={loaded.gold.pk}")
    comparison = response.context["comparison"]
    assert [c.run.pk for c in comparison.cards] == [loaded.noisy.pk, loaded.gold.pk]
    assert comparison.cards[1].card.overall.f1.estimate == 1.0
    card = response.context["card"]
    hungarian = cs.run_card(run=loaded.noisy, sample=loaded.sample, thresholds=Thresholds(), matcher="hungarian")
    greedy = cs.run_card(run=loaded.noisy, sample=loaded.sample, thresholds=Thresholds(), matcher="greedy")
    assert card.delta_f1 == pytest.approx(hungarian.card.overall.f1.estimate - greedy.card.overall.f1.estimate)
    data = stakeholder_client.get(f"/api/cuad/scorecard/?run={loaded.noisy.pk}&run={loaded.gold.pk}").json()
    assert len(data["comparison"]) == 2


# ---------------------------------------------------------------------------
# Explorer


def test_the_explorer_shows_graded_extractions_next_to_spans_with_offsets(loaded, stakeholder_client):
    alpha = Contract.objects.get(title="ALPHA-DISTRIBUTOR AGREEMENT")
    response = stakeholder_client.get(f"/cuad/explorer/?run={loaded.noisy.pk}&type=Governing+Law&contract={alpha.pk}")
    ex = response.context["ex"]
    outcomes = {e.text: e.outcome for e in ex.extractions}
    assert outcomes[FABRICATED] == "hallucinated"
    fabricated = next(e for e in ex.extractions if e.text == FABRICATED)
    assert fabricated.located is None
    assert "found nowhere in the contract" in response.content.decode()
    for e in ex.extractions:
        if e.located:
            assert alpha.text[e.located.start:e.located.end].lower() == e.text.lower()
    for s in ex.spans:
        assert alpha.text[s.located.start:s.located.end] == s.text


def test_the_explorer_locates_a_quote_whose_spacing_differs(db):
    text = "Intro.  This   Agreement shall\nbe governed by Nevada law."
    found = cs.locate(text, "this agreement shall be governed")
    assert (found.start, found.how) == (text.index("This"), "whitespace-normalised")
    assert cs.locate(text, "Ohio law") is None


# ---------------------------------------------------------------------------
# Dataset


def test_the_dataset_page_shows_seed_parameters_hash_counts_and_a_chart(loaded, stakeholder_client):
    page = stakeholder_client.get("/cuad/dataset/").content.decode()
    assert loaded.dataset.sha256 in page and "--seed 42" in page and "<svg" in page
    data = stakeholder_client.get("/api/cuad/dataset/").json()
    assert data["sha256"] == loaded.dataset.sha256 and data["parameters"]["seed"] == 42
    assert {t["name"] for t in data["types"]} == {"Document Name", "Governing Law", "Anti-Assignment"}
    counts = {t["name"]: t["sampled"] for t in data["types"]}
    assert counts == {"Document Name": 4, "Governing Law": 4, "Anti-Assignment": 2}


# ---------------------------------------------------------------------------
# API


def test_the_api_pastes_a_run_and_refuses_an_invalid_one_with_errors(loaded, admin_client_):
    bad = admin_client_.post("/api/cuad/runs/", {"run": {"model": "m", "extractions": [{"contract": "X"}]}},
                             content_type="application/json")
    assert bad.status_code == 400
    assert "extractions[0], field 'text': missing" in bad.json()["errors"]
    good = admin_client_.post("/api/cuad/runs/", {"run": random_run(np.random.default_rng(1), model="api")},
                              content_type="application/json")
    assert good.status_code == 201 and good.json()["model"] == "api"
    assert set(good.json()) == {"id", "model", "source_name", "source_format", "n_extractions", "content_sha256",
                                "created_at", "in_sample", "heuristic", "headline"}


@pytest.mark.parametrize("seed", range(6))
def test_the_live_grade_equals_the_graders_grade_on_random_pair_tables(seed):
    from scoring.cuad.grading import grade

    rng = np.random.default_rng(seed)
    nc, nk = int(rng.integers(1, 30)), int(rng.integers(1, 8))
    n_spans = int(rng.integers(0, 120))
    n_ext = int(rng.integers(0, 150))
    span_contract = rng.integers(0, nc, n_spans)
    span_category = rng.integers(0, nk, n_spans)
    ext_span = np.full(n_ext, -1)
    matched = rng.permutation(n_spans)[: min(n_spans, n_ext // 2)]
    ext_span[: len(matched)] = matched
    ext_contract = np.where(ext_span >= 0, span_contract[np.maximum(ext_span, 0)], rng.integers(0, nc, n_ext))
    ext_category = np.where(ext_span >= 0, span_category[np.maximum(ext_span, 0)], rng.integers(0, nk, n_ext))
    table = PairTable(ext_contract, ext_category, rng.random(n_ext), rng.random(n_ext), ext_span,
                      span_contract, span_category, nc, nk)
    correct = float(rng.uniform(0.2, 1))
    thresholds = Thresholds(correct, float(rng.uniform(0, correct)), float(rng.uniform(0, 1)))
    live = cs.grade_live(table, thresholds, replicates=300, seed=seed)
    reference = grade(table, thresholds, replicates=300, seed=seed)
    assert live.overall.as_dict() == reference.overall.as_dict()
    assert live.overall.credit == reference.overall.credit
    assert [f.as_dict() for f in live.per_category] == [f.as_dict() for f in reference.per_category]


def test_the_scorecard_without_any_run_says_what_to_do(db, tmp_path, stakeholder_client):
    from grading.services import cuad_load, sample_create
    from tests.grading.cuad_fixture import cuad_bytes

    path = tmp_path / "CUAD_v1.json"
    path.write_bytes(cuad_bytes())
    sample_create(dataset=cuad_load(path=path).dataset, n=4, min_per_type=1, seed=42)
    response = stakeholder_client.get("/cuad/scorecard/")
    assert response.status_code == 200 and "there is no extraction run yet" in response.content.decode()
