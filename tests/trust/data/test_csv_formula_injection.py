"""CSV exports neutralise spreadsheet formulas: a pasted run whose model or extraction text starts with
=, +, -, @ comes back with a leading single quote in the runs and explorer CSVs (the OWASP rule)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from grading.dataset.models import Contract
from grading.runs.models import ExtractionRun
from tests.trust.fixtures import client_for

pytestmark = pytest.mark.django_db
CONTRACT = "ALPHA-DISTRIBUTOR AGREEMENT"
MODEL = '=HYPERLINK("http://evil.example/","x")'
TEXTS = ["@SUM(1+1)*cmd|' /C calc'!A0", "+1+2", "-2+3+cmd|' /C calc'!A0", "=1+2", "\tTAB=1"]


def _csv(response) -> list[dict]:
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.fixture
def planted_run(world):
    admin = client_for(world.users["admin"])
    run = {"model": MODEL, "extractions": [{"contract": CONTRACT, "category": "Governing Law", "text": text}
                                           for text in TEXTS]}
    response = admin.post("/cuad/runs/", {"run_text": json.dumps(run)})
    assert response.status_code == 302, response.content[-600:]
    return admin, int(response["Location"].rstrip("/").split("/")[-1])


def test_the_runs_csv_quotes_a_formula_model_name(planted_run):
    admin, pk = planted_run
    rows = _csv(admin.get("/cuad/runs/runs.csv"))
    row = next(r for r in rows if r["id"] == str(pk))
    assert row["model"] == "'" + MODEL
    # numbers are untouched: every figure of every run still parses as a number
    for r in rows:
        for column in ("precision", "recall"):
            if r.get(column):
                float(r[column])


def test_the_explorer_csv_quotes_formula_texts(planted_run):
    admin, pk = planted_run
    contract = Contract.objects.get(dataset=ExtractionRun.objects.get(pk=pk).dataset_id, title=CONTRACT)
    rows = _csv(admin.get(f"/cuad/scorecard/explorer/explorer.csv?run={pk}&contract={contract.pk}"))
    texts = [r["text"] for r in rows if r["kind"] == "extraction"]
    assert texts, rows[:3]
    for text in texts:
        assert not text.startswith(("=", "+", "-", "@", "\t", "\r")), text
    assert {text[1:] for text in texts if text.startswith("'")} >= set(TEXTS)
