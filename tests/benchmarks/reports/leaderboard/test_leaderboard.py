"""The statute leaderboard of stored runs: three rerank runs, a failed one, refusal, labels, exports, access."""

from __future__ import annotations

import csv
import io
import json
import math

import ir_measures
import pytest
from django.utils.html import escape
from ir_measures import RR, Success

from benchmarks.reports.figures import METRICS
from benchmarks.reports.leaderboard import KEYWORD
from benchmarks.reports.selectors import leaderboard_build, report_build, rerank_scores_load
from scoring.stats.multiple import MULTIPLE_COMPARISON_METHOD
from tests.benchmarks.reports.report.test_report_pages import _stored_report_inputs

QS = "?replicates=1000&seed=7"
MEASURES = {Success @ 1: "Hit@1", Success @ 5: "Hit@5", Success @ 10: "Hit@10", RR: "RR"}


def _rerank(retrieval_run, p_of, *, status="done", model="minilm", question="statute-relevance-v1"):
    """A rerank run of ``retrieval_run`` whose every candidate gets ``p_of(candidate, targets)``; None: no grade."""
    from benchmarks.rerank.models import RerankGrade, RerankRun
    from benchmarks.retrieval.models import RetrievalCandidate
    from benchmarks.suites.models import NominatedTarget, QueryKind
    from reviewapp.providers.models import Ledger

    ledger = Ledger.objects.create(purpose="tests", provider="local", model_id=model, max_requests=400,
                                   max_input_tokens=2_000_000)
    run = RerankRun.objects.create(
        suite=retrieval_run.suite, retrieval_run=retrieval_run, ledger=ledger, provider="local", model_id=model,
        method="local", question_version=question, question_sha256="1" * 64, status=status,
        stop_reason="provider refused every request" if status == "failed" else "")
    targets: dict[int, set[int]] = {}
    for query_id, provision_id in NominatedTarget.objects.filter(query__suite=retrieval_run.suite).values_list(
            "query_id", "provision_id"):
        targets.setdefault(query_id, set()).add(provision_id)
    grades = []
    candidates = (RetrievalCandidate.objects.filter(result__run=retrieval_run, result__query__kind__in=[
        QueryKind.RANKING, QueryKind.OUTSIDE_CORPUS]).select_related("result__query").order_by("id"))
    for n, cand in enumerate(candidates):
        p = p_of(cand, targets.get(cand.result.query_id, set()))
        if p is None:
            continue
        grades.append(RerankGrade(run=run, query=cand.result.query, candidate=cand, request_index=n // 4,
                                  position_in_request=n % 4 + 1, request_key=f"k{n // 4}", status="graded",
                                  p_useful=p))
    RerankGrade.objects.bulk_create(grades)
    return run


def _targets_first(cand, targets):
    return 0.95 if cand.provision_id in targets else round(0.05 + cand.rank / 100, 3)


def _reverse_keyword(cand, targets):
    return round(cand.rank / 31, 4)


@pytest.fixture
def world(db):
    stored = _stored_report_inputs()
    stored["oracle"] = _rerank(stored["run"], _targets_first, model="oracle-ish")
    stored["reverse"] = _rerank(stored["run"], _reverse_keyword, model="reverse", question="statute-relevance-v2")
    stored["failed"] = _rerank(stored["run"], lambda c, t: None, status="failed", model="broken")
    stored["foreign"] = _rerank(stored["secondary"], _reverse_keyword, model="elsewhere")
    return stored


def _url(world, suffix: str = "", reranks=("rerank", "oracle", "reverse")) -> str:
    query = "&".join(f"rerank={world[name].pk}" for name in reranks)
    return f"/benchmarks/reports/leaderboard/{world['run'].pk}/{suffix}{QS}&{query}"


