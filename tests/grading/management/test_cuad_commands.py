"""load_cuad, sample_cuad, grade_cuad on a small CUAD file written by the test."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from grading.dataset.models import Category, Contract, CuadDataset, Sample, Span
from grading.runs.models import Extraction, ExtractionRun
from grading.runs.run_format import RunFormatError, parse_run
from grading.scorecard.selectors import run_extraction_grades, run_scorecard
from tests.grading.cuad_fixture import CATEGORIES, contracts, cuad_bytes, gold_run, zip_of

pytestmark = pytest.mark.django_db

FIGURE_KEYS = {"precision", "recall", "f1", "ci", "counts"}
COUNT_KEYS = {"correct", "partial", "incorrect", "hallucinated", "missed", "extractions", "spans"}


@pytest.fixture
def cuad_path(tmp_path):
    path = tmp_path / "CUAD_v1.json"
    path.write_bytes(cuad_bytes())
    return path


@pytest.fixture
def cuad_dataset(cuad_path):
    call_command("load_cuad", str(cuad_path), stdout=StringIO())
    return CuadDataset.objects.get()


def run_command(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def grade_json(tmp_path, run: dict | str, *extra) -> dict:
    path = tmp_path / "run.json"
    path.write_text(run if isinstance(run, str) else json.dumps(run), encoding="utf-8")
    return json.loads(run_command("grade_cuad", "--run", str(path), "--json", *extra))


def test_it_loads_contracts_categories_and_spans_with_offsets_and_is_idempotent(cuad_path):
    first = run_command("load_cuad", str(cuad_path))
    second = run_command("load_cuad", str(cuad_path))
    assert first.startswith("loaded") and second.startswith("already loaded")
    assert CuadDataset.objects.count() == 1
    assert Contract.objects.count() == 4 and Span.objects.count() == 10
    assert [c.name for c in Category.objects.all()] == list(CATEGORIES)
    for span in Span.objects.select_related("contract"):
        assert span.contract.text[span.start : span.end] == span.text


def test_it_reads_the_zip_holding_the_json_as_the_same_dataset(tmp_path, cuad_path):
    zip_path = tmp_path / "CUAD_v1.zip"
    zip_path.write_bytes(zip_of(cuad_path.read_bytes()))
    assert run_command("load_cuad", str(zip_path)).startswith("loaded")
    assert run_command("load_cuad", str(cuad_path)).startswith("already loaded")


@pytest.fixture
def misplaced_span_path(tmp_path):
    """A CUAD file whose one span does not stand at its offset."""
    items = contracts()
    start, text = items[1]["answers"]["Governing Law"][0]
    items[1]["answers"]["Governing Law"][0] = (start + 3, text)
    path = tmp_path / "bad.json"
    path.write_bytes(cuad_bytes(items))
    return path


def test_it_reports_a_span_that_does_not_match_its_text_by_id_and_writes_nothing(misplaced_span_path):
    with pytest.raises(CommandError, match=r"BETA-LICENSE AGREEMENT__Governing Law answer 0: text at offset"):
        call_command("load_cuad", str(misplaced_span_path))
    assert CuadDataset.objects.count() == 0 and Contract.objects.count() == 0


def test_the_sampler_writes_a_byte_identical_manifest_for_the_same_seed(cuad_dataset, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    run_command("sample_cuad", "--n", "3", "--min-per-type", "2", "--seed", "42", "--out", str(a))
    run_command("sample_cuad", "--n", "3", "--min-per-type", "2", "--seed", "42", "--out", str(b))
    assert a.read_bytes() == b.read_bytes()
    manifest = json.loads(a.read_bytes())
    assert manifest["source"]["sha256"] == cuad_dataset.sha256
    assert manifest["parameters"] == {"n": 3, "min_per_type": 2, "seed": 42, "method": "greedy-coverage+length-spread"}
    assert len(manifest["contracts"]) == 3
    assert manifest["per_type"]["Anti-Assignment"] == 2  # both contracts that have one
    assert Sample.objects.count() == 1


def test_it_grades_a_hand_example_with_exactly_the_grade_cuad_json_shape(cuad_dataset, tmp_path):
    run = {
        "model": "hand",
        "extractions": [
            {"contract": "ALPHA-DISTRIBUTOR AGREEMENT", "category": "Document Name", "text": "DISTRIBUTOR AGREEMENT"},
            {
                "contract": "ALPHA-DISTRIBUTOR AGREEMENT",
                "category": "Governing Law",
                "text": "the State of Nevada",
            },
            {
                "contract": "ALPHA-DISTRIBUTOR AGREEMENT",
                "category": "Anti-Assignment",
                "text": "The Distributor may freely assign this Agreement to the Moon.",
            },
            {"contract": "BETA-LICENSE AGREEMENT", "category": "Document Name", "text": "LICENSE AGREEMENT"},
            {"contract": "BETA-LICENSE AGREEMENT", "category": "Anti-Assignment", "text": "Beta Corp and Gamma LLC"},
            {
                "contract": "GAMMA-SUPPLY AGREEMENT",
                "category": "Anti-Assignment",
                "text": "Supplier shall deliver the goods.",
            },
            {"contract": "GAMMA-SUPPLY AGREEMENT", "category": "Document Name", "text": "SUPPLY AGREEMENT"},
            {"contract": "GAMMA-SUPPLY AGREEMENT", "category": "Governing Law", "text": "governed by New York law"},
        ],
    }
    result = grade_json(tmp_path, run)
    assert set(result) == FIGURE_KEYS | {"per_category", "matcher", "thresholds", "cuad_evaluate"}
    assert result["cuad_evaluate"] == {"available": False, "reason": "not available: the run has no confidences"}
    assert result["counts"] == {
        "correct": 4, "partial": 1, "incorrect": 2, "hallucinated": 1, "missed": 5, "extractions": 8, "spans": 10,
    }  # fmt: skip
    assert result["precision"] == pytest.approx(4.5 / 8)
    assert result["recall"] == pytest.approx(4.5 / 10)
    assert result["f1"] == pytest.approx(2 * (4.5 / 8) * 0.45 / (4.5 / 8 + 0.45))
    assert set(result["ci"]) == {"precision", "recall", "f1"} and all(len(v) == 2 for v in result["ci"].values())
    assert result["matcher"] == "hungarian"
    assert result["thresholds"] == {"correct": 0.7, "partial": 0.4, "grounding": 0.8}
    assert list(result["per_category"]) == list(CATEGORIES)
    law = result["per_category"]["Governing Law"]
    assert set(law) == FIGURE_KEYS and set(law["counts"]) == COUNT_KEYS
    assert law["precision"] == pytest.approx(0.75) and law["recall"] == pytest.approx(1.5 / 4)


def test_a_perfect_run_scores_one_and_json_lines_is_the_same_run(cuad_dataset, tmp_path):
    result = grade_json(tmp_path, gold_run())
    assert (result["precision"], result["recall"], result["f1"]) == (1.0, 1.0, 1.0)
    lines = "\n".join(json.dumps({"model": "gold", **e}) for e in gold_run()["extractions"])
    assert grade_json(tmp_path, lines)["f1"] == 1.0
    assert ExtractionRun.objects.count() == 1


def test_it_reclassifies_at_new_thresholds_from_stored_pair_scores(cuad_dataset, tmp_path, monkeypatch):
    run = {"model": "m", "extractions": [
        {"contract": "ALPHA-DISTRIBUTOR AGREEMENT", "category": "Governing Law", "text": "the State of Nevada"},
    ]}  # fmt: skip
    assert grade_json(tmp_path, run)["counts"]["partial"] == 1

    def no_recompute(*args, **kwargs):
        raise AssertionError("pair scores were recomputed")

    monkeypatch.setattr("grading.runs.services.score_contract", no_recompute)
    second = grade_json(tmp_path, run, "--correct", "0.45")
    assert second["counts"]["correct"] == 1, second["counts"]
    assert grade_json(tmp_path, run, "--partial", "0.7")["counts"]["incorrect"] == 1
    assert grade_json(tmp_path, run, "--matcher", "greedy")["matcher"] == "greedy"
    assert Extraction.objects.count() == 1


def test_the_manifest_limits_gold_to_its_contracts(cuad_dataset, tmp_path):
    manifest = tmp_path / "m.json"
    run_command("sample_cuad", "--n", "2", "--min-per-type", "1", "--seed", "1", "--out", str(manifest))
    titles = {c["title"] for c in json.loads(manifest.read_bytes())["contracts"]}
    result = grade_json(tmp_path, gold_run(), "--manifest", str(manifest))
    spans = sum(len(a) for c in contracts() if c["title"] in titles for a in c["answers"].values())
    assert result["counts"]["spans"] == spans and result["f1"] == 1.0


def test_a_split_file_names_a_contract_whose_title_ends_with_a_space_verbatim(tmp_path):
    # Four CUAD titles end with a space ("Sonos, Inc. - Manufacturing Agreement "): a split line is the whole title.
    items = contracts()
    items[0] = {**items[0], "title": items[0]["title"] + " "}
    path = tmp_path / "CUAD_v1.json"
    path.write_bytes(cuad_bytes(items))
    call_command("load_cuad", str(path), stdout=StringIO())
    split = tmp_path / "split.txt"
    split.write_text(f"# test split\n{items[0]['title']}\n", encoding="utf-8")
    run = {"model": "m", "extractions": [
        {"contract": items[0]["title"], "category": category, "text": text}
        for category, answers in items[0]["answers"].items() for _, text in answers]}
    result = grade_json(tmp_path, run, "--split", str(split))
    spans = sum(len(a) for a in items[0]["answers"].values())
    assert result["counts"]["spans"] == spans and result["f1"] == 1.0
    split.write_text(items[0]["title"].rstrip() + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match="matched verbatim"):
        grade_json(tmp_path, run, "--split", str(split))


def test_an_invalid_run_names_index_and_field_and_stores_nothing(cuad_dataset, tmp_path):
    run = {"model": "bad", "extractions": [
        {"contract": "ALPHA-DISTRIBUTOR AGREEMENT", "category": "Document Name", "text": "ok"},
        {"contract": "NOPE", "category": "Document Name", "text": "x"},
        {"contract": "ALPHA-DISTRIBUTOR AGREEMENT", "category": "Warranty", "text": "x"},
        {"contract": "ALPHA-DISTRIBUTOR AGREEMENT", "category": "Document Name", "text": "  "},
        {"contract": "ALPHA-DISTRIBUTOR AGREEMENT", "category": "Document Name", "text": 5},
    ]}  # fmt: skip
    with pytest.raises(CommandError) as info:
        grade_json(tmp_path, run)
    message = str(info.value)
    assert "extractions[1], field 'contract': unknown contract 'NOPE'" in message
    assert "extractions[2], field 'category': unknown category 'Warranty'" in message
    assert "extractions[3], field 'text': empty text" in message
    assert "extractions[4], field 'text': wrong type, expected string, got number" in message
    assert ExtractionRun.objects.count() == 0 and Extraction.objects.count() == 0


def test_the_validator_names_lines_of_json_lines():
    good = '{"model": "m"}\n{"contract": "A", "category": "C", "text": "t"}\n'
    raw = good + 'not json\n{"contract": "B", "category": "C"}\n'
    with pytest.raises(RunFormatError) as info:
        parse_run(raw, contracts={"A"}, categories={"C"})
    assert info.value.errors[0].startswith("line 3: not valid JSON")
    assert info.value.errors[1] == "line 4, field 'text': missing"
    parsed = parse_run(good, contracts={"A"}, categories={"C"}, default_model="x")
    assert parsed.model == "m" and parsed.source_format == "jsonl"


def test_selectors_give_a_scorecard_row_per_category(cuad_dataset):
    from grading.runs.services import extraction_run_import

    run, created = extraction_run_import(dataset=cuad_dataset, raw=json.dumps(gold_run()))
    card = run_scorecard(run=run, replicates=100)
    assert created and [row.category for row in card.rows] == list(CATEGORIES)
    assert card.rows[0].figures.counts["correct"] == 4 and card.overall.recall.low == 1.0
    grades, missed = run_extraction_grades(run=run)
    assert {g.outcome for g in grades} == {"correct"} and missed == []


def test_grade_with_cuad_loads_samples_and_grades_in_one_process_as_the_three_commands_do(cuad_path, tmp_path):
    run = tmp_path / "run.json"
    run.write_text(json.dumps(gold_run()), encoding="utf-8")
    one = tmp_path / "one.json"
    combined = json.loads(run_command("grade_cuad", "--cuad", str(cuad_path), "--n", "3", "--min-per-type", "2",
                                      "--sample-seed", "7", "--manifest-out", str(one), "--run", str(run), "--json"))
    assert CuadDataset.objects.count() == 1 and Sample.objects.count() == 1
    three = tmp_path / "three.json"
    run_command("sample_cuad", "--n", "3", "--min-per-type", "2", "--seed", "7", "--out", str(three))
    assert one.read_bytes() == three.read_bytes()  # the same sample, found again rather than drawn twice
    assert Sample.objects.count() == 1
    stepwise = json.loads(run_command("grade_cuad", "--manifest", str(three), "--run", str(run), "--json"))
    assert combined == stepwise
    sampled = list(Sample.objects.get().members.values_list("contract_id", flat=True))
    assert combined["counts"]["spans"] == Span.objects.filter(contract_id__in=sampled).count() < Span.objects.count()
    again = json.loads(run_command("grade_cuad", "--cuad", str(cuad_path), "--n", "3", "--min-per-type", "2",
                                   "--sample-seed", "7", "--run", str(run), "--json"))
    assert again == combined and CuadDataset.objects.count() == 1 and ExtractionRun.objects.count() == 1


def test_grade_with_cuad_refuses_before_loading_when_the_run_file_is_missing(cuad_path, tmp_path):
    with pytest.raises(CommandError, match=r"missing\.json: No such file"):
        call_command("grade_cuad", "--cuad", str(cuad_path), "--run", str(tmp_path / "missing.json"))
    assert CuadDataset.objects.count() == 0


def test_grade_with_cuad_names_a_bad_span_and_writes_nothing(misplaced_span_path, tmp_path):
    run = tmp_path / "run.json"
    run.write_text(json.dumps(gold_run()), encoding="utf-8")
    with pytest.raises(CommandError, match=r"Governing Law answer 0: text at offset"):
        call_command("grade_cuad", "--cuad", str(misplaced_span_path), "--run", str(run))
    assert CuadDataset.objects.count() == 0 and ExtractionRun.objects.count() == 0


def test_grade_takes_either_a_manifest_or_a_cuad_file_and_a_manifest_out_only_with_cuad(cuad_dataset, tmp_path):
    run = tmp_path / "run.json"
    run.write_text(json.dumps(gold_run()), encoding="utf-8")
    with pytest.raises(CommandError, match="--manifest-out goes with --cuad"):
        call_command("grade_cuad", "--run", str(run), "--manifest-out", str(tmp_path / "m.json"))
    with pytest.raises(CommandError, match="not allowed with argument"):
        call_command("grade_cuad", "--run", str(run), "--cuad", "x.json", "--manifest", "m.json")
