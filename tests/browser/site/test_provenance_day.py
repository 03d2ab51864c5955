"""The firm's day in headless chromium, read back from the two pages it sends.

Statutes: an admin sends a suite's two targets (of the firm's own imported sections) to two lawyers, who confirm
them blind; they disagree on one, the admin rules, and the confirmed version is frozen. Contracts: the admin
imports a PDF, a DOCX and a text contract, two lawyers label two categories blind, disagree once, the admin
rules and freezes the gold set. Three systems on each job are declared one comparison (three retrieval
configurations; three runs graded on the gold set). Then both summaries are downloaded as PDF: they list every
declared system, and every sentence about who confirmed the targets and who made the labels must be the one
provenance function's output for what happened here, in words a reader can check (who, how many, which were
adjudicated).

Prints the provenance sentences both PDFs carry.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from playwright.sync_api import expect

from benchmarks.reports.reading.summary import summary_build
from benchmarks.reports.selectors import leaderboard_build
from benchmarks.retrieval.services import retrieval_run_create
from benchmarks.suites.models import Suite
from grading.contracts.gold.models import GoldSet
from grading.contracts.gold.provenance import gold_set_origin
from grading.runs.models import ExtractionRun
from reviewapp.core.records.provenance import provenance_sentence
from reviewapp.review.assignment.models import Assignment
from tests.benchmarks.suites.confirmation_fixtures import NOMINATOR, confirm_suite
from tests.browser.contracts.test_contract_gold_flow import (
    LAW,
    LAWYER_A,
    LAWYER_B,
    LICENCE_TXT,
    SERVICES_DOCX,
    SERVICES_END,
    TERMINATION,
    _import,
    _label_queue,
    _signed_in,
    _start_labelling,
)
from tests.factories import make_user
from tests.grading.contracts import files

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _words(text: str) -> str:
    return " ".join(text.split())


def _pdf_text(page, tmp_path, name: str) -> str:
    """Download the summary page's PDF through its link and return its text (pdftotext)."""
    with page.expect_download() as download:
        page.click("#summary-links a[download]")
    path = tmp_path / name
    download.value.save_as(path)
    return _words(subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], check=True, capture_output=True,
                                 text=True).stdout)


def _confirm(browser, live_server, lawyer, answers: dict[str, str]) -> None:
    """One lawyer confirms each of their target items blind: ``answers`` maps a citation to "y" or "n"."""
    context, own = _signed_in(browser, live_server, lawyer)
    for item_id, citation in Assignment.objects.filter(reviewer=lawyer, pool__kind="target").values_list(
            "item__public_id", "item__doc_id"):
        own.goto(f"{live_server.url}/review/workspace/items/{item_id}/")
        assert NOMINATOR not in own.content()
        own.check(f'input[name="target"][data-key="{answers[citation]}"]')
        with own.expect_navigation():
            own.click('[data-action="complete"]')
    context.close()


