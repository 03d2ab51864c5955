"""A frozen gold set exported as CUAD JSON reads back through load_cuad's parser and grade_cuad unchanged."""

from __future__ import annotations

import csv
import io
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from grading.contracts.gold.exports import gold_csv, gold_cuad_json
from grading.contracts.gold.freeze import gold_set_freeze
from grading.dataset.cuad_file import read_cuad
from tests.grading.contracts.gold_support import cuad_fixture_set, label_all_as_cuad, lawyer
from tests.grading.cuad_fixture import CATEGORIES, contracts, gold_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def gold():
    contract_set, pool = cuad_fixture_set(name="Firm gold")
    label_all_as_cuad(pool, lawyer("ann"), lawyer("ben"))
    return gold_set_freeze(contract_set=contract_set).gold_set


def test_the_cuad_json_reads_back_with_every_span_and_exports_byte_for_byte_the_same(gold, tmp_path):
    raw = gold_cuad_json(gold)
    assert raw == gold_cuad_json(gold)
    path = tmp_path / "gold.json"
    path.write_bytes(raw)
    parsed = read_cuad(path)
    assert parsed.mismatches == []
    assert [c.name for c in parsed.categories] == list(CATEGORIES)
    fixture = {c["title"]: c for c in contracts()}
    assert sorted(c.title for c in parsed.contracts) == sorted(fixture)
    for contract in parsed.contracts:
        assert contract.text == fixture[contract.title]["context"]
        expected = sorted((cat, s, t) for cat, spans in fixture[contract.title]["answers"].items() for s, t in spans)
        assert sorted((span.category, span.start, span.text) for span in contract.spans) == expected
    doc = json.loads(raw)
    qa = doc["data"][0]["paragraphs"][0]["qas"][0]
    assert list(doc) == ["version", "data"] and list(qa) == ["answers", "id", "question", "is_impossible"]
    assert qa["question"].startswith('Highlight the parts (if any) of this contract related to "Document Name" that '
                                     "should be reviewed by a lawyer. Details: ")


def test_a_run_equal_to_the_gold_grades_f1_one_against_the_exported_set(gold, tmp_path):
    out = tmp_path / "gold.json"
    call_command("export_gold", "--set", "Firm gold", "--out", str(out), stdout=StringIO())
    first = out.read_bytes()
    call_command("export_gold", "--set", "Firm gold", "--version", "1", "--out", str(out), stdout=StringIO())
    assert out.read_bytes() == first
    run = tmp_path / "run.json"
    run.write_text(json.dumps(gold_run()), encoding="utf-8")
    stdout = StringIO()
    call_command("grade_cuad", "--cuad", str(out), "--n", "4", "--min-per-type", "1", "--run", str(run), "--json",
                 stdout=stdout, stderr=StringIO())
    card = json.loads(stdout.getvalue())
    assert card["f1"] == 1.0 and card["counts"]["spans"] == 10
    assert card["counts"]["correct"] == 10 and card["counts"]["missed"] == 0
    assert {name: figures["f1"] for name, figures in card["per_category"].items()} == dict.fromkeys(CATEGORIES, 1.0)


def test_the_csv_has_a_row_per_contract_category_and_span(gold):
    rows = list(csv.DictReader(io.StringIO(gold_csv(gold).decode("utf-8"))))
    assert len(rows) == 12  # 10 spans + 2 absent Anti-Assignment rows
    absent = [r for r in rows if r["present"] == "0"]
    assert {r["title"] for r in absent} == {"GAMMA-SUPPLY AGREEMENT", "DELTA-SERVICES AGREEMENT"}
    assert all(r["span"] == "" for r in absent) and {r["state"] for r in rows} == {"agreed"}
    zurich = next(r for r in rows if r["text"] == "Zürich law applies here.")
    assert int(zurich["end"]) - int(zurich["start"]) == len(zurich["text"])


def test_export_gold_names_what_is_missing(gold, tmp_path):
    out = str(tmp_path / "x.json")
    with pytest.raises(CommandError, match="no contract set named 'Nope'"):
        call_command("export_gold", "--set", "Nope", "--out", out)
    with pytest.raises(CommandError, match="no gold set version 7: its versions are 1"):
        call_command("export_gold", "--set", "Firm gold", "--version", "7", "--out", out)
    cuad_fixture_set(name="Empty")
    with pytest.raises(CommandError, match="nothing is frozen yet"):
        call_command("export_gold", "--set", "Empty", "--out", out)
    stdout = StringIO()
    call_command("export_gold", "--set", "Firm gold", "--format", "csv", "--out", out, stdout=stdout)
    assert "gold v1" in stdout.getvalue() and Path(out).read_text(encoding="utf-8").startswith("contract_set,")