def test_three_rerank_runs_agree_with_their_own_reports_and_share_one_draw(world):
    reranks = [world["rerank"], world["oracle"], world["reverse"]]
    board = leaderboard_build(run=world["run"], reranks=reranks, replicates=1000, seed=7)
    assert [s.key for s in board.systems] == [KEYWORD] + [f"rerank-{r.pk}" for r in reranks]
    for rerank in reranks:
        report = report_build(run=world["run"], rerank=rerank_scores_load(pk=rerank.pk)[0], replicates=1000, seed=7)
        for split, report_split in zip(board.splits, report.splits, strict=True):
            assert split.queries == report_split.queries == 4
            row = next(r for r in split.rows if r.system.key == f"rerank-{rerank.pk}")
            keyword = next(r for r in split.rows if r.system.key == KEYWORD)
            for metric_row in report_split.rows:
                # The same seed and queries give the report's own figures bit for bit.
                assert row.means[metric_row.metric] == metric_row.reranked
                assert keyword.means[metric_row.metric] == metric_row.keyword
                assert row.vs_keyword[metric_row.metric].difference == metric_row.difference
    # Three rerank runs and keyword order: six pairs per metric, each with a Holm-adjusted p >= its p.
    for split in board.splits:
        for metric in METRICS:
            pairs = split.pairs_of(metric)
            assert len(pairs) == 6
            assert all(p.p_adjusted >= p.p_value or math.isnan(p.p_value) for p in pairs)
    oracle = next(r for r in board.primary.rows if r.system.key == f"rerank-{world['oracle'].pk}")
    assert oracle.means["Hit@1"].estimate >= next(r for r in board.primary.rows
                                                  if r.system.key == KEYWORD).means["Hit@1"].estimate
    partial = board.system(f"rerank-{world['rerank'].pk}")
    assert partial.has_figures and partial.incomplete == "incomplete: 6 of 8 queries reranked"


def test_a_stakeholder_reads_the_leaderboard_with_the_rule_the_forest_and_a_failed_run_without_figures(
        stakeholder_client, world):
    response = stakeholder_client.get(_url(world, reranks=("rerank", "oracle", "reverse", "failed")))
    assert response.status_code == 200
    html = response.content.decode()
    assert escape(MULTIPLE_COMPARISON_METHOD) in html
    for split in ("dev", "heldout"):
        assert f'id="board-{split}"' in html
        for name in ("rerank", "oracle", "reverse"):
            assert f'id="row-{split}-rerank-{world[name].pk}"' in html
        assert f'id="row-{split}-rerank-{world["failed"].pk}"' not in html  # no figures for the failed run
    failed = html.split(f'id="system-rerank-{world["failed"].pk}"')[1].split("</li>")[0]
    assert "No figures for this run" in failed and "provider refused every request" in failed
    assert "incomplete: 6 of 8 queries reranked" in html
    forest, compact = html.split('id="forest"')[1].split('class="report-forest plot plot-compact"')
    assert "<svg" in forest and forest.count("- keyword:") == 3 and "no figures" in forest
    # the narrow-screen redraw shows the same three whiskers and the same note
    assert "<svg" in compact and compact.count("- keyword:") == 3 and "no figures" in compact
    assert "labels incomplete: 0 of" in html  # no review pool: nothing is filled in
    assert "<script" not in html.split("<main")[-1] and ' style="' not in html


def test_a_rerank_run_of_another_retrieval_run_is_refused_with_its_reason(stakeholder_client, world):
    response = stakeholder_client.get(_url(world, reranks=("rerank", "foreign")))
    assert response.status_code == 400
    body = response.content.decode()
    assert (f"rerank run #{world['foreign'].pk} reranks the candidates of retrieval run #{world['secondary'].pk}"
            in body and "a different candidate set" in body)
    api = stakeholder_client.get(
        f"/api/v1/benchmarks/reports/leaderboard/{world['run'].pk}/?rerank={world['foreign'].pk}")
    assert api.status_code == 400 and "different candidate set" in api.json()["error"]
    export = stakeholder_client.get(_url(world, "leaderboard.json", reranks=("foreign",)))
    assert export.status_code == 400
    assert stakeholder_client.get(_url(world, reranks=("rerank",)).replace(
        f"rerank={world['rerank'].pk}", "rerank=abc")).status_code == 400


def test_without_a_choice_every_finished_rerank_run_is_compared_and_an_unfinished_one_is_named(stakeholder_client,
                                                                                              world):
    # A partial run would make the verdict "incomplete" for every system; it is named, one tick away, as the CUAD
    # board names the runs it leaves out.
    data = stakeholder_client.get(f"/api/v1/benchmarks/reports/leaderboard/{world['run'].pk}/{QS}").json()
    keys = [s["key"] for s in data["systems"]]
    assert keys == [KEYWORD] + [f"rerank-{world[n].pk}" for n in ("rerank", "oracle", "reverse")]
    html = stakeholder_client.get(f"/benchmarks/reports/leaderboard/{world['run'].pk}/{QS}").content.decode()
    note = html.split('id="leaderboard-left-out">')[1].split("</p>")[0]
    assert f"#{world['failed'].pk} " in note and "(failed)" in note
    asked = stakeholder_client.get(f"/api/v1/benchmarks/reports/leaderboard/{world['run'].pk}/{QS}"
                                   f"&rerank={world['failed'].pk}&rerank={world['rerank'].pk}").json()
    assert f"rerank-{world['failed'].pk}" in [s["key"] for s in asked["systems"]]
    assert f"rerank-{world['foreign'].pk}" not in keys
    assert data["multiple_comparisons"]["method"] == MULTIPLE_COMPARISON_METHOD


