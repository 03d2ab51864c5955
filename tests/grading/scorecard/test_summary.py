"""The one page to send for a CUAD comparison: the leaderboard's verdict and population, as HTML and as PDF."""

from __future__ import annotations

import json
import subprocess

from django.utils.html import escape

from grading.scorecard.leaderboard import leaderboard_runs, leaderboard_view
from grading.scorecard.params import parse_view


def _words(text: str) -> str:
    return " ".join(text.split())


def _board(loaded):
    from django.http import QueryDict

    params = QueryDict(f"run={loaded.gold.pk}&run={loaded.noisy.pk}")
    view, by_default = leaderboard_runs(view=parse_view(params, need_run=False), asked=True)
    return leaderboard_view(view=view, chosen_by_default=by_default)


def test_the_cuad_summary_pdf_is_one_page_with_the_verdict_and_the_population(loaded, stakeholder_client,
                                                                                 tmp_path):
    q = f"run={loaded.gold.pk}&run={loaded.noisy.pk}"
    response = stakeholder_client.get(f"/cuad/scorecard/summary/summary.pdf?{q}")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    path = tmp_path / "cuad.pdf"
    path.write_bytes(response.content)
    text = _words(subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], check=True, capture_output=True,
                                 text=True).stdout)
    info = subprocess.run(["pdfinfo", str(path)], check=True, capture_output=True, text=True).stdout
    assert "Pages: 1" in _words(info)
    lb = _board(loaded)
    assert _words(lb.verdict.sentence) in text
    assert _words(lb.population) in text
    assert "No label audit of these runs" in text
    from grading.scorecard.summary import cuad_summary_build

    (published,) = cuad_summary_build(lb=lb).provenance
    assert published.endswith("(published annotations): 4 contracts counted (4 as published, not checked by "
                              "lawyers here).") and _words(published) in text


def test_the_cuad_summary_page_shows_the_verdict_and_reviewers_are_refused(loaded, stakeholder_client,
                                                                             reviewer_client):
    q = f"run={loaded.gold.pk}&run={loaded.noisy.pk}"
    html = stakeholder_client.get(f"/cuad/scorecard/summary/?{q}").content.decode()
    lb = _board(loaded)
    assert escape(lb.verdict.sentence) in html.split('id="summary-verdict"')[1].split("</p>")[0]
    assert escape(lb.population) in html
    assert "/cuad/scorecard/summary/summary.pdf?" in html
    assert "<script" not in html.split("<main")[-1] and ' style="' not in html
    assert reviewer_client.get(f"/cuad/scorecard/summary/?{q}").status_code == 403
    assert reviewer_client.get(f"/cuad/scorecard/summary/summary.pdf?{q}").status_code == 403
    assert stakeholder_client.get("/cuad/scorecard/summary/?run=999999").status_code == 400



def test_the_summary_of_runs_on_a_firm_gold_set_says_who_made_its_labels(stakeholder_client, tmp_path):
    # Two lawyers labelled the firm's contracts blind and an admin ruled on their one dispute: the summary says
    # so, in the one provenance statement, and never that the labels are CUAD's as published.
    from grading.contracts.gold.adjudication import clause_ruling_record
    from grading.contracts.gold.freeze import gold_set_freeze
    from grading.contracts.gold.provenance import gold_set_origin
    from grading.runs.services import extraction_run_import
    from reviewapp.core.records.provenance import provenance_sentences
    from tests.grading.contracts.gold_support import (
        admin,
        cuad_answer,
        cuad_fixture_set,
        label,
        label_all_as_cuad,
        lawyer,
    )

    contract_set, pool = cuad_fixture_set(name="Firm summary set")
    judge, ann, ben = admin(), lawyer("ann"), lawyer("ben")
    label_all_as_cuad(pool, ann, ben)
    gamma = pool.items.get(source_heading="GAMMA-SUPPLY AGREEMENT", query_id="Anti-Assignment")
    label(gamma, ben, 1 - cuad_answer(gamma)[0], [[0, 16]] if cuad_answer(gamma)[0] == 0 else [])
    presence, spans = cuad_answer(gamma)
    clause_ruling_record(pool=pool, item_id=gamma.public_id, presence=presence, spans=spans, adjudicator=judge)
    frozen = gold_set_freeze(contract_set=contract_set, user=judge)
    gold = frozen.gold_set
    contracts = gold.content["contracts"]
    everything = [{"contract": c["title"], "category": name, "text": span["text"]}
                  for c in contracts for name, answer in c["answers"].items() for span in answer["spans"]]
    runs = [extraction_run_import(dataset=frozen.dataset, raw=json.dumps({"model": model, "extractions": rows}))[0]
            for model, rows in (("all-of-it", everything), ("half-of-it", everything[::2]))]
    q = "&".join(f"run={r.pk}" for r in runs)
    (sentence,) = provenance_sentences([gold_set_origin(gold)])
    assert "1 ruled by adjudicator after the lawyers disagreed (adjudicated)" in sentence
    assert "agreed by 2 lawyers (ann, ben) answering blind" in sentence

    html = stakeholder_client.get(f"/cuad/scorecard/summary/?{q}").content.decode()
    title = html.split('class="summary-title">')[1].split("</h1>")[0]
    assert title == f"Clause comparison: {frozen.dataset.name}"
    assert escape(sentence) in html.split('id="summary-provenance"')[1].split("</ul>")[0]
    assert "taken as published" not in html and "as published" not in html
    response = stakeholder_client.get(f"/cuad/scorecard/summary/summary.pdf?{q}")
    path = tmp_path / "gold.pdf"
    path.write_bytes(response.content)
    text = _words(subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], check=True, capture_output=True,
                                 text=True).stdout)
    assert _words(sentence) in text


def test_the_cuad_summary_gives_the_kappa_paradox_line_beside_an_audits_kappa():
    from types import SimpleNamespace

    from django.template.loader import render_to_string

    from grading.audits.selectors import audit_agreement

    agreement = audit_agreement(verdicts_a=[False] * 6, verdicts_b=[False] * 5 + [True],
                                contracts=["c1", "c1", "c2", "c2", "c3", "c3"], replicates=200, seed=1)
    verdict = SimpleNamespace(kind="none", sentence="No conclusion.")
    lb = SimpleNamespace(sample=SimpleNamespace(pk=1, seed=0), verdict=verdict, population="3 contracts",
                         support=SimpleNamespace(sentence=""), notice="", entries=[], systems=[], method="m")
    report = SimpleNamespace(audit=SimpleNamespace(run_id=7, status="done"), judges=["ann", "ben"],
                             agreement=agreement)
    html = _words(render_to_string("cuad/_summary_body.html", {"lb": lb, "audits": [report]}))
    assert "Cohen's kappa 0.000" in html
    assert escape(agreement.paradox_note) in html
