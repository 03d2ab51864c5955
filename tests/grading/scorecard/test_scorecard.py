"""The live scorecard: a regrade from stored pair scores equals a fresh grade and the grade_cuad command;
sorting, comparison of runs, refusals."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from django.core.management import call_command

from grading.dataset.models import Contract, Span
from grading.dataset.selectors import sample_scope
from grading.runs.models import Extraction, ExtractionRun
from grading.scorecard.selectors import grade_live, run_card
from scoring.cuad.grading import PairTable, Thresholds, grade
from scoring.cuad.pair_scores import score_contract
from tests.grading.console_support import random_run


def test_the_scorecard_csv_has_the_headline_first_and_one_row_per_type(loaded, stakeholder_client):
    text = stakeholder_client.get(f"/cuad/scorecard/scorecard.csv?run={loaded.noisy.pk}").content.decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["category"] == "ALL"
    assert [r["category"] for r in rows[1:]] == ["Anti-Assignment", "Document Name", "Governing Law"]


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
    from grading.runs.services import extraction_run_import

    run, _ = extraction_run_import(dataset=loaded.dataset, raw=json.dumps(random_run(rng, model=f"r{seed}")))
    ids = list(sample_scope(sample=loaded.sample))
    for _ in range(4):
        correct = float(rng.uniform(0.2, 1.0))
        thresholds = Thresholds(correct=correct, partial=float(rng.uniform(0, correct)),
                                grounding=float(rng.uniform(0, 1)))
        matcher = ["hungarian", "greedy"][int(rng.integers(2))]
        live = run_card(run=run, sample=loaded.sample, thresholds=thresholds, matcher=matcher)
        fresh = _fresh_grade(run, ids, thresholds, matcher)
        assert live.card.overall.as_dict() == fresh.overall.as_dict()
        for row, figures in zip(live.card.rows, fresh.per_category, strict=True):
            assert row.figures.as_dict() == figures.as_dict()


def test_the_console_scorecard_equals_the_grade_cuad_command(loaded, tmp_path, stakeholder_client):
    run_file = tmp_path / "run.json"
    run_file.write_text(stakeholder_client.get(f"/cuad/runs/{loaded.noisy.pk}/run.json").content.decode())
    manifest = tmp_path / "manifest.json"
    manifest.write_text(loaded.sample.manifest)
    out = io.StringIO()
    call_command("grade_cuad", "--run", str(run_file), "--manifest", str(manifest), "--correct", "0.6",
                 "--partial", "0.3", "--grounding", "0.5", "--matcher", "greedy", "--json", stdout=out)
    command = json.loads(out.getvalue())
    api = stakeholder_client.get(
        f"/api/v1/cuad/scorecard/?run={loaded.noisy.pk}&correct=0.6&partial=0.3&grounding=0.5&matcher=greedy"
    ).json()
    for key in ("precision", "recall", "f1", "ci", "counts", "per_category", "matcher", "thresholds"):
        assert api[key] == command[key], key


def test_the_regrade_reads_no_text_and_recomputes_no_pair_score(loaded, monkeypatch, stakeholder_client):
    stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}")  # warm: pair scores read once

    def forbidden(*args, **kwargs):
        raise AssertionError("pair scores were recomputed")

    monkeypatch.setattr("scoring.cuad.pair_scores.score_contract", forbidden)
    monkeypatch.setattr("scoring.cuad.pair_scores.f1_matrix", forbidden)
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
        ("correct=7", "correct: 7 is outside [0, 1]"),
        ("partial=", "partial: the box is empty; enter a number between 0 and 1 (default 0.4)"),
        ("correct=0.7&partial=%20&grounding=0.8", "partial: the box is empty"),
        ("grounding=high", "grounding: &#x27;high&#x27; is not a number; enter a number between 0 and 1"),
        ("correct=0.3&partial=0.6", "partial: the partial floor 0.6 is above the correct threshold 0.3"),
    ],
)
def test_absurd_parameters_are_refused_with_a_message(loaded, stakeholder_client, query, message):
    page = stakeholder_client.get(f"/cuad/scorecard/?{query}")
    assert page.status_code == 400 and message in page.content.decode()
    fragment = stakeholder_client.get(f"/cuad/scorecard/?{query}", HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200 and message in fragment.content.decode()
    assert 'id="card"' in fragment.content.decode()
    api = stakeholder_client.get(f"/api/v1/cuad/scorecard/?{query}")
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
    assert "/cuad/scorecard/explorer/?sample=" in page and "type=Governing+Law" in page


def test_several_runs_compare_side_by_side_with_the_matcher_delta(loaded, stakeholder_client):
    response = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}&run={loaded.gold.pk}")
    comparison = response.context["comparison"]
    assert [c.run.pk for c in comparison.cards] == [loaded.noisy.pk, loaded.gold.pk]
    assert comparison.cards[1].card.overall.f1.estimate == 1.0
    card = response.context["card"]
    hungarian = run_card(run=loaded.noisy, sample=loaded.sample, thresholds=Thresholds(), matcher="hungarian")
    greedy = run_card(run=loaded.noisy, sample=loaded.sample, thresholds=Thresholds(), matcher="greedy")
    assert card.delta_f1 == pytest.approx(hungarian.card.overall.f1.estimate - greedy.card.overall.f1.estimate)
    data = stakeholder_client.get(f"/api/v1/cuad/scorecard/?run={loaded.noisy.pk}&run={loaded.gold.pk}").json()
    assert len(data["comparison"]["runs"]) == 2


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
    live = grade_live(table, thresholds, replicates=300, seed=seed)
    reference = grade(table, thresholds, replicates=300, seed=seed)
    assert live.overall.as_dict() == reference.overall.as_dict()
    assert live.overall.credit == reference.overall.credit
    assert [f.as_dict() for f in live.per_category] == [f.as_dict() for f in reference.per_category]


def test_the_scorecard_without_any_run_says_what_to_do(db, tmp_path, stakeholder_client):
    from grading.dataset.services import cuad_load, sample_create
    from tests.grading.cuad_fixture import cuad_bytes

    path = tmp_path / "CUAD_v1.json"
    path.write_bytes(cuad_bytes())
    sample_create(dataset=cuad_load(path=path).dataset, n=4, min_per_type=1, seed=42)
    response = stakeholder_client.get("/cuad/scorecard/")
    assert response.status_code == 200 and "there is no extraction run yet" in response.content.decode()


def test_a_cleared_threshold_box_is_never_replaced_by_the_default(loaded, stakeholder_client):
    """An empty box used to grade silently at the default; now the page says which box is empty."""
    fragment = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}&correct=0.7&partial=&grounding=0.8",
                                      HTTP_HX_REQUEST="true")
    assert "card" not in fragment.context and "partial: the box is empty" in fragment.content.decode()
    explorer = stakeholder_client.get(f"/cuad/scorecard/explorer/?run={loaded.noisy.pk}&correct=")
    assert explorer.status_code == 400 and "correct: the box is empty" in explorer.content.decode()
    # absent (a plain link) still means the defaults
    plain = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}")
    assert plain.status_code == 200 and plain.context["view"].thresholds == Thresholds()


def test_the_threshold_boxes_are_not_blocked_by_browser_validation(loaded, stakeholder_client):
    """htmx sends nothing for a form the browser finds invalid (a number box holding 7 with max=1, or text),
    which left the old figures on screen; the form opts out so the server names the field."""
    page = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}").content.decode()
    start = page.index('<form id="controls"')
    form = page[start:page.index("</form>", start)]
    assert "novalidate" in form and 'type="number"' not in form and 'max="1"' not in form