def test_reviewers_get_403_and_anonymous_users_the_login_page(reviewer_client, client, world):
    urls = ["/benchmarks/reports/leaderboard/", _url(world), _url(world, "leaderboard.json"),
            _url(world, "per-query.tsv"), _url(world, "keyword.run"),
            f"/api/v1/benchmarks/reports/leaderboard/{world['run'].pk}/"]
    for url in urls:
        assert reviewer_client.get(url).status_code == 403, url
    assert client.get(_url(world)).status_code == 302
    assert client.get(f"/api/v1/benchmarks/reports/leaderboard/{world['run'].pk}/").status_code in (401, 403)


def test_the_exports_parse_and_the_per_query_table_agrees_with_ir_measures(stakeholder_client, world):
    data = json.loads(stakeholder_client.get(_url(world, "leaderboard.json")).content)
    api = stakeholder_client.get(_url(world).replace("/benchmarks/", "/api/v1/benchmarks/")).json()
    for document in (data, api):
        for system in [*document["systems"], *document["known_targets"]["systems"]]:
            system.pop("heldout_exposure")  # each read appends to the held-out ledger
    assert api == data
    systems = [s["key"] for s in data["systems"]]
    table = stakeholder_client.get(_url(world, "per-query.tsv")).content.decode()
    rows = list(csv.DictReader(io.StringIO(table), delimiter="\t"))
    assert list(rows[0]) == ["qid", "system", *METRICS, "split", "family"]
    qrels = list(ir_measures.read_trec_qrels(io.StringIO(
        stakeholder_client.get(_url(world, "qrels.txt")).content.decode())))
    compared = 0
    for system in systems:
        response = stakeholder_client.get(_url(world, f"{system}.run"))
        assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
        run = list(ir_measures.read_trec_run(io.StringIO(response.content.decode())))
        reference = {(m.query_id, MEASURES[m.measure]): m.value
                     for m in ir_measures.iter_calc(list(MEASURES), qrels, run)}
        for row in (r for r in rows if r["system"] == system):
            for metric in METRICS:
                assert float(row[metric]) == pytest.approx(reference.get((row["qid"], metric), 0.0))
                compared += 1
    assert compared == 8 * 4 * 4
    # Every mean on the page is the mean of the per-query table over its split.
    for split in data["splits"]:
        for entry in split["systems"]:
            for metric in METRICS:
                values = [float(r[metric]) for r in rows if r["system"] == entry["system"]
                          and r["split"] == split["split"]]
                assert entry["means"][metric]["estimate"] == pytest.approx(sum(values) / len(values), abs=1e-6)
    lines = stakeholder_client.get(_url(world, "leaderboard.csv")).content.decode()
    summary = list(csv.DictReader(io.StringIO(lines)))
    differences = [r for r in summary if r["kind"] == "difference"]
    assert len(differences) == 2 * 4 * 6
    pair = next(p for p in data["splits"][1]["pairs"] if p["metric"] == "Hit@5")
    row = next(r for r in differences if r["split"] == "heldout" and r["metric"] == "Hit@5"
               and (r["system"], r["baseline"]) == (pair["a"], pair["b"]))
    assert float(row["p_adjusted"]) == pytest.approx(pair["p_adjusted"])
    families = stakeholder_client.get(_url(world, "families.txt")).content.decode().split()
    assert families[:2] == ["q0", "dev-a"]
    assert stakeholder_client.get(_url(world, "nonsense.txt")).status_code == 404
    assert stakeholder_client.get(_url(world, f"rerank-{world['foreign'].pk}.run")).status_code == 404


def test_the_report_index_links_the_leaderboards(stakeholder_client, world):
    index = stakeholder_client.get("/benchmarks/reports/").content.decode()
    assert "/benchmarks/reports/leaderboard/" in index
    listing = stakeholder_client.get("/benchmarks/reports/leaderboard/").content.decode()
    assert f"/benchmarks/reports/leaderboard/{world['run'].pk}/" in listing
