"""An optional confidence per extraction, in every run format, stored, and CUAD's own metric computed from it."""

from __future__ import annotations

import csv
import io
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from grading.runs.models import Extraction
from grading.runs.run_format import RunFormatError, parse_run
from grading.runs.services import extraction_run_import
from grading.scorecard.selectors import run_scorecard
from tests.grading.cuad_fixture import gold_run

CONTRACTS, CATEGORIES = {"A", "B"}, {"Parties", "Governing Law"}


def _extractions(confidence: bool = True) -> list[dict]:
    rows = [
        {"contract": "A", "category": "Parties", "text": "Acme, Inc.", "confidence": 0.9},
        {"contract": "B", "category": "Governing Law", "text": "laws of Nevada", "confidence": 0.25},
    ]
    return rows if confidence else [{k: v for k, v in row.items() if k != "confidence"} for row in rows]


def _csv(rows: list[dict], model: str | None = "m") -> str:
    out = io.StringIO()
    names = list(rows[0]) + (["model"] if model else [])
    writer = csv.DictWriter(out, fieldnames=names)
    writer.writeheader()
    for row in rows:
        writer.writerow(row | ({"model": model} if model else {}))
    return out.getvalue()


def test_a_confidence_reads_the_same_from_json_json_lines_and_csv_and_is_part_of_the_content():
    rows = _extractions()
    as_json = parse_run(json.dumps({"model": "m", "extractions": rows}), contracts=CONTRACTS, categories=CATEGORIES)
    as_lines = parse_run("\n".join(json.dumps({"model": "m", **r}) for r in rows), contracts=CONTRACTS,
                         categories=CATEGORIES)
    as_csv = parse_run(_csv(rows), contracts=CONTRACTS, categories=CATEGORIES)
    assert [e.confidence for e in as_json.extractions] == [0.9, 0.25]
    assert as_json.canonical() == as_lines.canonical() == as_csv.canonical()
    assert (as_json.source_format, as_lines.source_format, as_csv.source_format) == ("json", "jsonl", "csv")
    without = parse_run(json.dumps({"model": "m", "extractions": _extractions(False)}), contracts=CONTRACTS,
                        categories=CATEGORIES)
    # A run without confidences hashes as before they existed.
    assert "confidence" not in without.canonical()["extractions"][0]
    assert without.canonical() != as_json.canonical()


def test_a_csv_run_without_a_model_column_takes_the_default_model():
    parsed = parse_run(_csv(_extractions(False), model=None), contracts=CONTRACTS, categories=CATEGORIES,
                       default_model="file-stem")
    assert parsed.model == "file-stem" and parsed.extractions[1].confidence is None


@pytest.mark.parametrize(
    ("confidences", "message"),
    [
        ([0.9, None], r"given on 1 of 2 extractions \(first without: extractions\[1\]\)"),
        ([1.5, 0.2], r"extractions\[0\], field 'confidence': 1.5 is outside \[0, 1\]"),
        (["high", 0.2], r"extractions\[0\], field 'confidence': 'high' is not a number"),
        ([True, 0.2], r"extractions\[0\], field 'confidence': expected a number in \[0, 1\], got boolean"),
    ],
)
def test_a_bad_or_partial_confidence_is_refused_naming_where(confidences, message):
    rows = [row | {"confidence": c} for row, c in zip(_extractions(False), confidences, strict=True)]
    rows = [{k: v for k, v in row.items() if v is not None} for row in rows]
    with pytest.raises(RunFormatError, match=message):
        parse_run(json.dumps({"model": "m", "extractions": rows}), contracts=CONTRACTS, categories=CATEGORIES)


def test_a_csv_row_that_does_not_fit_its_header_is_named_by_line():
    text = "contract,category,text,confidence\nA,Parties,Acme,0.5\nA,Parties\n"
    with pytest.raises(RunFormatError, match="line 3: 2 cells, the header names 4"):
        parse_run(text, contracts=CONTRACTS, categories=CATEGORIES, default_model="m")