def test_the_days_two_summaries_say_who_confirmed_the_targets_and_who_made_the_labels(
        browser, live_server, transactional_db, django_user_model, tmp_path):
    admin_user = make_user(django_user_model, "day_admin", "admin")
    lena, lars = (make_user(django_user_model, name, "reviewer") for name in ("day_lena", "day_lars"))
    admin_context, admin = _signed_in(browser, live_server, admin_user)

    # --- statutes: two lawyers confirm the suite's targets blind; they disagree on one and the admin rules.
    suite = confirm_suite()
    admin.goto(f"{live_server.url}/benchmarks/suites/{suite.pk}/")
    admin.click('[data-testid="confirmation-declare"]')
    expect(admin.locator(".messages")).to_contain_text("2 items in 1 new confirmation pools")
    _confirm(browser, live_server, lena, {"NRS 999.010": "y", "NRS 999.020": "y"})
    _confirm(browser, live_server, lars, {"NRS 999.010": "y", "NRS 999.020": "n"})
    disputed = Assignment.objects.get(reviewer=lena, item__doc_id="NRS 999.020").item
    admin.goto(f"{live_server.url}/review/agreement/{disputed.pool.public_id}/items/{disputed.public_id}/adjudicate/")
    admin.check('input[name="target"][value="1"]')
    admin.click('form:has(input[name="target"]) button[type="submit"]:not([name])')
    expect(admin.locator(".messages")).to_contain_text("Adjudication recorded.")
    admin.goto(f"{live_server.url}/benchmarks/suites/{suite.pk}/")
    admin.click('[data-testid="confirmation-new-version"]')
    confirmed = Suite.objects.get(name=suite.name, version=2)
    expect(admin).to_have_url(re.compile(rf"/benchmarks/suites/{confirmed.pk}/$"))

    # Three retrieval configurations of the confirmed version, planned together before any look at them.
    runs = [retrieval_run_create(suite=confirmed, configuration=c) for c in ("bm25-v1", "heading-v1", "rm3-v1")]
    run = runs[0]
    admin.goto(f"{live_server.url}/benchmarks/comparisons/declare/{run.pk}/")
    for other in runs:
        admin.check(f'#plan-retrieval-{other.pk} input[name="system"]')
    admin.click('form:has(input[name="system"]) button[type="submit"]')
    admin.wait_for_url(re.compile(r"comparison=\d+"))
    declared = re.search(r"comparison=(\d+)", admin.url).group(1)
    admin.goto(f"{live_server.url}/benchmarks/reports/summary/{run.pk}/?replicates=1000&seed=5&comparison={declared}")
    listed = _words(admin.inner_text(".summary-systems"))
    for configuration in ("bm25-v1", "heading-v1", "rm3-v1"):
        assert configuration in listed, listed
    statute_pdf = _pdf_text(admin, tmp_path, "statute.pdf")
    summary = summary_build(board=leaderboard_build(run=run, reranks=[], replicates=1000, seed=5))
    targets = summary.targets_sentence
    assert targets == provenance_sentence(summary.targets)
    assert targets.startswith("Targets from suite confirm v2, confirmed in the blind confirmation of v1: 2 targets "
                              "counted (1 agreed by 2 lawyers (day_lars, day_lena) answering blind; 1 ruled by "
                              "day_admin after the lawyers disagreed (adjudicated))")
    assert "0 of the 4 lawyer answers saved with credentials an admin once held" in targets
    assert _words(targets) in statute_pdf
    assert all(configuration in statute_pdf for configuration in ("bm25-v1", "heading-v1", "rm3-v1")), statute_pdf
    assert "No target of this suite version has been put to lawyers" not in statute_pdf

    # --- contracts: two lawyers label the firm's contracts blind; they disagree once and the admin rules.
    contract_set = _import(admin, live_server, tmp_path, "Day contracts", {
        "supply.pdf": files.pdf_with_text(), "services.docx": files.docx_bytes(SERVICES_DOCX),
        "licence.txt": LICENCE_TXT})
    _start_labelling(admin, live_server, contract_set, [LAW, TERMINATION], [lena, lars])
    for lawyer, answers in ((lena, LAWYER_A), (lars, LAWYER_B)):
        context, page = _signed_in(browser, live_server, lawyer)
        _label_queue(page, live_server, answers)
        context.close()
    admin.goto(f"{live_server.url}/cuad/contracts/{contract_set.pk}/gold/")
    admin.locator('[data-testid="gold-open"] li a').click()
    admin.check('input[name="ruling"][value^="lawyer-"]')
    admin.click('[data-testid="gold-rule"]')
    admin.wait_for_url(re.compile(rf"/cuad/contracts/{contract_set.pk}/gold/$"))
    admin.click('[data-testid="gold-freeze"]')
    admin.wait_for_url(re.compile(rf"/cuad/contracts/{contract_set.pk}/gold/v1/$"))
    gold = GoldSet.objects.get(contract_set=contract_set)
    gold_sentence = provenance_sentence(gold_set_origin(gold))
    assert _words(admin.inner_text('[data-testid="gold-provenance"]')) == gold_sentence

    answers = {c["title"]: c["answers"] for c in gold.content["contracts"]}
    extractions = [{"contract": title, "category": category, "text": span["text"]}
                   for title, by_category in answers.items() for category, answer in by_category.items()
                   for span in answer["spans"]]
    systems = {"equal-to-gold": extractions, "misses-one": [e for e in extractions if e["text"] != SERVICES_END],
               "law-only": [e for e in extractions if e["category"] == LAW]}
    for model, rows in systems.items():
        admin.goto(f"{live_server.url}/cuad/contracts/{contract_set.pk}/gold/v1/")
        admin.click('[data-testid="gold-dataset"] a[href*="/cuad/runs/"]')
        admin.wait_for_selector("#run_text")
        admin.fill("#run_text", json.dumps({"model": model, "extractions": rows}))
        admin.click('[data-testid="paste-submit"]')
        admin.wait_for_url(re.compile(r"/cuad/runs/\d+/$"))
    graded = ExtractionRun.objects.filter(model__in=list(systems)).order_by("pk")
    admin.goto(f"{live_server.url}/cuad/comparisons/?dataset={graded[0].dataset_id}")
    for graded_run in graded:
        admin.check(f'#plan-run-{graded_run.pk} input[name="run"]')
    admin.click('#cuad-comparison-declare button[type="submit"]')
    admin.wait_for_url(re.compile(r"/cuad/scorecard/summary/\?comparison=\d+"))
    assert admin.inner_text(".summary-title").startswith("Clause comparison: Day contracts gold v1")
    standings = _words(admin.inner_text("#summary-standings"))
    for graded_run in graded:
        assert f"#{graded_run.pk} {graded_run.model}" in standings, standings
    cuad_pdf = _pdf_text(admin, tmp_path, "cuad.pdf")
    assert gold_sentence.startswith("Labels from the firm's gold set v1 of Day contracts")
    assert ("6 answers counted (5 agreed by 2 lawyers (day_lars, day_lena) answering blind; 1 ruled by day_admin "
            "after the lawyers disagreed (adjudicated))") in gold_sentence
    assert _words(gold_sentence) in cuad_pdf
    assert all(f"#{graded_run.pk} {graded_run.model}" in cuad_pdf for graded_run in graded), cuad_pdf
    assert "taken as published" not in cuad_pdf
    print(f"\nstatute summary PDF: {targets}\nCUAD summary PDF: {gold_sentence}")
    admin_context.close()
