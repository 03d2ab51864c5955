"""The one CSV writer: formula triggers quoted (OWASP), numbers left as numbers, and no other writer in the tree."""

from __future__ import annotations

import csv
import io
import re
from decimal import Decimal

import pytest

from reviewapp.core.exports.csv_export import SafeCsvDictWriter, SafeCsvWriter, neutralise_cell
from tests.conftest import REPO_ROOT as REPO


@pytest.mark.parametrize("cell", [
    '=HYPERLINK("http://evil.example/","x")', "+1+2", "-2+3+cmd|' /C calc'!A0", "@SUM(A1)", "\t=1", "\r=1",
    "-", "+", "=", "@", "-cmd", "- list item", "-1+2", "=1e5",
])
def test_formula_triggers_get_a_leading_quote(cell):
    assert neutralise_cell(cell) == "'" + cell


@pytest.mark.parametrize("cell", [
    -0.25, 3, 0, 1.5e-7, Decimal("-1.50"), True, None, "-0.25", "+3", "-12", "-.5", "1e-05", "-1E+10", "plain",
    "a=b", " =1", "", "0.7",
])
def test_numbers_and_harmless_text_are_written_unchanged(cell):
    assert neutralise_cell(cell) == cell


def test_the_writers_neutralise_every_cell_and_keep_numbers():
    out = io.StringIO()
    writer = SafeCsvWriter(out, lineterminator="\n")
    writer.writerow(["model", "delta"])
    writer.writerows([["=cmd()", -0.25], ["ok", "-0.5"]])
    assert list(csv.reader(io.StringIO(out.getvalue()))) == [
        ["model", "delta"], ["'=cmd()", "-0.25"], ["ok", "-0.5"]]

    out = io.StringIO()
    writer = SafeCsvDictWriter(out, fieldnames=["text", "f1"], extrasaction="ignore")
    writer.writeheader()
    writer.writerow({"text": "@import", "f1": -1.0, "ignored": "=x"})
    assert list(csv.DictReader(io.StringIO(out.getvalue()))) == [{"text": "'@import", "f1": "-1.0"}]


def test_no_csv_export_bypasses_the_shared_writer():
    """Every CSV writer in the product is the one in reviewapp/core/exports/csv_export.py."""
    direct = re.compile(r"\bcsv\.(writer|DictWriter)\s*\(")
    offenders = []
    for folder in ("reviewapp", "benchmarks", "grading", "scoring"):
        for path in (REPO / folder).rglob("*.py"):
            if path.name == "csv_export.py" or "migrations" in path.parts:
                continue
            if direct.search(path.read_text(encoding="utf-8")):
                offenders.append(str(path.relative_to(REPO)))
    assert offenders == []
