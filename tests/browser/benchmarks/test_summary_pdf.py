"""A stakeholder downloads the one-page PDF summary of a comparison and reads its verdict."""

from __future__ import annotations

import subprocess

from benchmarks.labels.pools import review_pool_declare
from benchmarks.reports.selectors import leaderboard_build
from tests.benchmarks.labels.fixtures import judge, random_grades, rerank_world
from tests.benchmarks.reports.leaderboard.test_leaderboard import _rerank, _reverse_keyword
from tests.browser.conftest import login
from tests.factories import make_user


def test_a_stakeholder_downloads_the_summary_pdf_and_reads_its_verdict(browser, page, live_server,
                                                                         transactional_db, django_user_model,
                                                                         tmp_path):
    lawyers = [make_user(django_user_model, name, "reviewer") for name in ("lawyer_a", "lawyer_b")]
    make_user(django_user_model, "sum_stakeholder", "stakeholder")
    run = rerank_world(seed=11, queries=12)
    other = _rerank(run.retrieval_run, _reverse_keyword, model="reverse")
    pool = review_pool_declare(rerank_run=run, reviewers=lawyers).pool
    judge(pool, lawyers, random_grades(pool, seed=9))
    login(page, live_server, "sum_stakeholder", "pw-sum_stakeholder")
    page.goto(f"{live_server.url}/benchmarks/reports/summary/{run.retrieval_run.pk}/?replicates=1000&seed=5")
    verdict = page.locator("#summary-verdict").inner_text()
    with page.expect_download() as download:
        page.click("#summary-links a[download]")
    path = tmp_path / "summary.pdf"
    download.value.save_as(path)
    assert download.value.suggested_filename.endswith(f"-summary-{run.retrieval_run.pk}.pdf")
    text = " ".join(subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], check=True, capture_output=True,
                                   text=True).stdout.split())
    board = leaderboard_build(run=run.retrieval_run, reranks=[run, other], replicates=1000, seed=5)
    assert " ".join(verdict.split()) in text
    assert " ".join(board.verdict.sentence.split()) in text
