"""export_report (TREC files and the report page's exports) and the rerank command's worker check / --sync."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from benchmarks.rerank.models import RerankRun
from scoring.ir.trec_io import parse_qrels, parse_run
from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run


@pytest.fixture
def retrieval(db):
    run = synthetic_retrieval_run()
    assert run.status == "done" and run.configuration == "bm25-v1"
    return run


def test_export_report_writes_every_query_in_trec_format(retrieval, tmp_path, capsys):
    call_command("export_report", "--retrieval-run", str(retrieval.pk), "--out", str(tmp_path / "out"))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["keyword.trec", "qrels.trec"]
    text = (tmp_path / "out" / "keyword.trec").read_text()
    run = parse_run(text.splitlines())
    assert set(run) == {"q0", "q1", "q2", "oc1", "ec1"}  # controls included
    assert [row.docid for row in run["ec1"]] == ["NRS_999.100"]
    assert [row.rank for row in run["q0"]] == list(range(1, len(run["q0"]) + 1))
    assert all(line.split()[5] == f"bm25-v1-r{retrieval.pk}" for line in text.splitlines())
    qrels = parse_qrels((tmp_path / "out" / "qrels.trec").read_text().splitlines())
    assert qrels == {"q0": {"NRS_999.100": 1}, "q1": {"NRS_999.110": 1}, "q2": {"NRS_999.120": 1}}
    call_command("export_report", "--retrieval-run", str(retrieval.pk), "--out", str(tmp_path / "engine"),
                 "--engine-scores")
    engine = parse_run((tmp_path / "engine" / "keyword.trec").read_text().splitlines())
    stored = list(retrieval.results.get(query__qid="q0").candidates.order_by("rank").values_list("score",
                                                                                               flat=True))
    assert [row.score for row in engine["q0"]] == stored


def test_export_report_with_a_rerank_run_writes_the_report_pages_exports(retrieval, tmp_path, stakeholder_client,
                                                                         capsys):
    call_command("rerank", "--retrieval-run", str(retrieval.pk), "--provider", "local", "--sync")
    rerank = RerankRun.objects.get(retrieval_run=retrieval)
    assert rerank.status == "done"
    out = tmp_path / "out"
    call_command("export_report", "--retrieval-run", str(retrieval.pk), "--rerank-run", str(rerank.pk),
                 "--out", str(out))
    assert sorted(p.name for p in out.iterdir()) == ["keyword.trec", "qrels.trec", "report.csv", "report.json",
                                                     "reranked.trec"]
    base = f"/benchmarks/reports/rerank/{rerank.pk}/"
    page_json = json.loads(stakeholder_client.get(base + "report.json").content)
    assert json.loads((out / "report.json").read_text()) == page_json
    assert (out / "report.csv").read_text() == stakeholder_client.get(base + "queries.csv").content.decode()
    assert (out / "reranked.trec").read_text() == stakeholder_client.get(base + "reranked.run").content.decode()


def test_export_report_refuses_unknown_or_mismatched_runs(retrieval, tmp_path):
    with pytest.raises(CommandError, match="no retrieval run #9999"):
        call_command("export_report", "--retrieval-run", "9999", "--out", str(tmp_path))
    with pytest.raises(CommandError, match="no rerank run #9999"):
        call_command("export_report", "--retrieval-run", str(retrieval.pk), "--rerank-run", "9999",
                     "--out", str(tmp_path))


def test_rerank_without_a_worker_says_so_and_how_to_run_in_process(retrieval, monkeypatch):
    from benchmarks.management.commands import rerank as command

    monkeypatch.setattr(command, "_runs_eagerly", lambda: False)
    monkeypatch.setattr(command, "celery_workers_answering", lambda timeout=1.5: [])
    with pytest.raises(CommandError, match=r"no Celery worker answered.*--sync"):
        call_command("rerank", "--retrieval-run", str(retrieval.pk), "--provider", "local")
    assert not RerankRun.objects.exists()  # nothing was queued to wait for a worker


def test_rerank_sync_exits_non_zero_when_the_run_ends_failed(retrieval, monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("simulated provider set-up failure")

    monkeypatch.setattr("benchmarks.rerank.services.client_for_ledger", broken)
    with pytest.raises(CommandError, match="failed: RuntimeError: simulated provider set-up failure"):
        call_command("rerank", "--retrieval-run", str(retrieval.pk), "--provider", "local", "--sync")
    assert RerankRun.objects.get().status == "failed"
