"""The one page to send for a CUAD comparison: the leaderboard's verdict and population, as HTML and as PDF."""

from __future__ import annotations

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