@pytest.mark.django_db
def test_confidences_are_stored_and_the_scorecard_carries_cuads_own_metric(loaded):
    run = gold_run("gold-with-confidence")
    for index, extraction in enumerate(run["extractions"]):
        extraction["confidence"] = 0.5 + index / 100
    stored, created = extraction_run_import(dataset=loaded.dataset, raw=json.dumps(run))
    assert created
    assert list(Extraction.objects.filter(run=stored).values_list("confidence", flat=True)) == [
        e["confidence"] for e in run["extractions"]]
    card = run_scorecard(run=stored, replicates=50)
    assert card.paper is not None
    assert card.paper.overall.aupr.estimate == pytest.approx(1.0)  # every answer found at every threshold below
    assert card.paper.overall.precision_at_80_recall.estimate == 1.0
    assert card.as_json()["cuad_evaluate"]["available"] is True
    assert run_scorecard(run=loaded.gold, replicates=50).paper is None


@pytest.mark.django_db
def test_grade_cuad_prints_the_paper_metric_or_why_not_and_refuses_an_unknown_split_title(loaded, tmp_path):
    run = gold_run("gold-with-confidence")
    for extraction in run["extractions"]:
        extraction["confidence"] = 0.8
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    out = StringIO()
    call_command("grade_cuad", "--run", str(path), "--replicates", "20", stdout=out, stderr=StringIO())
    assert "CUAD evaluate.py metric (AUPR" in out.getvalue() and "AUPR 100.0%" in out.getvalue()
    path.write_text(json.dumps(gold_run("plain")), encoding="utf-8")
    out = StringIO()
    call_command("grade_cuad", "--run", str(path), "--replicates", "20", stdout=out, stderr=StringIO())
    assert "CUAD evaluate.py metric: not available: the run has no confidences" in out.getvalue()
    split = tmp_path / "split.txt"
    split.write_text("ALPHA-DISTRIBUTOR AGREEMENT\nNO SUCH CONTRACT\n", encoding="utf-8")
    with pytest.raises(CommandError, match="1 unknown contract title"):
        call_command("grade_cuad", "--run", str(path), "--split", str(split), stdout=StringIO(), stderr=StringIO())


@pytest.mark.django_db
def test_the_scorecard_and_leaderboard_show_cuads_metric_only_for_a_run_with_confidences(loaded, stakeholder_client):
    run = gold_run("gold-with-confidence")
    for index, extraction in enumerate(run["extractions"]):
        extraction["confidence"] = 0.9 - index / 100
    scored, _ = extraction_run_import(dataset=loaded.dataset, raw=json.dumps(run))
    page = stakeholder_client.get(f"/cuad/scorecard/?run={scored.pk}").content.decode()
    assert "CUAD&#x27;s own metric" in page or "CUAD's own metric" in page
    assert 'data-testid="cuad-evaluate-unavailable"' not in page
    plain = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.gold.pk}").content.decode()
    assert "not available: the run has no confidences" in plain
    api = stakeholder_client.get(f"/api/v1/cuad/scorecard/?run={scored.pk}").json()
    assert api["cuad_evaluate"]["available"] is True and api["cuad_evaluate"]["aupr"]["estimate"] == 1.0
    exported = stakeholder_client.get(f"/cuad/scorecard/scorecard.csv?run={scored.pk}").content.decode()
    header, first = exported.splitlines()[:2]
    assert "aupr" in header.split(",") and first.split(",")[header.split(",").index("aupr")] == "1.000000"
    board = stakeholder_client.get(f"/api/v1/cuad/leaderboard/?run={scored.pk}&run={loaded.noisy.pk}").json()
    by_id = {r["id"]: r["cuad_evaluate"] for r in board["runs"]}
    assert by_id[scored.pk]["available"] and by_id[loaded.noisy.pk] == {
        "available": False, "reason": "not available: the run has no confidences"}
    html = stakeholder_client.get(
        f"/cuad/scorecard/leaderboard/?run={scored.pk}&run={loaded.noisy.pk}").content.decode()
    assert f'data-testid="aupr-{scored.pk}">100.0%' in html.replace("\n", "")
